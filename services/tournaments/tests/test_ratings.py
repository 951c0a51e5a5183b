"""OpenSkill ratings: ordering, ties, seat weights, provisional, leaderboard, history."""

from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

from services.tournaments.errors import TournamentError
from services.tournaments.ratings import (
    DEFAULT_MODEL,
    RatedGame,
    RatedSeat,
    Rating,
    leaderboard,
    new_rating,
    predicted_order,
    rate_game,
    strict_orders,
)

T = "railbarons"


def _game(ranks, weights=None, bots=(), game_id="g1"):
    weights = weights or [1.0] * len(ranks)
    return RatedGame(
        T,
        game_id,
        tuple(
            RatedSeat(f"a{i}", r, is_bot=f"a{i}" in bots, weight=w)
            for i, (r, w) in enumerate(zip(ranks, weights, strict=True))
        ),
    )


def test_a_finish_orders_the_new_ratings_and_matches_openskill():
    update = rate_game(_game([1, 2, 3, 4, 5, 6]), {})
    mus = [r.mu for r in update.ratings]
    assert mus == sorted(mus, reverse=True) and mus[0] > 25 > mus[-1]
    model = PlackettLuce()
    plain = model.rate([[model.rating()] for _ in range(6)], ranks=[1, 2, 3, 4, 5, 6])
    assert mus == pytest.approx([t[0].mu for t in plain])
    assert [r.sigma for r in update.ratings] == pytest.approx([t[0].sigma for t in plain])
    assert all(r.games == 1 for r in update.ratings)


def test_tied_seats_get_equal_ratings_between_their_neighbours():
    r = rate_game(_game([1, 2, 2, 4]), {}).ratings
    assert r[1].mu == pytest.approx(r[2].mu) and r[1].sigma == pytest.approx(r[2].sigma)
    assert r[0].mu > r[1].mu > r[3].mu
    first = rate_game(_game([1, 1, 3, 4]), {}).ratings
    assert first[0].mu == pytest.approx(first[1].mu)
    assert first[1].mu > first[2].mu > first[3].mu
    six = rate_game(_game([1, 2, 2, 4, 5, 6]), {}).ratings  # OpenSkill alone: 4th > 2nd
    assert six[1].mu == pytest.approx(six[2].mu) and six[0].mu > six[1].mu > six[3].mu
    everyone = rate_game(_game([1, 1, 1, 1]), {}).ratings
    assert all(x.mu == pytest.approx(25.0) for x in everyone)


def test_openskill_still_mishandles_plackett_luce_ties():
    """Why :func:`strict_orders` exists: when this fails, OpenSkill fixed its ties
    (openskill.py issues 155/201) and the workaround can go."""
    model = PlackettLuce()
    out = model.rate([[model.rating()] for _ in range(6)], ranks=[1, 2, 2, 4, 5, 6])
    assert out[3][0].mu > out[1][0].mu  # fourth place ends above the tied seconds


def test_strict_orders_rotate_each_tied_group():
    assert strict_orders([2, 1, 2, 3]) == [[1, 0, 2, 3], [1, 2, 0, 3]]
    assert len(strict_orders([1, 1, 1, 4, 4, 6])) == 6
    assert strict_orders([1, 2, 3]) == [[0, 1, 2]]


def test_seat_weights_scale_the_update():
    full = rate_game(_game([1, 2, 3, 4]), {}).ratings
    half = rate_game(_game([1, 2, 3, 4], weights=[1.0, 1.0, 1.0, 0.5]), {}).ratings
    none = rate_game(_game([1, 2, 3, 4], weights=[0.0, 1.0, 1.0, 1.0]), {}).ratings
    assert half[:3] == full[:3]
    assert half[3].mu == pytest.approx(25 + 0.5 * (full[3].mu - 25))
    assert 25 > half[3].mu > full[3].mu and full[3].sigma < half[3].sigma < 25 / 3
    assert none[0].mu == 25.0 and none[0].sigma == pytest.approx(25 / 3)


def test_ratings_carry_over_and_history_records_each_update():
    first = rate_game(_game([1, 2, 3]), {})
    current = {r.account: r for r in first.ratings}
    second = rate_game(_game([3, 2, 1], game_id="g2"), current)
    h = second.history[0]
    assert (h.game_id, h.account, h.rank) == ("g2", "a0", 3)
    assert (h.mu_before, h.sigma_before) == (current["a0"].mu, current["a0"].sigma)
    assert h.mu_after == second.ratings[0].mu < h.mu_before
    assert second.ratings[0].games == 2
    assert current["a0"] == first.ratings[0]  # the input is not changed


def test_provisional_until_sigma_falls_below_the_threshold():
    current: dict[str, Rating] = {}
    games = 0
    while True:
        ranks = [1 + (games + i) % 4 for i in range(4)]  # everyone wins in turn
        update = rate_game(_game(ranks, game_id=f"g{games}"), current)
        current = {r.account: r for r in update.ratings}
        games += 1
        if not current["a0"].provisional():
            break
        assert current["a0"].sigma >= DEFAULT_MODEL.provisional_sigma
    assert current["a0"].sigma < DEFAULT_MODEL.provisional_sigma
    assert 8 <= games <= 20  # docs/ratings.md: about 12 four-player games
    assert new_rating(T, "x").provisional()


def test_leaderboard_orders_by_ordinal_and_filters_bots_and_provisional():
    ratings = [
        Rating(T, "steady", 27.0, 2.0, 40),  # ordinal 21
        Rating(T, "lucky", 32.0, 7.0, 3),  # ordinal 11, provisional
        Rating(T, "bot", 30.0, 2.5, 90, is_bot=True),  # ordinal 22.5
        Rating(T, "twin", 27.0, 2.0, 40),
        Rating("transsib", "other", 40.0, 1.0, 10),
    ]
    rows = leaderboard(ratings, T)
    assert [r.rating.account for r in rows] == ["bot", "steady", "twin", "lucky"]
    assert [r.position for r in rows] == [1, 2, 2, 4]
    assert rows[-1].provisional and not rows[0].provisional
    people = leaderboard(ratings, T, include_bots=False, include_provisional=False)
    assert [r.rating.account for r in people] == ["steady", "twin"]


def test_bots_are_rated_in_the_same_pool_but_flagged():
    update = rate_game(_game([1, 2, 3], bots={"a1"}), {})
    assert [r.is_bot for r in update.ratings] == [False, True, False]
    assert update.ratings[1].mu < update.ratings[0].mu


def test_predicted_order_uses_predict_rank():
    rs = [Rating(T, f"p{i}", 20.0 + i, 2.0) for i in range(5)]
    assert [r.account for r, _ in predicted_order(rs)] == ["p4", "p3", "p2", "p1", "p0"]


@pytest.mark.parametrize(
    "game,reason",
    [
        (_game([1]), "too_few_players"),
        (_game([1, 5, 2]), "bad_rank"),
        (_game([1, 2, 3], weights=[1.0, 1.5, 1.0]), "bad_weight"),
        (RatedGame(T, "g", (RatedSeat("a", 1), RatedSeat("a", 2))), "duplicate_player"),
    ],
)
def test_bad_games_are_refused_with_the_reason(game, reason):
    with pytest.raises(TournamentError) as e:
        rate_game(game, {})
    assert e.value.reason == reason


def test_a_rating_of_another_title_is_refused():
    with pytest.raises(TournamentError) as e:
        rate_game(_game([1, 2]), {"a0": Rating("transsib", "a0", 25.0, 8.0)})
    assert e.value.reason == "wrong_title"
