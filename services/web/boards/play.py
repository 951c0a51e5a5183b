"""Random playouts for pictures and tests: a seeded game advanced by M random moves."""

from __future__ import annotations

from typing import Any

from services.kernel.engine import choose_per_entry
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game


def random_view(
    title: str, players: int, seed: int, moves: int, seat: int | None = None
) -> dict[str, Any]:
    """The view (for ``seat``, default spectator) after up to ``moves`` random legal moves
    (:func:`~services.kernel.engine.choose_per_entry`, drawn from ``SeededRandom(seed)``) of a
    new game with ``seed``; stops early at the end of the game. Deterministic.

    Raises:
        UnknownTitle: ``title`` is not registered.
    """
    game = get_game(title)
    state = game.new_state(players, seed=seed)
    rng = SeededRandom(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        s = state.active_seats()[0]
        state.apply(s, choose_per_entry(state.legal_actions(s), rng))
    return state.view(seat)
