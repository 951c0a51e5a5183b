"""Locomotives and factories: the seed's examples on pages 8-10 and §7."""

from __future__ import annotations

from services.transsib.engine.frames import LocoInHand
from services.transsib.engine.tests.helpers import (
    KIEV,
    STP,
    TS,
    act,
    legal_text,
    new_game,
    refresh,
    refused,
)


def _supply_from(s, lowest: int, count: int | None = None) -> None:
    """Empty the stacks below ``lowest`` (optionally set that stack's size)."""
    for n in range(1, lowest):
        s.supply[n] = 0
    if count is not None:
        s.supply[lowest] = count
    s.supply_total = sum(s.supply)
    refresh(s)


def _holding_a_4(locos: list[int]):
    """Seat 0, with locomotives ``locos`` on its slots (TS, TS, StP, Kiev), places on L-1
    and takes the lowest locomotive of the supply, a #4 (§5.2, §7.1); where it goes is now
    to be chosen (§7.2, §7.3)."""
    s = new_game(4)
    s.players[0].locos = locos
    _supply_from(s, 4)
    act(s, 0, "place L-1")
    return s


def test_new_locomotive_is_the_lowest_and_goes_to_a_line():
    """Seed p.8 example (§7.1, §7.2): Green puts a worker on L-1, takes the lowest
    locomotive of the supply (#2) and puts it on his St Petersburg line."""
    s = new_game(4)
    act(s, 0, "place L-1")
    options = legal_text(s)
    # the locomotive choices place the lowest one; factories are the other choice
    assert "loco stpetersburg 0" in options and "loco kiev 0" in options
    assert "loco transsib 1" in options  # the TS's empty second slot
    assert "loco transsib 0" not in options  # TS has an empty slot: it goes there
    act(s, 0, "loco stpetersburg 0")
    assert s.players[0].locos == [1, 0, 2, 0]
    assert s.supply[2] == 3


def test_reach_of_two_transsib_locomotives_adds_up():
    """Seed p.8 (§7.2): #1 reaches TS space 1, #4 the first four spaces, and #1 + #4 on
    the Trans-Siberian reach the first five spaces."""
    s = new_game(4)
    p = s.players[0]
    assert p.reach(TS) == 1
    p.locos = [1, 4, 4, 0]
    assert p.reach(TS) == 5
    assert p.reach(STP) == 4
    assert p.reach(KIEV) == 0


def test_replacing_a_lower_locomotive_moves_it_to_another_line():
    """Seed p.8-9 example (§7.3): Green gets a #4 for the Trans-Siberian, which holds #3
    and #1; he replaces the #1 and puts it on his Kiev line, which had none."""
    s = _holding_a_4([1, 3, 0, 0])
    act(s, 0, "loco transsib 0")
    assert isinstance(s.stack[-1], LocoInHand)  # the displaced #1 is in hand
    assert "loco transsib 1" not in legal_text(s)  # not back onto its own line
    assert "loco_to_factory" not in legal_text(s)  # slots are empty: must be placed
    act(s, 0, "loco kiev 0")
    assert s.players[0].locos == [4, 3, 0, 1]
    assert s.players[0].reach(TS) == 7


def test_chain_ends_with_a_factory_when_the_last_cannot_be_placed():
    """Seed p.9 example (§7.3): later Green puts a #4 on St Petersburg, which holds the #2;
    the #2 replaces the #1 on Kiev; the #1 cannot go anywhere, so it is flipped to its
    factory side and returned to the supply, a factory for the rest of the game."""
    s = _holding_a_4([4, 3, 2, 1])
    act(s, 0, "loco stpetersburg 0")
    assert "loco kiev 0" in legal_text(s)
    events = act(s, 0, "loco kiev 0")
    assert s.players[0].locos == [4, 3, 4, 2]
    assert s.pool[1] == 1  # the #1 is now a factory in the supply
    assert any(e["type"] == "loco_to_factory" and e["number"] == 1 for e in events)
    assert s.active == 1  # the action is over
    # anyone may later take it as a factory
    act(s, 1, "place L-2")
    assert "factory 1 0" in legal_text(s)


def test_chain_4_displaces_3_displaces_1_which_ends_as_a_factory():
    """§7.3 (seed p.9, chain figure): a #4 replaces a #3, the #3 replaces the #1 on
    another line, and the #1, which can replace nothing, is flipped to a factory."""
    s = _holding_a_4([5, 2, 3, 1])
    act(s, 0, "loco stpetersburg 0")
    assert legal_text(s) == ["loco transsib 1", "loco kiev 0", "loco_to_factory"]
    events = act(s, 0, "loco kiev 0")
    assert s.players[0].locos == [5, 2, 4, 3]
    assert s.pool[1] == 1
    assert [e["number"] for e in events if e["type"] == "loco"] == [3]
    assert [e["number"] for e in events if e["type"] == "loco_to_factory"] == [1]


