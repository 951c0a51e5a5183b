"""Helpers for the game-flow tests: states from the recorded games and from random play."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom

from .. import GAME
from ..interchange.importer import ImportedGame, import_game
from ..state import E1894State

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "tests" / "fixtures" / "e1894"
FINAL = "1894_game_end_final_phase"
MARKET = "1894_game_end_stock_market"


@cache
def fixture(name: str) -> dict[str, Any]:
    with open(FIXTURES / f"{name}.json", encoding="utf-8") as fh:
        return json.load(fh)


def fixture_copy(name: str) -> dict[str, Any]:
    """A deep copy of a recorded game (to tamper with)."""
    return json.loads(json.dumps(fixture(name)))


@cache
def _imported(name: str, upto: int | None) -> ImportedGame:
    return import_game(fixture(name), upto=upto)


def at(name: str, upto: int | None = None) -> E1894State:
    """A fresh copy of our state after the recorded action ``upto`` (its auto actions
    included) of a fixture."""
    return _imported(name, upto).state.clone()


def seat_of(name: str, player_id: int) -> int:
    return [p["id"] for p in fixture(name)["players"]].index(player_id)


def play_until(
    st: E1894State, pred: Callable[[E1894State], bool], seed: int = 1, limit: int = 20000
) -> E1894State:
    """Play random legal actions until ``pred(st)`` holds (returns ``st``)."""
    rng = SeededRandom(seed)
    for _ in range(limit):
        if pred(st):
            return st
        if st.is_terminal():
            break
        seat = st.active_seats()[0]
        st.apply(seat, random_choice(st, seat, rng))
    raise AssertionError("condition never reached")


def new(players: int = 4, seed: int = 1, **options: Any) -> E1894State:
    return GAME.new_state(players, seed, options)


def refused(st: E1894State, seat: int, action, code: str | None = None) -> str:
    """Apply an action that must be refused; check nothing changed; return the reason."""
    from services.kernel.engine import IllegalAction

    before = st.to_json()
    try:
        st.apply(seat, action)
    except IllegalAction as exc:
        assert st.to_json() == before, "a refused action changed the state"
        if code is not None:
            assert exc.code == code, (exc.code, exc.reason)
        assert exc.reason
        return exc.reason
    raise AssertionError(f"{action} was accepted")


@cache
def effective_ids(name: str) -> tuple[int, ...]:
    from ..interchange.filter import filtered_actions

    return tuple(a["id"] for a in filtered_actions(fixture(name)["actions"]))


def before(name: str, action_id: int) -> E1894State:
    """Our state just before the recorded effective action ``action_id``."""
    ids = effective_ids(name)
    k = ids.index(action_id)
    return at(name, ids[k - 1])


def action(name: str, action_id: int) -> dict[str, Any]:
    return next(a for a in fixture(name)["actions"] if a["id"] == action_id)
