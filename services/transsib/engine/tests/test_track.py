"""Track building: the seed's examples on pages 6-7 and the rules of §5.1, §6.1, §6.3."""

from __future__ import annotations

import pytest

from services.transsib.engine.tests.helpers import (
    BLACK,
    GREY,
    KIEV,
    STP,
    TS,
    act,
    legal_text,
    markers,
    new_game,
    refused,
    set_track,
    to_move,
)


def test_three_black_steps_on_the_transsib():
    """Seed p.6 example 1 (§5.1 T-BLK-2): Blue puts two workers on the 3-black-steps
    space and moves the Trans-Siberian black marker three spaces forward."""
    s = new_game(4)
    act(s, 0, "place T-BLK-2")
    assert s.players[0].own == 3  # 5 workers, 2 placed
    for _ in range(3):
        act(s, 0, "track transsib black")
    assert markers(s, 0, TS)[BLACK] == 4
    assert s.active == 1  # the action is complete, the turn passes on


def test_three_black_steps_split_over_two_lines():
    """Seed p.6 example 1 (§5.1): the steps may be split freely; Blue moves one line's
    black marker two spaces and another line's one space."""
    s = new_game(4)
    act(s, 0, "place T-BLK-2")
    act(s, 0, "track stpetersburg black")
    act(s, 0, "track stpetersburg black")
    act(s, 0, "track kiev black")
    assert markers(s, 0, STP)[BLACK] == 3
    assert markers(s, 0, KIEV)[BLACK] == 2
    assert markers(s, 0, TS)[BLACK] == 1
    assert s.active == 1


def test_reaching_transsib_space_2_unlocks_grey_at_once():
    """Seed p.6-7 (§6.3): when the black marker reaches or passes TS space 2 the player
    receives the grey markers and may build grey from then on."""
    s = new_game(4)
    assert "grey" not in s.view(0)["players"][0]["unlocked"]
    act(s, 0, "place T-BLK-2")
    events = act(s, 0, "track transsib black")
    assert {"type": "unlock", "seat": 0, "colour": "grey"} in events
    assert s.players[0].unlocked & (1 << GREY)


@pytest.mark.parametrize("space,colour", [(6, "brown"), (10, "natural"), (15, "white")])
def test_later_unlocks_at_6_10_15(space, colour):
    """§6.3 (seed p.7): brown at TS 6, natural at 10, white at 15 (reaching or passing)."""
    s = new_game(4)
    set_track(s, 0, TS, space - 1, 1)
    act(s, 0, "place T-BLK-1")
    events = act(s, 0, "track transsib black")
    assert {"type": "unlock", "seat": 0, "colour": colour} in events


def test_grey_marker_enters_at_space_1_then_moves():
    """Seed p.7 example (§5.1 T-GRY-1), the position built by play: Blue's black marker
    passed Trans-Siberian space 2 (grey unlocked, §6.3); later he puts one worker on the
    two-grey-steps space; the first step puts the grey marker on space 1 of the chosen
    line, the second moves it one space forward."""
    s = new_game(4)
    act(s, 0, "place T-BLK-2")
    for _ in range(3):
        act(s, 0, "track transsib black")
    for seat in (1, 2, 3):
        act(s, seat, "pass")
    assert markers(s, 0, TS)[:2] == [4, 0]
    act(s, 0, "place T-GRY-1")
    act(s, 0, "track transsib grey")
    assert markers(s, 0, TS)[:2] == [4, 1]
    assert legal_text(s) == ["track transsib grey"]  # grey only enters under black
    act(s, 0, "track transsib grey")
    assert markers(s, 0, TS)[:2] == [4, 2]
    assert s.players[0].own == 2 and s.stack == []


def test_wildcard_space_needs_a_worker_and_a_coin():
    """Seed p.7 example (§5.1 T-ANY): Blue places a worker and a coin, moves black one
    space and then grey one space."""
    s = new_game(4)
    set_track(s, 0, TS, 3, 1)
    coins = s.players[0].coins
    act(s, 0, "place T-ANY")
    assert s.players[0].coins == coins - 1
    act(s, 0, "track transsib black")
    act(s, 0, "track transsib grey")
    assert markers(s, 0, TS)[:2] == [4, 2]
    assert s.active == 1


def test_wildcard_space_is_up_to_two_steps():
    """§5.1 T-ANY: 'up to 2 steps': after one step the player may stop."""
    s = new_game(4)
    act(s, 0, "place T-ANY")
    assert "done" not in legal_text(s)  # at least one step
    act(s, 0, "track kiev black")
    assert "done" in legal_text(s)
    act(s, 0, "done")
    assert s.active == 1


