"""Position builders for the rule tests.

The tests build a position by starting a real game, skipping the starting bonus
picks, and then setting the few fields a rulebook example needs (marker
positions, locomotives, factories...) directly on the players and the supply.
Moves are then made through the public ``apply`` path only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.kernel.engine import Action, IllegalAction
from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine.frames import PH_ACTIONS
from services.transsib.engine.state import TranssibState

TS, STP, KIEV = D.TS, D.STP, D.KIEV
BLACK, GREY, BROWN, NATURAL, WHITE = range(5)


def refresh(s: TranssibState) -> TranssibState:
    """Recompute who decides and the legal actions after a test edited the state."""
    s.refresh_caches()
    return s


def new_game(n: int = 4, seed: int = 1, **options: Any) -> TranssibState:
    """A game in round 1's action phase, starting bonus picks skipped, seat 0 first,
    turn order 0, 1, 2, ... and every player on turn-order card = seat + 1."""
    s = GAME.new_state(n, seed, options)
    s.stack.clear()
    s.gained.clear()
    s.start_queue = []
    s.phase = PH_ACTIONS
    s.in_turn = False
    s.order = list(range(n))
    for seat, p in enumerate(s.players):
        p.card = seat + 1
    s.cur = 0
    return refresh(s)


def to_move(s: TranssibState, seat: int) -> TranssibState:
    """Make ``seat`` the player to move in the action phase."""
    s.cur = s.order.index(seat)
    return refresh(s)


def set_track(s: TranssibState, seat: int, line: int, *positions: int) -> None:
    """Put the markers of ``line`` at ``positions`` (black first; 0 = not placed) and
    unlock the colours used."""
    p = s.players[seat]
    for c, pos in enumerate(positions):
        p.pos[line * 5 + c] = pos
        if pos:
            p.unlocked |= 1 << c
    for space, colour in D.UNLOCKS:  # §6.3, as if the black marker had walked there
        if p.pos[TS * 5] >= space:
            p.unlocked |= 1 << colour
    refresh(s)


def markers(s: TranssibState, seat: int, line: int) -> list[int]:
    """Marker positions of ``line`` (black..white)."""
    p = s.players[seat]
    return p.pos[line * 5 : line * 5 + 5]


def act(s: TranssibState, seat: int, action: Action | dict | str) -> list[dict]:
    """Apply an action given typed, as a dict, or as compact text
    (``"place T-BLK-2"``, ``"track transsib black"``, ``"loco kiev 0"``,
    ``"factory 3 0"``, ``"done"``...)."""
    if isinstance(action, str):
        action = parse(action)
    if isinstance(action, dict):
        action = GAME.parse_action(action)
    return s.apply(seat, action)


def parse(text: str) -> Action:
    """Compact text form of an action (see :func:`act`)."""
    parts = text.split()
    kind, args = parts[0], parts[1:]
    if kind == "place":
        obj: dict[str, Any] = {
            "type": "place",
            "space": args[0],
            "coins": int(args[1]) if len(args) > 1 else 0,
        }
    elif kind == "track":
        obj = {"type": "track", "line": args[0], "colour": args[1]}
    elif kind == "loco":
        obj = {"type": "loco", "line": args[0], "slot": int(args[1])}
    elif kind == "factory":
        obj = {"type": "factory", "number": int(args[0]), "gap": int(args[1])}
    elif kind in ("relocate", "copy_space"):
        obj = {"type": kind, "space": args[0]}
    elif kind == "question_token":
        obj = {"type": kind, "token": args[0]}
    elif kind in ("question_card", "start_bonus"):
        obj = {"type": kind, "card": args[0]}
    elif kind == "industry":
        obj = {"type": kind, "marker": int(args[0])}
    elif kind == "end_bonus":
        obj = {"type": kind, "index": int(args[0])}
    else:
        obj = {"type": kind}
    return GAME.parse_action(obj)


def text(a: Action) -> str:
    """Compact text of an action: its type and field values (``"place T-ANY 0"``)."""
    values = [str(v) for k, v in a.to_json().items() if k != "type"]
    return " ".join([a.TYPE, *values])


def legal_text(s: TranssibState) -> list[str]:
    """The legal actions of the seat to move, as compact strings (see :func:`text`)."""
    return [text(a) for a in s.legal_actions(s.active)]


def snapshot(s: TranssibState) -> str:
    """The full canonical state, for 'nothing changed' checks."""
    return json.dumps(s.to_json(), sort_keys=True)


def refused(
    s: TranssibState,
    seat: int,
    action: Action | dict | str,
    code: str,
    error: type[IllegalAction] = IllegalAction,
) -> IllegalAction:
    """Apply ``action`` (any form :func:`act` takes) for ``seat``, which must be refused with
    ``error`` (``IllegalAction`` or ``MalformedAction``) and ``code``; check that nothing
    changed (the contract: ``apply`` validates fully before it mutates, version included) and
    return the error, whose ``reason`` names the rule.

    Example: ``refused(s, 0, "track transsib grey", "overtaking")``."""
    before = snapshot(s)
    version = s.version
    with pytest.raises(error) as err:
        act(s, seat, action)
    assert err.value.code == code, (err.value.code, err.value.reason)
    assert snapshot(s) == before, "a refused action changed the state"
    assert s.version == version
    return err.value


def question_position(**options: Any) -> TranssibState:
    """A game (:func:`new_game` with ``options``) where seat 0's black St Petersburg marker
    stands one step short of space 4, the '?' space (§6.5), which its #4 locomotive
    reaches."""
    s = new_game(4, **options)
    s.players[0].locos = [1, 0, 4, 0]
    set_track(s, 0, STP, 3)
    return s


def reach_question_space(s: TranssibState) -> None:
    """From :func:`question_position`: seat 0 places on T-BLK-1 and makes its two black
    steps on St Petersburg (onto the '?' space) then on the Trans-Siberian; the '?' bonus
    (§12.1) is then pending, taken once the action is complete (§4.4)."""
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    act(s, 0, "track transsib black")


def question_bonus_pending(**options: Any) -> TranssibState:
    """:func:`question_position` after :func:`reach_question_space`: seat 0 chooses its '?'
    bonus (§12.1)."""
    s = question_position(**options)
    reach_question_space(s)
    return s


def pass_all_but(s: TranssibState, keep: set[int]) -> None:
    """Mark every seat not in ``keep`` as passed (without pass points)."""
    for seat in range(s.num_players):
        if seat not in keep:
            s.passed[seat] = True
    refresh(s)
