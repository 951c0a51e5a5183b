"""First Swiss round from ratings: balanced tables or top seeds apart."""

from __future__ import annotations

import pytest

from services.tournaments.errors import TournamentError
from services.tournaments.pairing import PairingConfig
from services.tournaments.ratings import Rating
from services.tournaments.seeding import seed_first_round, seed_order

RATINGS = {f"p{i:02d}": Rating("railbarons", f"p{i:02d}", 10.0 + 2 * i, 3.0) for i in range(16)}
BEST_FIRST = sorted(RATINGS, key=lambda p: -RATINGS[p].mu)


def test_seed_order_follows_predict_rank():
    assert seed_order(list(RATINGS), RATINGS) == BEST_FIRST
    # an unrated player has the prior (mu 25): between p07 (mu 24) and p08 (mu 26)
    order = seed_order([*RATINGS, "newcomer"], RATINGS)
    assert order.index("newcomer") == order.index("p07") - 1


def test_balanced_tables_have_like_strength():
    rnd = seed_first_round(list(RATINGS), RATINGS, "balanced", seed=1)
    sums = [sum(RATINGS[p].mu for p in t.seats) for t in rnd.tables]
    assert max(sums) - min(sums) <= 4.0  # a snake over 4 tables: sums 112-116
    apart = seed_first_round(list(RATINGS), RATINGS, "random", seed=1)
    spread = [sum(RATINGS[p].mu for p in t.seats) for t in apart.tables]
    assert max(spread) - min(spread) > max(sums) - min(sums)


def test_top_seeds_apart_puts_one_favourite_at_each_table():
    for seed in range(5):
        rnd = seed_first_round(list(RATINGS), RATINGS, "top_seeds_apart", seed=seed)
        assert all(len(set(t.seats) & set(BEST_FIRST[:4])) == 1 for t in rnd.tables)


def test_byes_go_to_the_lowest_seeds_and_sizes_mix():
    players = list(RATINGS)[:13]
    rnd = seed_first_round(players, RATINGS, "balanced", PairingConfig(4, 4), seed=1)
    assert rnd.byes == ("p00",)
    mixed = seed_first_round(players, RATINGS, "balanced", PairingConfig(4, 3), seed=1)
    assert mixed.byes == () and sorted(len(t.seats) for t in mixed.tables) == [3, 3, 3, 4]


def test_seeding_is_deterministic_and_checks_its_mode():
    a = seed_first_round(list(RATINGS), RATINGS, "top_seeds_apart", seed=3)
    assert a == seed_first_round(list(RATINGS), RATINGS, "top_seeds_apart", seed=3)
    with pytest.raises(TournamentError) as e:
        seed_first_round(list(RATINGS), RATINGS, "strongest_together")
    assert e.value.reason == "bad_seeding_mode"
