"""1894 games played by bot policies, for export and differential testing.

:func:`play_bots` plays one game with a policy per seat and returns its log; the policies are
those of :mod:`services.bots.policies` (``random``, ``greedy``, the search tiers), and a search
tier with a fixed iteration budget instead of its clock, named ``TIER@N`` (e.g.
``search-easy@6``: ``search-easy``'s knobs, 6 iterations a decision, no time limit), whose
games are reproducible from the seed (a clock-bound search's are not).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from services.bots.loops import avoid_loops
from services.bots.policies import SEARCH_TIERS, make_policy, search_config
from services.bots.search.mcts import search_policy
from services.kernel.engine import Action, InvalidOptions
from services.kernel.playout import Policy, play_out
from services.kernel.rng import SeededRandom

from .engine import GAME


def seat_policies(players: int, bots: str) -> list[str]:
    """The policy name of each seat: ``"greedy"`` (every seat) or ``"greedy,random,random"``.

    Raises:
        InvalidOptions: the list does not name one policy per seat.
    """
    names = [b.strip() for b in bots.split(",") if b.strip()] or ["random"]
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise InvalidOptions(f"--bots names {len(names)} policies for {players} players")
    return names


def seat_policy(name: str, seed: int) -> Policy:
    """The policy ``name`` for 1894, seeded with ``seed``: a policy of
    :func:`~services.bots.policies.make_policy`, or ``TIER@N`` (a search tier, ``N`` >= 1
    iterations a decision and no time limit: deterministic).

    Raises:
        KeyError: unknown policy or tier name.
        InvalidOptions: ``N`` is not a positive integer.
    """
    tier, sep, budget = name.partition("@")
    if not sep:
        return make_policy(name, GAME.id, seed)
    if tier not in SEARCH_TIERS:
        known = ", ".join(SEARCH_TIERS)
        raise KeyError(f"unknown search tier {tier!r} in {name!r}; known: {known}")
    if not budget.isdigit() or int(budget) < 1:
        raise InvalidOptions(f"{name!r}: the iteration budget after '@' must be a positive integer")
    config = dataclasses.replace(
        search_config(tier, GAME.id), time_budget=0.0, max_iterations=int(budget)
    )
    return search_policy(GAME.id, config, SeededRandom(seed))


def play_bots(
    players: int, seed: int, bots: str, options: dict[str, Any]
) -> list[tuple[int, Action]]:
    """A game of ``players`` seats played by bot policies: its log of ``(seat, action)``.

    ``bots`` is one policy name for every seat or a comma-separated name per seat (names as
    :func:`seat_policy` takes them); seat ``s``'s policy is seeded with ``seed * 1000 + s``,
    the seat to move among several with ``seed``. Every seat's policy is wrapped by
    :func:`~services.bots.loops.avoid_loops` (one memory for the game): no bot keeps a
    position repeating, e.g. 1894's all-pass private auction once LRC is sold.

    Raises:
        InvalidOptions: bad ``bots`` or ``options``.
        KeyError: unknown policy name.
        RuntimeError: the game did not end within the play-out's step limit.
    """
    names = seat_policies(players, bots)
    memory: Counter[str] = Counter()  # positions decided in, shared by the seats (loops.py)
    policies = {
        s: avoid_loops(seat_policy(name, seed * 1000 + s), memory) for s, name in enumerate(names)
    }
    state = GAME.new_state(players, seed, options)
    log: list[tuple[int, Action]] = []
    play_out(state, policies, SeededRandom(seed), on_step=lambda s, a, e: log.append((s, a)))
    return log
