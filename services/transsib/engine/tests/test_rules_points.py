"""Rules points of issue 16 (a rules-dispute check), each under its option.

* §4.4 ``gained_actions_order``: actions gained during a turn in any order (default) or
  after the action that gained them (``fixed``);
* §4.4 vs §5.1 ``track_board_steps_may_be_lost``: whether competed track spaces must be
  fully usable;
* §5.1 ``track_colour_order_strict``: whether a rail marker may catch up with the marker
  of the colour ahead.
"""

from __future__ import annotations

from services.transsib.engine import scoring as S
from services.transsib.engine.frames import Question, Track
from services.transsib.engine.tests.helpers import (
    KIEV,
    STP,
    TS,
    act,
    legal_text,
    markers,
    new_game,
    question_position,
    refresh,
    refused,
    set_track,
)

# ---------------------------------------------------------------------- §4.4 any order


def test_any_order_gained_question_bonus_before_the_remaining_steps():
    """§4.4 (default gained_actions_order='any'): a black step lands on the St Petersburg
    '?' space; the '?' bonus may be taken before the remaining black step, and the step
    is made afterwards."""
    s = question_position()
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    assert s.gained == [Question(0)]
    options = legal_text(s)
    assert "track kiev black" in options
    assert "question_token coins" in options
    assert "question_card QC-BLACK-WORKER" in options
    assert "done" not in options  # declining the bonus waits for its own turn
    coins = s.players[0].coins
    events = act(s, 0, "question_token coins")
    assert {"type": "question_token", "seat": 0, "token": "coins"} in events
    assert s.players[0].coins == coins + 2
    assert s.gained == []
    assert isinstance(s.stack[-1], Track) and s.stack[-1].steps == 1  # the black step left
    assert "question_token doubler" not in legal_text(s)  # one bonus, taken once
    act(s, 0, "track kiev black")
    assert markers(s, 0, KIEV)[0] == 2
    assert s.stack == [] and s.active == 1  # the turn is over


def test_any_order_bonus_may_still_be_taken_after_the_action():
    """§4.4 any order: not taking the bonus early leaves it for after the action, with
    'done' to decline it."""
    s = question_position()
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    act(s, 0, "track kiev black")
    assert isinstance(s.stack[-1], Question)
    assert "done" in legal_text(s)


def test_any_order_refuses_a_used_token():
    """§12.2: a '?' token already used cannot be taken, early or not."""
    s = question_position()
    s.players[0].tokens_used |= 1  # the first token (revaluation)
    refresh(s)
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    refused(s, 0, "question_token revaluation", "token_used")


def test_fixed_order_gained_bonus_waits_for_the_action():
    """§4.4 with gained_actions_order='fixed': the '?' bonus cannot be taken before the
    remaining black step; asking for it is refused with the decision's reason."""
    s = question_position(gained_actions_order="fixed")
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    assert legal_text(s) == ["track transsib black", "track stpetersburg black", "track kiev black"]
    err = refused(s, 0, "question_token coins", "wrong_decision")
    assert "§4.2" in err.reason


# ---------------------------------------------------------------------- §4.4 vs §5.1 full use


def _one_black_step_left(**options):
    s = new_game(4, **options)
    set_track(s, 0, TS, 15)
    set_track(s, 0, STP, 9)
    set_track(s, 0, KIEV, 8)  # only one black step can be made, on Kiev
    return s


def test_competed_track_space_must_be_fully_usable_by_default():
    """§4.4, §5.1 (track_board_steps_may_be_lost=False): T-BLK-2 (3 black steps) is
    refused when only one black step can be made."""
    s = _one_black_step_left()
    assert "place T-BLK-2 0" not in legal_text(s)
    err = refused(s, 0, "place T-BLK-2", "not_performable")
    assert "needs 3" in err.reason


def test_competed_track_steps_may_be_lost_option():
    """track_board_steps_may_be_lost=True: T-BLK-2 may be taken with room for one step;
    the step is made, the other two are lost and the turn ends."""
    s = _one_black_step_left(track_board_steps_may_be_lost=True)
    assert "place T-BLK-2 0" in legal_text(s)
    act(s, 0, "place T-BLK-2")
    assert legal_text(s) == ["track kiev black"]
    act(s, 0, "track kiev black")
    assert markers(s, 0, KIEV)[0] == 9
    assert s.stack == [] and s.active == 1


def test_steps_may_be_lost_still_needs_one_step():
    """track_board_steps_may_be_lost=True: a track space with no step possible at all is
    still refused (like industry_board_steps_may_be_lost)."""
    s = new_game(4, track_board_steps_may_be_lost=True)
    set_track(s, 0, TS, 15)
    set_track(s, 0, STP, 9)
    set_track(s, 0, KIEV, 9)
    refused(s, 0, "place T-BLK-2", "not_performable")


# ---------------------------------------------------------------------- §5.1 colour order


def test_strict_colour_order_refuses_catching_up():
    """§5.1 (track_colour_order_strict=True, base game): grey may not move onto the space
    of the black marker ahead."""
    s = new_game(4)
    set_track(s, 0, TS, 3, 2)
    act(s, 0, "place T-REP")  # 1 step, black or grey
    err = refused(s, 0, "track transsib grey", "overtaking")
    assert "catch up" in err.reason


def test_relaxed_colour_order_allows_catching_up_but_not_overtaking():
    """§5.1 with track_colour_order_strict=False: grey may catch up with the black marker
    (share its space) but not pass it; the shared space scores grey."""
    s = new_game(4, track_colour_order_strict=False)
    set_track(s, 0, TS, 3, 2)
    s.players[0].locos = [5, 0, 0, 0]
    refresh(s)
    act(s, 0, "place T-ANY")  # up to 2 steps, any colours
    act(s, 0, "track transsib grey")
    assert markers(s, 0, TS)[:2] == [3, 3]
    err = refused(s, 0, "track transsib grey", "overtaking")
    assert "catch up" not in err.reason
    assert S.line_score(s.rules, s.players[0], TS) == 3 * 1  # spaces 1-3 grey (1 each)


def test_relaxed_colour_order_changes_capacity():
    """§4.4 with track_colour_order_strict=False: T-GRY-2 (3 grey steps) behind a black
    marker 3 spaces ahead is fully usable; with the strict order it is not."""
    for strict, offered in ((True, False), (False, True)):
        s = new_game(4, track_colour_order_strict=strict)
        set_track(s, 0, TS, 4, 1)
        set_track(s, 0, STP, 1)
        set_track(s, 0, KIEV, 1)
        assert ("place T-GRY-2 0" in legal_text(s)) is offered, strict
