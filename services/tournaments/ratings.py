"""OpenSkill ratings for N-player games (``docs/ratings.md``).

One :class:`Rating` per (title, account): a Gaussian belief about skill, ``mu`` and
``sigma``, updated from each rated finished game by the Weng-Lin Plackett-Luce model of
the ``openskill`` package (every seat a team of one; the game's ranks, tied seats
sharing a rank). Leaderboards order by the ordinal ``mu - 3 * sigma`` (a rating one is
about 99.7 % sure the player is at least as good as). A rating is *provisional* while
``sigma >= provisional_sigma``. Bots are rated in the same pool, flagged ``is_bot``.

Seat weights: a seat's ``weight`` (0-1, default 1) scales that seat's change: the
rating after the game is ``before + weight * (openskill's update - before)`` for ``mu``
and for ``sigma**2``. (OpenSkill's own ``weights`` argument shares a *team's* update
among its members and is normalised within the team, so a one-player team's weight
never changes anything; the clocks issue's "a bot took over this seat" needs the
scaling here.) Weight 1 everywhere is exactly OpenSkill's update.

Ties: OpenSkill 6.2's Plackett-Luce mishandles tied ranks (see :func:`_plackett_luce`),
so a tie is rated as the mean of the strict finishes in which the tied seats take each
of their shared places once (:func:`strict_orders`); a game without ties is one plain
OpenSkill update.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence

from openskill.models import PlackettLuce

from services.tournaments.errors import TournamentError


@dataclasses.dataclass(frozen=True)
class RatingModel:
    """The model's parameters (OpenSkill's defaults): prior ``mu`` 25 and ``sigma``
    25/3, performance noise ``beta`` 25/6, per-game drift ``tau`` 25/300 (keeps sigma
    from freezing), ``kappa`` 1e-4 (floor on a sigma update); ``provisional_sigma`` 6.5:
    a rating is provisional until its sigma falls below it (about 12 four-player games,
    10 three-player, 17 six-player, with results like a fair coin)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    kappa: float = 0.0001
    provisional_sigma: float = 6.5

    def openskill(self) -> PlackettLuce:
        """The OpenSkill model of these parameters (one per distinct set, cached)."""
        return _openskill(self)


@functools.lru_cache(maxsize=16)
def _openskill(model: RatingModel) -> PlackettLuce:
    return PlackettLuce(
        mu=model.mu, sigma=model.sigma, beta=model.beta, tau=model.tau, kappa=model.kappa
    )


DEFAULT_MODEL = RatingModel()


@dataclasses.dataclass(frozen=True)
class Rating:
    """An account's rating in one title: ``mu``, ``sigma`` (skill points), ``games``
    rated, ``is_bot``."""

    title: str
    account: str
    mu: float
    sigma: float
    games: int = 0
    is_bot: bool = False

    @property
    def ordinal(self) -> float:
        """``mu - 3 * sigma``: what leaderboards order by."""
        return self.mu - 3.0 * self.sigma

    def provisional(self, model: RatingModel = DEFAULT_MODEL) -> bool:
        return self.sigma >= model.provisional_sigma


def new_rating(
    title: str, account: str, is_bot: bool = False, model: RatingModel = DEFAULT_MODEL
) -> Rating:
    """The prior of an account with no rated game: ``model.mu``, ``model.sigma``."""
    return Rating(title, account, model.mu, model.sigma, 0, is_bot)


@dataclasses.dataclass(frozen=True)
class RatedSeat:
    """One seat of a finished game: ``account``, ``rank`` (1 = first; tied seats share
    a rank), ``is_bot``, and ``weight`` (0-1) of the seat's update (see the module)."""

    account: str
    rank: int
    is_bot: bool = False
    weight: float = 1.0


@dataclasses.dataclass(frozen=True)
class RatedGame:
    """A finished rated game of ``title``: its ``game_id`` and its seats."""

    title: str
    game_id: str
    seats: tuple[RatedSeat, ...]


@dataclasses.dataclass(frozen=True)
class RatingHistoryEntry:
    """One update of one account's rating: the game, the seat's rank and weight, the
    rating before and after."""

    title: str
    account: str
    game_id: str
    rank: int
    weight: float
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float

    @property
    def ordinal_after(self) -> float:
        return self.mu_after - 3.0 * self.sigma_after


@dataclasses.dataclass(frozen=True)
class RatingUpdate:
    """What a game changes: the new ratings (in seat order) and a history entry each."""

    ratings: tuple[Rating, ...]
    history: tuple[RatingHistoryEntry, ...]


def _check(game: RatedGame) -> None:
    accounts = [s.account for s in game.seats]
    if len(accounts) < 2:
        raise TournamentError(
            "too_few_players", "a rated game needs at least 2 seats", players=len(accounts)
        )
    if len(set(accounts)) != len(accounts):
        raise TournamentError(
            "duplicate_player", f"game {game.game_id} names an account twice", game=game.game_id
        )
    for s in game.seats:
        if not 1 <= s.rank <= len(accounts):
            raise TournamentError(
                "bad_rank",
                f"{s.account}'s rank {s.rank} is not within 1-{len(accounts)}",
                account=s.account,
                rank=s.rank,
            )
        if not 0.0 <= s.weight <= 1.0:
            raise TournamentError(
                "bad_weight",
                f"{s.account}'s seat weight {s.weight} is not within 0-1",
                account=s.account,
                weight=s.weight,
            )


