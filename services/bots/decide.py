"""How a bot picks its move from what the rules service shows it.

* ``random`` draws from the title's play-out actions
  (:func:`~services.kernel.playout.playout_actions`, the legal actions or the subset that
  keeps a random game moving, as the arena's :func:`services.kernel.playout.random_policy`
  does): for a title without a play-out subset it asks the service for the legal actions
  and simulates nothing; otherwise it rebuilds the state from the seat's view. One entry
  uniformly, then a value uniformly where the entry is a range
  (:func:`~services.kernel.engine.choose_per_entry`). Drawing from all legal actions
  looped in 1894 (a corporation can pass trains back and forth for ever).
* Other policies simulate: the title's engine rebuilds a full state from the
  seat's view (``Game.state_from_view``, sampling anything hidden), and the
  policy chooses on it.

The random draws are seeded from (game id, version, seat), so a re-delivered
task makes the same choice.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.bots.policies import make_policy
from services.kernel.engine import choose_per_entry, legal_from_json
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom
from services.platform.channels import game_metadata
from services.rules import protomap
from services.rules.titles import get_game

PLAYOUT_SUBSET_TITLES = frozenset({"e1894"})
"""Titles whose states define ``playout_actions`` (a subset of the legal actions that keeps
random games finite); ``test_decide`` checks this list against the engines."""


def decision_seed(game_id: str, version: int, seat: int, secret: str = "") -> int:
    """A stable 64-bit seed for one decision: HMAC-SHA256 of (game, version,
    seat) under ``secret`` (the ``bot_secret`` setting), so a player cannot
    predict a bot's draws; with no secret it is reproducible from public data."""
    message = f"{game_id}:{version}:{seat}".encode()
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def choose_action(
    title: str,
    policy: str,
    stub: game_pb2_grpc.GameRulesStub,
    game_id: str,
    seat: int,
    version: int,
    view: dict[str, Any],
    secret: str = "",
) -> dict[str, Any]:
    """The chosen action's canonical JSON.

    Raises:
        KeyError: unknown policy.
        grpc.RpcError: the service refused a call.
    """
    seed = decision_seed(game_id, version, seat, secret)
    if policy == "random" and title in PLAYOUT_SUBSET_TITLES:
        state = get_game(title).state_from_view(view, seat, seed)
        return random_choice(state, seat, SeededRandom(seed)).to_json()
    if policy == "random":
        legal = stub.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat),
            timeout=30,
            metadata=game_metadata(game_id),
        )
        codec = get_game(title).codec
        entries = [legal_from_json(codec, e) for e in protomap.legal_from_proto(legal)]
        return choose_per_entry(entries, SeededRandom(seed)).to_json()
    game = get_game(title)
    state = game.state_from_view(view, seat, seed)
    return make_policy(policy, title, seed)(state, seat).to_json()
