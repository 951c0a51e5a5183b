"""Swiss pairing: table plans, byes, repeats, seats, dropouts, determinism."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.kernel.rng import SeededRandom
from services.tournaments.errors import TournamentError
from services.tournaments.pairing import (
    PairingConfig,
    candidate_count,
    exact_tables,
    pair_round,
    table_plan,
)
from services.tournaments.pairing_cost import (
    CostModel,
    Entrant,
    History,
    PairingWeights,
    seat_imbalance,
)
from services.tournaments.pairing_search import SearchLimits
from services.tournaments.scoring import SeatResult, TableResult, seat_points

SEARCH_ONLY = PairingConfig(table_size=4, exact_max_candidates=0)  # force the local search


def _repeats(history: History, rnd) -> int:
    return sum(
        history.meetings(a, b) > 0
        for t in rnd.tables
        for a, b in itertools.combinations(t.seats, 2)
    )


def _play(points: dict[str, float], rnd, seed: int) -> None:
    """Random finishes (seeded) for every table of ``rnd``, added to ``points``."""
    rng = SeededRandom(seed)
    for t in rnd.tables:
        order = list(t.seats)
        rng.shuffle(order)
        seats = tuple(SeatResult(p, order.index(p) + 1) for p in t.seats)
        for sp in seat_points(TableResult(rnd.round, t.number, seats)):
            points[sp.player] += sp.points


def _swiss(players: int, rounds: int, config: PairingConfig, seed: int = 1):
    points = {f"p{i:03d}": 0.0 for i in range(players)}
    history, out = History(), []
    for r in range(1, rounds + 1):
        rnd = pair_round(r, [Entrant(p, x) for p, x in points.items()], history, config, seed)
        out.append((rnd, _repeats(history, rnd)))
        history.add(rnd)
        _play(points, rnd, seed * 100 + r)
    return out, history, points


def test_thirteen_players_in_fours_with_threes_allowed_is_4_3_3_3():
    assert table_plan(13, 4, 3) == ((4, 3, 3, 3), 0)
    rnd = pair_round(1, [Entrant(f"p{i}") for i in range(13)], History(), PairingConfig(4, 3))
    assert sorted(len(t.seats) for t in rnd.tables) == [3, 3, 3, 4] and rnd.byes == ()


@settings(max_examples=200, deadline=None)
@given(
    players=st.integers(3, 400),
    size=st.integers(3, 6),
    smaller=st.integers(0, 3),
)
def test_plans_seat_everyone_they_can_in_the_fewest_tables_never_below_the_minimum(
    players, size, smaller
):
    low = max(3, size - smaller)
    if players < low:
        with pytest.raises(TournamentError) as e:
            table_plan(players, size, low)
        assert e.value.reason == "too_few_players"
        return
    sizes, byes = table_plan(players, size, low)
    assert sum(sizes) + byes == players
    assert all(low <= s <= size for s in sizes) and max(sizes) - min(sizes) <= 1
    # byes only where no plan seats one more player
    for more in range(1, byes + 1):
        seated = players - byes + more
        assert all(t * low > seated or t * size < seated for t in range(1, seated + 1))
    # fewest tables: no plan with one table less seats as many
    assert (len(sizes) - 1) * size < players - byes


def test_byes_only_where_no_table_can_be_formed_and_rotate():
    config = PairingConfig(table_size=4)  # tables of 4 only: 13 = 4+4+4 and a bye
    out, history, _ = _swiss(13, 4, config)
    byes = [rnd.byes for rnd, _ in out]
    assert all(len(b) == 1 for b in byes)
    assert len({b[0] for b in byes}) == 4  # nobody gets a second bye while others have none
    assert pair_round(1, [Entrant(f"p{i}") for i in range(12)], History(), config).byes == ()


def test_byes_go_to_the_lowest_points_first():
    field = [Entrant(f"p{i}", float(i)) for i in range(5)]
    rnd = pair_round(2, field, History(), PairingConfig(table_size=4))
    assert rnd.byes == ("p0",)


def test_too_few_players_for_one_table_is_refused():
    with pytest.raises(TournamentError) as e:
        pair_round(1, [Entrant("a"), Entrant("b")], History(), PairingConfig(table_size=3))
    assert e.value.reason == "too_few_players" and e.value.metadata["players"] == "2"


@pytest.mark.parametrize("size,low", [(2, None), (7, None), (4, 2), (4, 5)])
def test_table_sizes_outside_3_to_6_are_refused(size, low):
    with pytest.raises(TournamentError) as e:
        PairingConfig(table_size=size, min_table_size=low)
    assert e.value.reason == "table_size_out_of_range"


def test_a_player_twice_in_the_field_is_refused():
    with pytest.raises(TournamentError) as e:
        pair_round(1, [Entrant("a"), Entrant("b"), Entrant("a")], History(), PairingConfig(3))
    assert e.value.reason == "duplicate_player"


def test_exact_solve_keeps_a_small_swiss_free_of_repeats():
    out, _, _ = _swiss(16, 3, PairingConfig(table_size=4))
    assert candidate_count(16, (4,)) <= PairingConfig().exact_max_candidates
    assert [rep for _, rep in out] == [0, 0, 0]


def _partitions(items: list[int], size: int):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for mates in itertools.combinations(rest, size - 1):
        left = [i for i in rest if i not in mates]
        for tail in _partitions(left, size):
            yield [[first, *mates], *tail]


def test_exact_solve_finds_the_least_cost_of_all_partitions():
    _, history, points = _swiss(12, 2, PairingConfig(table_size=4), seed=4)
    field = [Entrant(p, x) for p, x in points.items()]
    model = CostModel(field, history, PairingWeights())
    best = min(sum(model.table_cost(t) for t in part) for part in _partitions(list(range(12)), 4))
    tables = exact_tables(model, (4, 4, 4))
    assert sorted(i for t in tables for i in t) == list(range(12))
    assert sum(model.table_cost(t) for t in tables) == pytest.approx(best)
    assert best >= 1000  # 12 players in fours cannot avoid a repeat in round 3


def test_local_search_keeps_a_larger_swiss_free_of_repeats_and_seats_balanced():
    out, history, points = _swiss(96, 5, SEARCH_ONLY)
    assert [rep for _, rep in out] == [0] * 5
    imbalance = [seat_imbalance(history.counts(p), 4) for p in points]
    assert max(imbalance) <= 2 and sum(x <= 1 for x in imbalance) >= 0.9 * len(imbalance)


def test_local_search_beats_the_plain_slice_on_the_same_field():
    no_search = PairingConfig(
        table_size=4, exact_max_candidates=0, search=SearchLimits(max_passes=0)
    )
    sliced, _, _ = _swiss(96, 5, no_search)
    ours, _, _ = _swiss(96, 5, SEARCH_ONLY)
    assert sum(r for _, r in ours) == 0 < sum(r for _, r in sliced)


def test_swiss_tables_group_players_of_like_points():
    field = [Entrant(f"p{i:02d}", float(i // 4) * 2) for i in range(16)]
    rnd = pair_round(3, field, History(), PairingConfig(table_size=4))
    pts = {e.player: e.points for e in field}
    assert all(len({pts[p] for p in t.seats}) == 1 for t in rnd.tables)
    assert [pts[t.seats[0]] for t in rnd.tables] == [6.0, 4.0, 2.0, 0.0]  # top table first


def test_seats_rotate_over_rounds():
    _, history, points = _swiss(16, 3, PairingConfig(table_size=4))
    assert all(seat_imbalance(history.counts(p), 4) == 1 for p in points)  # 3 seats used
    # 4 rounds at tables of 4: the best is each player once in each position.
    _, history, points = _swiss(16, 4, PairingConfig(table_size=4))
    imbalance = [seat_imbalance(history.counts(p), 4) for p in points]
    assert max(imbalance) <= 2 and imbalance.count(0) >= 12


@pytest.mark.parametrize("config", [PairingConfig(4, 3), SEARCH_ONLY])
def test_same_inputs_and_seed_give_the_same_pairing(config):
    a, _, _ = _swiss(30, 3, config, seed=5)
    b, _, _ = _swiss(30, 3, config, seed=5)
    c, _, _ = _swiss(30, 3, config, seed=6)
    assert [r for r, _ in a] == [r for r, _ in b]
    assert [r for r, _ in a] != [r for r, _ in c]


def test_dropouts_and_late_entries_are_changes_of_the_field():
    config = PairingConfig(table_size=4, min_table_size=3)
    points = {f"p{i:02d}": 0.0 for i in range(16)}
    history = History()
    r1 = pair_round(1, [Entrant(p, x) for p, x in points.items()], history, config, 3)
    history.add(r1)
    _play(points, r1, 1)
    # two players drop, one enters late before round 2: 15 players = 4+4+4+3
    for gone in ("p03", "p07"):
        points.pop(gone)
    points["late"] = 0.0
    r2 = pair_round(2, [Entrant(p, x) for p, x in points.items()], history, config, 3)
    seated = r2.players()
    assert sorted(seated) == sorted(points) and "p03" not in seated and "late" in seated
    assert sorted(len(t.seats) for t in r2.tables) == [3, 4, 4, 4]
    assert _repeats(history, r2) == 0


def test_weights_are_checked():
    with pytest.raises(TournamentError) as e:
        PairingWeights(repeat=-1)
    assert e.value.reason == "bad_weight"


@settings(max_examples=25, deadline=None)
@given(
    players=st.integers(3, 60),
    size=st.integers(3, 6),
    smaller=st.integers(0, 2),
    points=st.lists(st.integers(0, 12), min_size=60, max_size=60),
    seed=st.integers(0, 2**32),
)
def test_every_player_sits_once_at_a_planned_table(players, size, smaller, points, seed):
    low = max(3, size - smaller)
    if players < low:
        return
    config = PairingConfig(size, low, exact_max_candidates=0)
    field = [Entrant(f"p{i:02d}", float(points[i])) for i in range(players)]
    rnd = pair_round(2, field, History(), config, seed)
    sizes, byes = table_plan(players, size, low)
    assert sorted(rnd.players()) == sorted(e.player for e in field)
    assert sorted(len(t.seats) for t in rnd.tables) == sorted(sizes) and len(rnd.byes) == byes
    assert [t.number for t in rnd.tables] == list(range(1, len(sizes) + 1))
