"""1894 games played by bot policies, for export and differential testing.

:func:`play_bots` plays one game with a policy per seat and returns its log; the policies are
those of :mod:`services.bots.policies` (``random``, ``greedy``).
"""

from __future__ import annotations

from typing import Any

from services.bots.policies import make_policy
from services.common.engine import Action, InvalidOptions
from services.common.playout import play_out
from services.common.rng import SeededRandom

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


def play_bots(
    players: int, seed: int, bots: str, options: dict[str, Any]
) -> list[tuple[int, Action]]:
    """A game of ``players`` seats played by bot policies: its log of ``(seat, action)``.

    ``bots`` is one policy name for every seat or a comma-separated name per seat; seat ``s``'s
    policy is seeded with ``seed * 1000 + s``, the seat to move among several with ``seed``.

    Raises:
        InvalidOptions: bad ``bots`` or ``options``.
        KeyError: unknown policy name.
        RuntimeError: the game did not end within the play-out's step limit.
    """
    names = seat_policies(players, bots)
    policies = {s: make_policy(name, GAME.id, seed * 1000 + s) for s, name in enumerate(names)}
    state = GAME.new_state(players, seed, options)
    log: list[tuple[int, Action]] = []
    play_out(state, policies, SeededRandom(seed), on_step=lambda s, a, e: log.append((s, a)))
    return log
