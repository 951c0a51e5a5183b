"""The table cost: repeats, points spread, seat imbalance (``docs/tournaments.md``)."""

from __future__ import annotations

from services.kernel.rng import SeededRandom
from services.tournaments.pairing_cost import (
    CostModel,
    Entrant,
    History,
    PairingWeights,
    RoundPairing,
    Table,
    seat_imbalance,
)

W = PairingWeights(repeat=1000.0, spread=1.0, seat=4.0)


def _field(*points: float) -> list[Entrant]:
    return [Entrant(f"p{i}", x) for i, x in enumerate(points)]


def test_history_counts_meetings_seats_and_byes():
    h = History.from_rounds(
        [
            RoundPairing(1, (Table(1, ("a", "b", "c")),), byes=("d",)),
            RoundPairing(2, (Table(1, ("c", "b", "d")),), byes=("a",)),
        ]
    )
    assert h.meetings("a", "b") == 1 and h.meetings("b", "c") == 2 and h.meetings("a", "d") == 0
    assert h.counts("c")[:3] == [1, 0, 1] and h.counts("b")[:3] == [0, 2, 0]
    assert h.byes["a"] == 1 and h.byes["d"] == 1 and h.byes["b"] == 0


def test_each_earlier_meeting_costs_the_repeat_weight():
    h = History.from_rounds([RoundPairing(1, (Table(1, ("p0", "p1", "p2")),))])
    m = CostModel(_field(0, 0, 0, 0), h, PairingWeights(repeat=1000.0, spread=0, seat=0))
    assert m.table_cost([0, 1, 3]) == 1000.0  # p0-p1 met once
    assert m.table_cost([0, 1, 2]) == 3000.0  # three pairs met
    assert m.table_cost([0, 3]) == 0.0


def test_spread_is_highest_minus_lowest_points_times_its_weight():
    m = CostModel(_field(12, 6, 8, 3), History(), PairingWeights(repeat=0, spread=2.0, seat=0))
    assert m.table_cost([0, 1, 2]) == 2.0 * 6
    assert m.table_cost([0, 3]) == 2.0 * 9


def test_seat_cost_is_the_best_seat_order_of_the_table():
    # p0 sat first twice, p1 sat first twice: one of them must sit first again? No: a
    # table of 2 has positions 0 and 1; both have counts [2, 0] -> one pays 2.
    rounds = [RoundPairing(r, (Table(1, ("p0", "x")), Table(2, ("p1", "y")))) for r in (1, 2)]
    m = CostModel(_field(0, 0, 0), History.from_rounds(rounds), PairingWeights(0, 0, 4.0))
    assert m.seat_cost([0, 1]) == 2
    assert m.table_cost([0, 1]) == 8.0
    assert m.seat_cost([0, 2]) == 0  # p2 is new: p0 takes seat 2, p2 seat 1


def test_seat_order_puts_each_player_on_a_least_used_position():
    rounds = [
        RoundPairing(1, (Table(1, ("a", "b", "c")),)),
        RoundPairing(2, (Table(1, ("b", "c", "a")),)),
    ]
    m = CostModel([Entrant(p) for p in "abc"], History.from_rounds(rounds), W)
    order = m.seat_order([0, 1, 2], SeededRandom(1))
    assert [m.players[i] for i in order] == ["c", "a", "b"]  # each on his unused seat


def test_seat_imbalance_counts_only_the_tables_positions():
    assert seat_imbalance([2, 1, 1, 1, 0, 0], 4) == 1
    assert seat_imbalance([2, 0, 1, 1, 0, 0], 4) == 2
    assert seat_imbalance([1, 1, 1, 0, 0, 0], 3) == 0