def rate_game(
    game: RatedGame, current: Mapping[str, Rating], model: RatingModel = DEFAULT_MODEL
) -> RatingUpdate:
    """The ratings after ``game``, from ``current`` (account -> :class:`Rating` in
    ``game.title``; an account absent gets :func:`new_rating`). ``current`` is not
    changed. Raises :class:`TournamentError` ``too_few_players``, ``duplicate_player``,
    ``bad_rank``, ``bad_weight`` or ``wrong_title`` (a rating of another title)."""
    _check(game)
    before = []
    for s in game.seats:
        r = current.get(s.account) or new_rating(game.title, s.account, s.is_bot, model)
        if r.title != game.title:
            raise TournamentError(
                "wrong_title",
                f"{s.account}'s rating is for {r.title}, the game is {game.title}",
                account=s.account,
            )
        before.append(r)
    updated = _plackett_luce(model, before, [s.rank for s in game.seats])
    ratings, history = [], []
    for s, r, (mu_os, var_os) in zip(game.seats, before, updated, strict=True):
        mu = r.mu + s.weight * (mu_os - r.mu)
        sigma = (r.sigma**2 + s.weight * (var_os - r.sigma**2)) ** 0.5
        ratings.append(Rating(game.title, s.account, mu, sigma, r.games + 1, s.is_bot))
        history.append(
            RatingHistoryEntry(
                game.title, s.account, game.game_id, s.rank, s.weight, r.mu, r.sigma, mu, sigma
            )
        )
    return RatingUpdate(tuple(ratings), tuple(history))


def strict_orders(ranks: Sequence[int]) -> list[list[int]]:
    """The strict finishes a tie is rated as: seat indices best first, each group of
    tied seats in each of its cyclic rotations (every tied seat takes each of the
    group's places once), all groups' rotations combined.

    >>> strict_orders([1, 2, 2, 4])
    [[0, 1, 2, 3], [0, 2, 1, 3]]
    """
    groups: list[list[int]] = []
    for i in sorted(range(len(ranks)), key=lambda i: (ranks[i], i)):
        if groups and ranks[groups[-1][0]] == ranks[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    orders: list[list[int]] = [[]]
    for g in groups:
        rotations = [g[k:] + g[:k] for k in range(len(g))]
        orders = [o + rot for o in orders for rot in rotations]
    return orders


def _plackett_luce(
    model: RatingModel, before: Sequence[Rating], ranks: Sequence[int]
) -> list[tuple[float, float]]:
    """``(mu, sigma**2)`` of each seat after OpenSkill's Plackett-Luce update.

    With no tie, one ``rate`` call with the ranks. OpenSkill 6.2's Plackett-Luce
    mishandles tied ranks (openskill.py issues 155, 166, 201: tied players can end
    below the seat they beat, or apart from each other), so a tie is rated as the mean
    of the strict finishes of :func:`strict_orders`, each rated by OpenSkill.
    """
    os_model = model.openskill()
    orders = strict_orders(ranks)
    sums = [[0.0, 0.0] for _ in before]
    for order in orders:
        teams = [[os_model.rating(mu=before[i].mu, sigma=before[i].sigma)] for i in order]
        rated = os_model.rate(teams, ranks=list(range(1, len(order) + 1)))
        for i, team in zip(order, rated, strict=True):
            sums[i][0] += team[0].mu
            sums[i][1] += team[0].sigma ** 2
    return [(m / len(orders), v / len(orders)) for m, v in sums]


@dataclasses.dataclass(frozen=True)
class LeaderboardRow:
    """A leaderboard line: ``position`` (shared on equal ordinals), the rating, and
    whether it is ``provisional``."""

    position: int
    rating: Rating
    provisional: bool


def leaderboard(
    ratings: Iterable[Rating],
    title: str,
    include_bots: bool = True,
    include_provisional: bool = True,
    model: RatingModel = DEFAULT_MODEL,
) -> list[LeaderboardRow]:
    """The ratings of ``title`` by ordinal, highest first (then by account), bots and
    provisional ratings left out when asked."""
    rows = [
        r
        for r in ratings
        if r.title == title
        and (include_bots or not r.is_bot)
        and (include_provisional or not r.provisional(model))
    ]
    rows.sort(key=lambda r: (-r.ordinal, r.account))
    out: list[LeaderboardRow] = []
    for i, r in enumerate(rows):
        same = out and out[-1].rating.ordinal == r.ordinal
        out.append(LeaderboardRow(out[-1].position if same else i + 1, r, r.provisional(model)))
    return out


def predicted_order(
    ratings: Sequence[Rating], model: RatingModel = DEFAULT_MODEL
) -> list[tuple[Rating, int]]:
    """``ratings`` with OpenSkill's ``predict_rank`` (1 = expected best) as if all met
    in one game, best first (equal predictions by account). Work is quadratic in the
    number of ratings: about 1 s for 1,000."""
    os_model = model.openskill()
    teams = [[os_model.rating(mu=r.mu, sigma=r.sigma, name=r.account)] for r in ratings]
    predicted = os_model.predict_rank(teams) if len(teams) > 1 else [(1, 1.0)]
    pairs = [(r, rank) for r, (rank, _prob) in zip(ratings, predicted, strict=True)]
    pairs.sort(key=lambda x: (x[1], x[0].account))
    return pairs