def test_chain_is_optional_once_all_slots_are_full():
    """Seed p.9 (§7.3): with every slot full the displaced locomotive may be returned as a
    factory even though it could still replace a weaker one."""
    s = _holding_a_4([4, 3, 2, 1])
    act(s, 0, "loco stpetersburg 0")
    assert "loco_to_factory" in legal_text(s)
    act(s, 0, "loco_to_factory")
    assert s.players[0].locos == [4, 3, 4, 1]
    assert s.pool[2] == 1


def test_returning_is_refused_while_a_slot_is_empty():
    """Seed p.9 (§7.3): while any locomotive slot is empty the displaced locomotive must
    be placed, not returned."""
    s = _holding_a_4([1, 3, 0, 0])
    act(s, 0, "loco transsib 0")
    err = refused(s, 0, "loco_to_factory", "slot_empty_must_place")
    assert "§7.3" in err.reason


def test_replacing_needs_a_lower_locomotive():
    """§7.3: a locomotive may only replace a lower one."""
    s = _holding_a_4([5, 3, 6, 1])
    assert "loco stpetersburg 0" not in legal_text(s)
    refused(s, 0, "loco stpetersburg 0", "loco_not_lower")


def test_factory_from_the_lowest_locomotive_in_the_leftmost_gap():
    """Seed p.10 example (§7.4): Green puts a worker on L-1, takes the lowest locomotive,
    turns it to its factory side and puts it in the leftmost empty gap."""
    s = new_game(4)
    act(s, 0, "place L-1")
    assert "factory 2 0" in legal_text(s)
    assert "factory 2 1" not in legal_text(s)
    act(s, 0, "factory 2 0")
    assert s.players[0].factories == [2, 0, 0, 0, 0]
    assert s.supply[2] == 3


def test_factory_gaps_fill_left_to_right():
    """§7.4: the gaps are filled from left to right."""
    s = new_game(4)
    s.players[0].factories = [2, 0, 0, 0, 0]
    refresh(s)
    act(s, 0, "place L-1")
    refused(s, 0, "factory 2 3", "factory_gap_order")
    act(s, 0, "factory 2 1")
    assert s.players[0].factories == [2, 2, 0, 0, 0]


def test_all_gaps_full_replaces_any_factory():
    """Seed p.10 (§7.4): with all five gaps full any factory may be replaced; the old one
    goes back to the supply, factory side up."""
    s = new_game(4)
    s.players[0].factories = [2, 3, 4, 5, 6]
    _supply_from(s, 7)
    act(s, 0, "place L-1")
    assert {f"factory 7 {g}" for g in range(5)} <= set(legal_text(s))
    act(s, 0, "factory 7 2")
    assert s.players[0].factories == [2, 3, 7, 5, 6]
    assert s.pool[4] == 1


def test_factory_may_be_any_returned_factory_but_locos_only_the_lowest():
    """Seed p.10 (§7.1): locomotives only the lowest number; a factory may be the lowest
    locomotive or any factory returned to the supply."""
    s = new_game(4)
    _supply_from(s, 5)
    s.pool[3] = 1
    s.pool[8] = 1
    s.pool_total = 2
    refresh(s)
    act(s, 0, "place L-1")
    options = legal_text(s)
    assert {"factory 3 0", "factory 5 0", "factory 8 0"} <= set(options)
    assert "factory 6 0" not in options
    refused(s, 0, "factory 6 0", "factory_not_available")
    act(s, 0, "factory 8 0")
    assert s.pool[8] == 0 and s.supply[5] == 4


def test_l3_gives_one_locomotive_and_one_factory_in_either_order():
    """Seed p.10 (§5.2 L-3): three workers give one locomotive plus one factory, in
    either order, never two of a kind."""
    s = new_game(4)
    act(s, 0, "place L-3")
    options = legal_text(s)
    assert "factory 2 0" in options and "loco kiev 0" in options
    act(s, 0, "factory 2 0")
    options = legal_text(s)
    assert not any(o.startswith("factory") for o in options)
    act(s, 0, "loco kiev 0")
    assert s.players[0].factories[0] == 2
    assert s.players[0].locos[3] == 2
    assert s.active == 1


def test_l3_refused_when_no_locomotive_is_left():
    """Seed p.10 (§5.2): L-3 may not be taken if the supply has no locomotive left, since
    the action could not be carried out in full."""
    s = new_game(4)
    for n in range(10):
        s.supply[n] = 0
    s.supply_total = 0
    s.pool[4] = 2
    s.pool_total = 2
    refresh(s)
    assert "place L-3 0" not in legal_text(s)
    assert "place L-1 0" in legal_text(s)  # a returned factory is still there
    err = refused(s, 0, "place L-3", "not_performable")
    assert "§5.2" in err.reason


