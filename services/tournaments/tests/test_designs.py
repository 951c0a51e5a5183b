"""Round robin: affine geometries over GF(q) meet everyone exactly once."""

from __future__ import annotations

import itertools

import pytest

from services.tournaments.designs import (
    GaloisField,
    affine_parallel_classes,
    design_dimension,
    prime_power,
    round_robin,
)
from services.tournaments.errors import TournamentError
from services.tournaments.pairing_cost import History, seat_imbalance


@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9])
def test_galois_fields_are_fields(q):
    f = GaloisField(q)
    add, mul = f.add_table, f.mul_table
    for a in range(q):
        assert add[a][0] == a and mul[a][1] == a and mul[a][0] == 0
        assert sorted(add[a]) == list(range(q))  # additive inverse exists
        if a:
            assert sorted(mul[a][1:]) == list(range(1, q))  # no zero divisors, inverses
    for a, b, c in itertools.product(range(q), repeat=3):
        assert mul[a][add[b][c]] == add[mul[a][b]][mul[a][c]]
        assert mul[mul[a][b]][c] == mul[a][mul[b][c]]


def test_six_is_not_a_prime_power():
    assert prime_power(6) is None and prime_power(9) == (3, 2) and prime_power(5) == (5, 1)
    with pytest.raises(TournamentError) as e:
        GaloisField(6)
    assert e.value.reason == "no_design"


@pytest.mark.parametrize(
    "players,size,rounds",
    [(9, 3, 4), (16, 4, 5), (25, 5, 6), (27, 3, 13), (64, 4, 21)],
)
def test_resolvable_designs_meet_everyone_exactly_once(players, size, rounds):
    assert design_dimension(players, size) is not None
    assert len(affine_parallel_classes(size, design_dimension(players, size))) == rounds
    names = [f"p{i:02d}" for i in range(players)]
    schedule = round_robin(names, size, rounds, seed=3)
    assert len(schedule) == rounds
    for rnd in schedule:
        assert sorted(rnd.players()) == names and {len(t.seats) for t in rnd.tables} == {size}
    h = History.from_rounds(schedule)
    assert {h.meetings(a, b) for a, b in itertools.combinations(names, 2)} == {1}


def test_a_design_shorter_than_its_classes_has_no_repeat():
    names = [f"p{i:02d}" for i in range(16)]
    h = History.from_rounds(round_robin(names, 4, 3, seed=1))
    assert max(h.meetings(a, b) for a, b in itertools.combinations(names, 2)) == 1


@pytest.mark.parametrize("players,size,rounds,best", [(9, 3, 3, 0), (16, 4, 4, 0), (16, 4, 5, 1)])
def test_design_seats_are_planned_over_all_rounds(players, size, rounds, best):
    names = [f"p{i:02d}" for i in range(players)]
    for seed in range(3):
        h = History.from_rounds(round_robin(names, size, rounds, seed=seed))
        assert all(seat_imbalance(h.counts(p), size) == best for p in names)


def test_without_a_design_the_solver_avoids_repeats_it_can():
    # 20 players in fours: no affine design (20 is no power of 4), but 3 rounds
    # without a repeat exist; the solver finds them.
    names = [f"p{i:02d}" for i in range(20)]
    assert design_dimension(20, 4) is None
    schedule = round_robin(names, 4, 3, seed=1)
    h = History.from_rounds(schedule)
    assert max(h.meetings(a, b) for a, b in itertools.combinations(names, 2)) == 1


def test_without_a_design_the_repeats_are_spread_evenly():
    # 8 players in fours for 7 rounds: each player meets the 7 others 21 times, so 3 each
    names = [f"p{i}" for i in range(8)]
    h = History.from_rounds(round_robin(names, 4, 7, seed=1))
    assert {h.meetings(a, b) for a, b in itertools.combinations(names, 2)} == {3}


def test_round_robin_is_deterministic():
    names = [f"p{i:02d}" for i in range(16)]
    assert round_robin(names, 4, 5, seed=9) == round_robin(names, 4, 5, seed=9)
    assert round_robin(names, 4, 5, seed=9) != round_robin(names, 4, 5, seed=10)
