"""Bad input: every kind of refused action gives its code and the rule's reason and changes
nothing (§4.2, §4.3, §4.4, §5.1, §6.3, §7 and malformed actions)."""

from __future__ import annotations

import json

import pytest

from services.kernel.engine import MalformedAction
from services.transsib.engine import GAME
from services.transsib.engine import actions as A
from services.transsib.engine.tests.helpers import (
    KIEV,
    TS,
    act,
    new_game,
    parse,
    refresh,
    refused,
    set_track,
    snapshot,
)


def _after(*moves: str, seat: int = 0, tries: str):
    """A case on a new 4-player game: seat 0 makes ``moves``, then ``seat`` tries
    ``tries``."""

    def build():
        s = new_game(4)
        for move in moves:
            act(s, 0, move)
        return s, seat, tries

    return build


def _too_few_workers():
    s = new_game(4)
    s.players[0].own = 1
    s.players[0].coins = 0
    refresh(s)
    return s, 0, "place L-3"


def _not_in_full_industry():
    s = new_game(4)
    s.players[0].ind[0] = 2
    refresh(s)
    return s, 0, "place I-2"


def _overtaking():
    s = new_game(4)
    set_track(s, 0, TS, 4, 3)
    act(s, 0, "place T-ANY")
    return s, 0, "track transsib grey"


def _too_many_coins():
    s = new_game(4)
    s.players[0].coins = 5
    refresh(s)
    return s, 0, "place A-COIN 2"


def _coin_mixing_forbidden():
    s = new_game(4, coins_mixing_allowed=False)
    s.players[0].coins = 5
    refresh(s)
    return s, 0, "place T-BLK-2 1"


def _end_of_line():
    s = new_game(4)
    set_track(s, 0, KIEV, 9)
    act(s, 0, "place T-ANY")
    return s, 0, "track kiev black"


CASES = {
    "occupied": (_after("place A-COIN", seat=1, tries="place A-COIN"), "space_occupied", "§4.2"),
    "too_few_workers": (_too_few_workers, "too_few_workers", "§4.2"),
    "not_in_full_industry": (_not_in_full_industry, "not_performable", "§4.4"),
    "overtaking": (_overtaking, "overtaking", "§5.1"),
    "colour_locked": (_after("place T-ANY", tries="track kiev grey"), "colour_locked", "§6.3"),
    "space_colour_locked": (_after(tries="place T-WHT-1"), "not_performable", "§4.4"),
    "wrong_decision": (_after(tries="track transsib black"), "wrong_decision", "§4.2"),
    "place_during_decision": (
        _after("place T-BLK-1", tries="place A-COIN"),
        "wrong_decision",
        "§4.2",
    ),
    "stop_competed_action": (_after("place T-BLK-2", tries="done"), "action_incomplete", "§4.4"),
    "too_many_coins": (_too_many_coins, "too_many_coins", "§4.3"),
    "coin_mixing_forbidden": (_coin_mixing_forbidden, "coin_substitution", "§4.3"),
    "not_your_turn": (_after(seat=2, tries="place A-COIN"), "not_your_turn", "seat 2"),
    "claim_own_position": (_after(tries="place O-1"), "claim_own_position", "§5.5"),
    "end_of_line": (_end_of_line, "line_end", "§6.1"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_illegal_action_is_refused_with_the_rule_and_changes_nothing(name):
    """Each kind of illegal action: the code, a reason naming the rule, state unchanged."""
    build, code, rule = CASES[name]
    s, seat, text = build()
    err = refused(s, seat, text, code)
    assert not isinstance(err, MalformedAction)
    assert rule in err.reason


def test_grey_steps_refused_when_only_some_lines_have_room():
    """§4.4, §5.1: T-GRY-2 needs three grey steps; grey can only enter where black is on
    space 2 or beyond."""
    s = new_game(4)
    set_track(s, 0, TS, 3)
    err = refused(s, 0, "place T-GRY-2", "not_performable")
    assert "only 2 grey step(s)" in err.reason


def test_game_over_refuses_everything():
    """Contract: after the final scoring nothing is accepted."""
    s = new_game(2)
    s.round = s.rounds
    s.passed[1] = True
    refresh(s)
    act(s, 0, "pass")
    refused(s, 0, "pass", "game_over")


@pytest.mark.parametrize(
    "obj,code",
    [
        ({"type": "place", "space": "X-NOPE", "coins": 0}, "unknown_space"),
        ({"type": "place", "space": "A-COIN", "coins": -1}, "bad_field"),
        ({"type": "relocate", "space": "nowhere"}, "unknown_space"),
    ],
)
def test_malformed_placements(obj, code):
    """Ids that do not exist are MalformedAction (INVALID_ARGUMENT), state unchanged."""
    s = new_game(4)
    refused(s, 0, obj, code, MalformedAction)


@pytest.mark.parametrize(
    "obj,code",
    [
        ({"type": "track", "line": "moscow", "colour": "black"}, "unknown_line"),
        ({"type": "track", "line": "kiev", "colour": "purple"}, "unknown_colour"),
        ({"type": "loco", "line": "kiev", "slot": 1}, "bad_slot"),
        ({"type": "factory", "number": 12, "gap": 0}, "bad_factory"),
        ({"type": "factory", "number": 3, "gap": 5}, "bad_gap"),
        ({"type": "question_token", "token": "free_lunch"}, "unknown_token"),
        ({"type": "question_card", "card": "QC-NONE"}, "unknown_card"),
        ({"type": "industry", "marker": 2}, "bad_marker"),
        ({"type": "end_bonus", "index": -3}, "bad_field"),
        ({"type": "start_bonus", "card": "gold"}, "unknown_card"),
    ],
)
def test_malformed_sub_decisions(obj, code):
    """Unknown lines, colours, slots, factory numbers, gaps, tokens... are malformed."""
    s = new_game(4)
    act(s, 0, "place T-BLK-1")
    refused(s, 0, obj, code, MalformedAction)


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "place", "space": 3},
        {"type": "place"},
        {"type": "place", "space": "A-COIN", "coins": "1"},
        {"type": "track", "line": "kiev", "colour": "black", "extra": 1},
        {"type": "teleport"},
        "{not json",
    ],
)
def test_malformed_json_is_refused_by_the_codec(obj):
    """The codec refuses wrong types, missing or extra fields and unknown types."""
    with pytest.raises(MalformedAction):
        GAME.parse_action(obj)


def test_action_objects_of_another_title_are_refused():
    """apply() accepts only transsib actions."""
    s = new_game(4)
    before = snapshot(s)
    with pytest.raises(MalformedAction):
        s.apply(0, "place A-COIN")  # type: ignore[arg-type]
    assert snapshot(s) == before


def test_parsed_and_interned_actions_are_equal():
    """A parsed action equals the engine's own object, so both are accepted."""
    s = new_game(4)
    parsed = GAME.parse_action(json.loads(json.dumps(parse("place A-COIN").to_json())))
    assert parsed == A.PLACE[("A-COIN", 0)]
    s.apply(0, parsed)
    assert s.players[0].coins == 3