def test_l3_place_the_locomotive_then_build_the_factory_it_released():
    """Seed p.10: on L-3 you may first take the locomotive, place it, return the displaced
    one as a factory, and take that very factory to complete the action. Here it is the
    only way: the supply's last locomotive cannot also be the factory."""
    s = new_game(4)
    s.players[0].locos = [3, 2, 2, 1]
    _supply_from(s, 9, count=1)
    for n in range(1, 9):
        s.supply[n] = 0
    s.supply_total = 1
    refresh(s)
    act(s, 0, "place L-3")
    options = legal_text(s)
    assert not any(o.startswith("factory") for o in options)  # would leave no loco
    act(s, 0, "loco kiev 0")  # #9 replaces #1; the #1 cannot go anywhere
    assert s.pool[1] == 1
    assert legal_text(s) == ["factory 1 0"]
    act(s, 0, "factory 1 0")
    p = s.players[0]
    assert p.locos == [3, 2, 2, 9] and p.factories[0] == 1
    assert s.pool[1] == 0 and s.supply_total == 0
    assert s.active == 1


def test_l3_with_a_free_slot_and_the_last_locomotive_is_not_performable():
    """§5.2/§4.4: the last locomotive going onto an empty slot releases no factory, and
    taking it as the factory leaves no locomotive: L-3 cannot be done in full."""
    s = new_game(4)
    for n in range(1, 10):
        s.supply[n] = 0
    s.supply[7] = 1
    s.supply_total = 1
    refresh(s)
    assert "place L-3 0" not in legal_text(s)


def _everyone_else_passes(s, seat: int) -> None:
    """The other seats pass in turn until ``seat`` is to move again."""
    while s.active != seat:
        act(s, s.active, "pass")


def _finish_round(s) -> None:
    """Everyone passes until the next round starts."""
    current = s.round
    while s.round == current:
        act(s, s.active, "pass")


def test_seed_pages_8_and_9_played_as_one_story():
    """Seed pp.8-9 (§7.1-§7.3), the position built by play only: Green (seat 0) takes the
    lowest locomotive, a #2, for St Petersburg; later a #3 joins his #1 on the
    Trans-Siberian; then a #4 replaces the #1 there, which moves to Kiev (empty); later
    another #4 goes to St Petersburg, its #2 replaces the #1 on Kiev, and the #1, which
    fits nowhere, becomes a factory in the supply. The other seats take the rest of each
    stack so that the next number comes up (lowest number first)."""
    s = new_game(4)
    green = s.players[0]
    act(s, 0, "place L-1")
    act(s, 0, "loco stpetersburg 0")  # example 1: the lowest, a #2
    assert green.locos == [1, 0, 2, 0]
    act(s, 1, "place L-2")
    act(s, 1, "loco kiev 0")  # another #2
    act(s, 2, "place L-3")
    act(s, 2, "loco kiev 0")
    act(s, 2, "factory 2 0")  # the last two #2s
    assert s.supply[2] == 0
    _finish_round(s)  # round 2, same turn order
    act(s, 0, "place L-1")
    assert "loco transsib 1" in legal_text(s)
    act(s, 0, "loco transsib 1")  # the #3 joins the #1 (reach 1 + 3)
    assert green.locos == [1, 3, 2, 0] and green.reach(TS) == 4
    act(s, 1, "place L-2")
    act(s, 1, "loco stpetersburg 0")
    act(s, 2, "place L-3")
    act(s, 2, "loco stpetersburg 0")
    act(s, 2, "factory 3 1")  # the #3 stack is now empty
    assert s.supply[3] == 0
    _finish_round(s)  # round 3
    act(s, 0, "place L-1")  # example 2: a #4 for the Trans-Siberian (#3 and #1 there)
    act(s, 0, "loco transsib 0")  # Green replaces the #1
    assert "loco_to_factory" not in legal_text(s)  # Kiev is still empty
    act(s, 0, "loco kiev 0")
    assert green.locos == [4, 3, 2, 1] and green.reach(TS) == 7
    _everyone_else_passes(s, 0)
    act(s, 0, "place L-2")  # example 3, a later turn: a #4 for St Petersburg
    act(s, 0, "loco stpetersburg 0")  # the #2 is displaced
    assert legal_text(s) == ["loco kiev 0", "loco_to_factory"]
    events = act(s, 0, "loco kiev 0")  # the #2 replaces the #1 on Kiev
    assert green.locos == [4, 3, 4, 2]
    assert {"type": "loco_to_factory", "seat": 0, "number": 1, "removed": False} in events
    assert s.pool[1] == 1  # a factory for the rest of the game
    assert s.stack == [] and s.active == 0  # the action is over; the others have passed


def test_transsib_reach_1_plus_4_scores_five_spaces():
    """Seed p.8 (§7.2, §13): a #4 put beside the starting #1 on the Trans-Siberian; the
    two reach the first five spaces together, so five spaces score."""
    s = new_game(4)
    _supply_from(s, 4)
    p = s.players[0]
    act(s, 0, "place L-1")
    act(s, 0, "loco transsib 1")
    assert p.locos[:2] == [1, 4] and p.reach(TS) == 5
    p.pos[TS * 5 : TS * 5 + 2] = [8, 7]  # grey on spaces 1-7
    p.unlocked |= 0b11
    from services.transsib.engine import scoring as S

    assert S.line_score(s.rules, p, TS) == 5
