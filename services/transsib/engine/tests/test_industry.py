"""Industry track and auxiliary actions: the seed's examples on pages 11-12, §5.3, §5.4, §8."""

from __future__ import annotations

from services.transsib.engine import industry as IND
from services.transsib.engine.tests.helpers import (
    KIEV,
    STP,
    TS,
    act,
    legal_text,
    markers,
    new_game,
    refresh,
    refused,
    set_track,
)


def test_one_industry_step():
    """Seed p.11 example (§5.3 I-1): Yellow puts one worker on I-1 and moves the industry
    marker one field forward."""
    s = new_game(4)
    assert s.players[0].ind == [0, -1]  # §8.1: starts on the first field
    act(s, 0, "place I-1")
    assert s.players[0].ind[0] == 1
    assert s.active == 1


def test_empty_factory_gap_blocks_the_marker():
    """Seed p.11 (§8.1): after the first four fields comes the first factory gap; the
    marker can neither enter nor jump an empty gap, so I-1 cannot be done in full."""
    s = new_game(4)
    s.players[0].ind[0] = 3
    refresh(s)
    assert "place I-1 0" not in legal_text(s)
    err = refused(s, 0, "place I-1", "not_performable")
    assert "§8.1" in err.reason


def test_filling_a_gap_extends_the_track_to_the_next_gap():
    """Seed p.11 (§8.1): a factory in the gap opens its own field and the board field
    after it; the last field needs all five factories."""
    s = new_game(4)
    p = s.players[0]
    p.ind[0] = 3
    p.factories = [2, 0, 0, 0, 0]
    assert IND.marker_capacity(s.rules, p, 0) == 2  # the factory field and B5
    p.factories = [2, 3, 4, 5, 0]
    assert IND.marker_capacity(s.rules, p, 0) == 8  # up to B8, not F5/B9
    p.factories = [2, 3, 4, 5, 6]
    assert IND.marker_capacity(s.rules, p, 0) == 10  # the last field


def test_step_onto_a_factory_does_its_action_before_the_next_step():
    """Seed p.12 example (§8.2): Yellow puts two workers on I-2; the first step lands on a
    factory, whose action happens at once; then the marker takes the second step."""
    s = new_game(4)
    p = s.players[0]
    p.ind[0] = 3
    p.factories = [2, 0, 0, 0, 0]  # factory #2: one black step (data, [U])
    refresh(s)
    act(s, 0, "place I-2")
    assert p.ind[0] == 4  # on the factory field
    assert "track transsib black" in legal_text(s) and "done" in legal_text(s)  # optional
    act(s, 0, "track transsib black")
    assert markers(s, 0, TS)[0] == 2
    assert p.ind[0] == 5  # now the second step
    assert s.active == 1


def test_seed_page_12_industry_example_played():
    """Seed pp.10-12 (§7.4, §8.1, §8.2), the position built by play: Yellow (seat 0) moves
    the industry marker to the field before the first gap (I-2, then I-1), builds a
    factory there (L-1: the lowest locomotive, a #2, flipped into the leftmost gap);
    in the next round two workers on I-2: the first step lands on the factory, whose
    action (factory #2: one black step, data [U]) happens at once, then the second
    step."""
    s = new_game(4)
    p = s.players[0]
    act(s, 0, "place I-2")
    for seat in (1, 2, 3):
        act(s, seat, "pass")
    act(s, 0, "place L-1")
    act(s, 0, "factory 2 0")
    assert p.factories == [2, 0, 0, 0, 0]
    act(s, 0, "place I-1")
    assert p.ind[0] == 3  # B4, the empty gap used to stop it
    act(s, 0, "pass")
    assert s.round == 2 and s.active == 0
    act(s, 0, "place I-2")
    assert p.ind[0] == 4  # on the factory: its action first
    assert legal_text(s) == [
        "track transsib black",
        "track stpetersburg black",
        "track kiev black",
        "done",
    ]
    events = act(s, 0, "track kiev black")
    assert markers(s, 0, KIEV)[0] == 2
    assert p.ind[0] == 5  # then the second step, onto B5
    assert [e["type"] for e in events] == ["track", "industry"]
    assert s.active == 1


def test_factory_action_may_be_skipped():
    """§4.4: factory actions are not competed for and may be skipped."""
    s = new_game(4)
    p = s.players[0]
    p.ind[0] = 3
    p.factories = [2, 0, 0, 0, 0]
    refresh(s)
    act(s, 0, "place I-1")
    act(s, 0, "done")
    assert markers(s, 0, TS)[0] == 1
    assert s.active == 1