def test_wildcard_space_refused_without_a_coin():
    """§5.1 T-ANY: the coin is required as well as the worker."""
    s = new_game(4)
    s.players[0].coins = 0
    to_move(s, 0)
    assert "place T-ANY 0" not in legal_text(s)
    refused(s, 0, "place T-ANY", "too_few_coins")


def test_repeatable_space_used_by_two_players_and_twice_by_one():
    """Seed p.7 example (§5.1 T-REP): although Blue's worker stands on it, Red may use
    the repeatable space as well; it is the only such space, and the same player may
    use it again."""
    s = new_game(4)
    act(s, 0, "place T-REP")
    act(s, 0, "track transsib black")
    assert "place T-REP 0" in legal_text(s)  # seat 1 may use it too
    act(s, 1, "place T-REP")
    act(s, 1, "track kiev black")
    assert s.rep == [0, 1]
    act(s, 2, "pass")
    act(s, 3, "pass")
    act(s, 0, "place T-REP")  # the same player again
    assert s.rep == [0, 1, 0]
    # every other space is single-use
    act(s, 0, "track transsib black")
    act(s, 1, "place A-COIN")
    assert "place A-COIN 0" not in legal_text(s)


def test_repeatable_space_offers_black_or_grey():
    """§5.1 T-REP: one step with black or grey."""
    s = new_game(4)
    set_track(s, 0, TS, 4, 2)
    act(s, 0, "place T-REP")
    steps = legal_text(s)
    assert "track transsib grey" in steps and "track transsib black" in steps
    assert not any("brown" in a for a in steps)


def test_no_overtaking_the_colour_ahead():
    """§5.1 (seed p.7): a marker only moves onto an empty space and never catches up
    with or overtakes the marker of the colour before it."""
    s = new_game(4)
    set_track(s, 0, TS, 3, 2)
    act(s, 0, "place T-ANY")
    assert "track transsib grey" not in legal_text(s)
    err = refused(s, 0, "track transsib grey", "overtaking")
    assert "§5.1" in err.reason


def test_colour_order_along_every_line_after_many_steps():
    """§5.1: the order along a line is always black > grey > brown > natural > white."""
    s = new_game(4)
    set_track(s, 0, TS, 12, 8, 5, 3, 1)
    p = s.players[0]
    from services.transsib.engine import track as T

    for c in range(1, 5):
        while T.can_step(p, TS, c):
            T.do_step(s, 0, p, TS, c, [])
    pos = markers(s, 0, TS)
    assert pos == [12, 11, 10, 9, 8]


def test_colours_allowed_per_line():
    """§6.1: TS takes 5 colours, St Petersburg 4 (no white), Kiev 3 (no natural, white)."""
    s = new_game(4)
    set_track(s, 0, TS, 15, 12, 9, 6, 1)
    set_track(s, 0, KIEV, 9, 8, 7)
    set_track(s, 0, STP, 9, 8, 7, 6)
    act(s, 0, "place T-ANY")
    steps = legal_text(s)
    assert "track kiev natural" not in steps and "track stpetersburg white" not in steps
    refused(s, 0, "track kiev natural", "colour_not_on_line")


def test_colour_not_yet_unlocked_is_refused():
    """§6.3: brown needs the black TS marker on space 6; the brown spaces are refused
    before that."""
    s = new_game(4)
    set_track(s, 0, TS, 5, 3)
    assert "place T-BRN-1 0" not in legal_text(s)
    act(s, 0, "place T-ANY")
    refused(s, 0, "track transsib brown", "colour_locked")


def test_unlock_within_one_wildcard_action():
    """§6.3 with seed p.6 ('from this moment'): black reaching TS 2 unlocks grey, which the
    same T-ANY action may then use."""
    s = new_game(4)
    act(s, 0, "place T-ANY")
    act(s, 0, "track transsib black")
    assert "track transsib grey" in legal_text(s)


def test_action_not_performable_in_full_is_refused():
    """§4.2/§4.4/§5.1: T-BLK-2 (3 black steps) cannot be taken when only 2 black steps
    are left on all three lines."""
    s = new_game(4)
    set_track(s, 0, TS, 15)
    set_track(s, 0, STP, 7)
    set_track(s, 0, KIEV, 9)
    assert "place T-BLK-2 0" not in legal_text(s)
    assert "place T-BLK-1 0" in legal_text(s)
    err = refused(s, 0, "place T-BLK-2", "not_performable")
    assert "only 2 black step(s)" in err.reason
