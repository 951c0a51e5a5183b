"""Loop avoidance (services/bots/loops.py): a bot facing a loop of passes that changes nothing
takes the move that leaves it; without a repeated position it plays its own choice."""

from __future__ import annotations

from collections import Counter

import pytest

from services.bots.loops import avoid_loops, position_key


class PassLoop:
    """A two-seat game: ``pass`` hands the turn on and pays the mover 10 (money is not
    progress), ``buy`` ends the game. Passing for ever is legal, as in 1894's auction once LRC
    is sold (an all-pass pays the privates' revenue and lowers no price)."""

    def __init__(self) -> None:
        self.turn = 0
        self.cash = [0, 0]
        self.version = 0
        self.over = False

    def to_json(self):
        return {
            "turn": self.turn,
            "cash": list(self.cash),
            "version": self.version,
            "over": self.over,
        }

    def clone(self):
        other = PassLoop()
        other.turn, other.cash, other.version, other.over = (
            self.turn,
            list(self.cash),
            self.version,
            self.over,
        )
        return other

    def legal_actions(self, seat):
        return ["pass", "buy"]

    def playout_actions(self, seat):
        return ["pass"]  # like 1894's play-out subset in seed 5528: only pass

    def is_terminal(self):
        return self.over

    def apply(self, seat, action):
        assert seat == self.turn and not self.over
        self.version += 1
        if action == "buy":
            self.over = True
        else:
            self.cash[seat] += 10
            self.turn = 1 - self.turn
        return []


def always_pass(state, seat):
    return "pass"


def test_position_key_ignores_money_and_the_move_counter():
    a, b = PassLoop(), PassLoop()
    b.cash, b.version = [30, 50], 8
    assert position_key(a) == position_key(b)
    b.turn = 1
    assert position_key(a) != position_key(b)


def test_bots_facing_the_all_pass_loop_take_the_move_that_changes_it():
    memory: Counter[str] = Counter()
    seats = {s: avoid_loops(always_pass, memory) for s in (0, 1)}
    state = PassLoop()
    moves = []
    while not state.is_terminal() and len(moves) < 100:
        action = seats[state.turn](state, state.turn)
        moves.append(action)
        state.apply(state.turn, action)
    assert state.is_terminal()
    assert moves[-1] == "buy" and moves[:-1] == ["pass"] * (len(moves) - 1)
    assert len(moves) <= 6  # each position decided in at most 3 times


def test_without_a_repeated_position_the_policy_plays_its_own_choice():
    chosen = avoid_loops(always_pass, repeats=3)
    state = PassLoop()
    after = state.clone()
    after.apply(0, "pass")
    assert [chosen(state, 0), chosen(after, 1), chosen(state, 0)] == ["pass"] * 3
    assert chosen(state, 0) == "buy"  # the third time here, and a pass leads back to `after`


def test_repeats_below_two_are_refused():
    with pytest.raises(ValueError, match="at least 2"):
        avoid_loops(always_pass, repeats=1)