def test_factory_action_that_cannot_be_done_is_lost():
    """Seed p.12 (§7.4): if the factory's action cannot be carried out, it is lost."""
    s = new_game(4)
    p = s.players[0]
    p.ind[0] = 3
    p.factories = [3, 0, 0, 0, 0]  # factory #3: one grey step; grey is locked
    refresh(s)
    act(s, 0, "place I-1")
    assert p.ind[0] == 4
    assert s.active == 1


def test_i3_gives_an_industry_step_and_a_black_step():
    """Seed p.12 (§5.3 I-3): two workers, one industry step and one black step."""
    s = new_game(4)
    act(s, 0, "place I-3")
    act(s, 0, "track kiev black")
    assert s.players[0].pos[2 * 5] == 2
    assert s.players[0].ind[0] == 1
    assert s.active == 1


def test_i3_factory_action_cannot_eat_the_competed_black_step():
    """§4.4: I-3 is competed, so its black step is made first; a factory the industry step
    then enters (here #2, one optional black step) comes on top."""
    s = new_game(4)
    p = s.players[0]
    p.ind[0] = 3
    p.factories = [2, 0, 0, 0, 0]
    set_track(s, 0, TS, 14)
    set_track(s, 0, STP, 9)
    set_track(s, 0, KIEV, 9)
    act(s, 0, "place I-3")
    assert legal_text(s) == ["track transsib black"]
    act(s, 0, "track transsib black")
    assert p.ind[0] == 4 and s.active == 1  # factory #2 had nothing left to do


def test_doubler_goes_on_the_leftmost_free_space_whatever_the_reach():
    """Seed p.12 (§5.4 A-DBL): one worker, one doubler on the leftmost free doubler space
    above the Trans-Siberian; reach and track do not matter."""
    s = new_game(4)
    act(s, 0, "place A-DBL")
    assert s.players[0].doublers == 1
    assert s.doubler_supply == 19


def test_doubler_spaces_are_limited_to_eight():
    """§5.4: 8 doubler spaces with one token each; A-DBL is refused when they are full."""
    s = new_game(4)
    s.players[0].doublers = 8
    refresh(s)
    assert "place A-DBL 0" not in legal_text(s)
    refused(s, 0, "place A-DBL", "not_performable")


def test_coin_space_gives_two_coins():
    """Seed p.12 (§5.4 A-COIN): one worker, two coins from the bank."""
    s = new_game(4)
    coins = s.players[0].coins
    act(s, 0, "place A-COIN")
    assert s.players[0].coins == coins + 2


def test_temporary_workers_for_one_round():
    """§5.4 A-TEMP, §14.1: the two turquoise workers can be used this round and go back
    to their space at the end of the round."""
    s = new_game(4)
    act(s, 0, "place A-TEMP")
    p = s.players[0]
    assert p.temp == 2 and p.own == 4
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 3, "pass")
    act(s, 0, "place T-BLK-2")  # paid with the two turquoise workers
    assert p.temp == 0 and p.placed_temp == 2 and p.own == 4
    for _ in range(3):
        act(s, 0, "track transsib black")
    act(s, 0, "pass")
    assert s.round == 2
    assert p.temp == 0 and p.placed_temp == 0 and p.own == 5
    assert s.temp_on_space


def test_second_industry_marker_player_chooses_which_moves():
    """§8.3 [U]: with both markers active the player picks which marker takes each step."""
    s = new_game(4)
    p = s.players[0]
    p.ind = [2, 0]
    refresh(s)
    act(s, 0, "place I-2")
    assert legal_text(s) == ["industry 0", "industry 1"]
    act(s, 0, "industry 1")
    act(s, 0, "industry 1")
    assert p.ind == [2, 2]
    assert s.active == 1


def test_factory_1_scores_the_engineers():
    """§7.5, factory #1 [P]: UNKNOWNS ('die 1er-Fabrik ... (Wertung fuer Ingenieure)') and
    NICOLE (an engineer scoring on the factory track worth over 30 points): the marker
    entering a #1 factory scores the sum of the player's engineer numbers (the formula is
    inferred; the placeholder before issue 27 was 2 points)."""
    from services.transsib.engine import data as D

    s = new_game(4)
    p = s.players[0]
    p.ind[0] = 3
    p.factories = [1, 0, 0, 0, 0]
    p.engineers = [D.ENGINEER_INDEX["ENG09"], D.ENGINEER_INDEX["ENG12"]]
    refresh(s)
    before = p.score
    act(s, 0, "place I-1")
    assert p.ind[0] == 4
    assert p.score == before + 9 + 12
    assert D.FACTORY_TEXTS[1] == "score the sum of your engineers' numbers"
