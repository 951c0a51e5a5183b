"""Ratings in the durable store, and the consumer that rates every finished game.

:class:`RatingStore` keeps one rating per (title, account) (``ratings``), one history
row per seat of every rated game (``rating_history``) and the games rated
(``rated_games``). :meth:`RatingStore.apply` rates one game in one transaction: the
``rated_games`` insert comes first, so a game delivered twice is rated once (the second
insert fails on the key and nothing is written).

:class:`GameRater` is the lifecycle handler (consumer group ``ratings``): for each
``game_finished`` it finds the game's lobby table (its seats' accounts), skips games that
are not rated (a tournament with ``rated`` off; a game without accounts, e.g. an imported
one), and rates the rest, in tournaments and out. Ranks come from the game's result; tied
seats share a rank. Seat weights: the event's optional ``seat_weights`` field (a JSON list,
0-1 per seat; the clocks issue will set it for a seat a bot took over), else 1.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
import sqlalchemy.exc
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from services.accounts.models import Account
from services.lobby.store import TableStore
from services.platform.db import utcnow
from services.platform.logging import get_logger
from services.tournaments.ratings import (
    DEFAULT_MODEL,
    LeaderboardRow,
    RatedGame,
    RatedSeat,
    Rating,
    RatingHistoryEntry,
    RatingModel,
    leaderboard,
    rate_game,
)
from services.tournaments.service.models import RatedGame as RatedGameRow
from services.tournaments.service.models import RatingHistoryRow, RatingRow
from services.tournaments.service.store import TournamentStore

log = get_logger("ratings")


def _rating(row: RatingRow) -> Rating:
    return Rating(row.title, row.account_id, row.mu, row.sigma, row.games, row.is_bot)


class RatingStore:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], model: RatingModel = DEFAULT_MODEL
    ) -> None:
        self.sessions = sessions
        self.model = model

    async def ratings(self, title: str, account_ids: Sequence[str]) -> dict[str, Rating]:
        """The ratings of ``account_ids`` in ``title`` that exist."""
        async with self.sessions() as s:
            rows = await s.scalars(
                sa.select(RatingRow).where(
                    RatingRow.title == title, RatingRow.account_id.in_(list(account_ids))
                )
            )
            return {r.account_id: _rating(r) for r in rows}

    async def apply(self, game: RatedGame) -> bool:
        """Rate ``game`` unless it was rated before; whether it was rated now.
        Raises :class:`~services.tournaments.errors.TournamentError` (bad seats)."""
        now = utcnow()
        try:
            async with self.sessions.begin() as s:
                s.add(RatedGameRow(game_id=game.game_id, title=game.title, rated_at=now))
                await s.flush()
                accounts = [x.account for x in game.seats]
                q = sa.select(RatingRow).where(
                    RatingRow.title == game.title, RatingRow.account_id.in_(accounts)
                )
                rows = {r.account_id: r for r in await s.scalars(q.with_for_update())}
                update = rate_game(game, {a: _rating(r) for a, r in rows.items()}, self.model)
                for r in update.ratings:
                    row = rows.get(r.account)
                    if row is None:
                        s.add(
                            RatingRow(
                                title=r.title,
                                account_id=r.account,
                                mu=r.mu,
                                sigma=r.sigma,
                                games=r.games,
                                is_bot=r.is_bot,
                                updated_at=now,
                            )
                        )
                    else:
                        row.mu, row.sigma, row.games, row.updated_at = r.mu, r.sigma, r.games, now
                        row.is_bot = r.is_bot
                s.add_all(_history_row(h, now) for h in update.history)
        except sqlalchemy.exc.IntegrityError:
            return False  # rated before
        return True

    async def leaderboard(
        self,
        title: str,
        include_bots: bool = True,
        include_provisional: bool = True,
        limit: int = 100,
    ) -> list[tuple[LeaderboardRow, str]]:
        """The board (rows with usernames), best ordinal first."""
        async with self.sessions() as s:
            rows = (
                await s.execute(
                    sa.select(RatingRow, Account.username)
                    .join(Account, Account.id == RatingRow.account_id)
                    .where(RatingRow.title == title)
                )
            ).all()
        names = {r.account_id: name for r, name in rows}
        board = leaderboard(
            [_rating(r) for r, _ in rows], title, include_bots, include_provisional, self.model
        )
        return [(row, names[row.rating.account]) for row in board[:limit]]

    async def of_account(
        self, account_id: str
    ) -> tuple[list[Rating], list[tuple[RatingHistoryEntry, int]]]:
        """An account's ratings (every title) and its history (entry, Unix ms), oldest
        first."""
        async with self.sessions() as s:
            ratings = await s.scalars(
                sa.select(RatingRow)
                .where(RatingRow.account_id == account_id)
                .order_by(RatingRow.title)
            )
            out = [_rating(r) for r in ratings]
            history = await s.scalars(
                sa.select(RatingHistoryRow)
                .where(RatingHistoryRow.account_id == account_id)
                .order_by(RatingHistoryRow.id)
            )
            entries = [
                (
                    RatingHistoryEntry(
                        h.title,
                        h.account_id,
                        h.game_id,
                        h.rank,
                        h.weight,
                        h.mu_before,
                        h.sigma_before,
                        h.mu_after,
                        h.sigma_after,
                    ),
                    int(h.rated_at.timestamp() * 1000),
                )
                for h in history
            ]
        return out, entries


def _history_row(h: RatingHistoryEntry, now) -> RatingHistoryRow:
    return RatingHistoryRow(
        title=h.title,
        account_id=h.account,
        game_id=h.game_id,
        rank=h.rank,
        weight=h.weight,
        mu_before=h.mu_before,
        sigma_before=h.sigma_before,
        mu_after=h.mu_after,
        sigma_after=h.sigma_after,
        rated_at=now,
    )


class GameRater:
    """The lifecycle handler that rates finished games (see the module)."""

    def __init__(
        self, ratings: RatingStore, tables: TableStore, tournaments: TournamentStore
    ) -> None:
        self.ratings, self.tables, self.tournaments = ratings, tables, tournaments

    async def handle(self, fields: dict[str, str]) -> None:
        if fields.get("type") != "game_finished":
            return
        game_id = fields["game_id"]
        game = await self.rated_game(game_id, fields)
        if game is None:
            return
        rated = await self.ratings.apply(game)
        log.info("game rated" if rated else "game rated before", game_id=game_id)

    async def rated_game(self, game_id: str, fields: dict[str, str]) -> RatedGame | None:
        """The game as the rating core's input, None when it is not rated."""
        try:
            result = json.loads(fields["result"])
        except (KeyError, ValueError):
            return None
        table = await self.tables.by_game(game_id)
        if table is None or any(not s.account_id for s in table.seats):
            return None  # no accounts to rate (an imported game)
        found = await self.tournaments.table_by_lobby_id(table.table_id)
        if found is not None and not await self.tournaments.is_rated(found[0]):
            return None
        ranks = list(result.get("ranks", []))
        if len(ranks) != len(table.seats):
            return None
        try:
            weights = json.loads(fields["seat_weights"]) if "seat_weights" in fields else None
        except ValueError:
            weights = None
        if not isinstance(weights, list) or len(weights) != len(ranks):
            weights = [1.0] * len(ranks)
        seats = []
        for s, rank, w in zip(table.seats, ranks, weights, strict=True):
            seats.append(RatedSeat(s.account_id, int(rank), s.bot_account, float(w)))
        accounts = [s.account for s in seats]
        if len(set(accounts)) != len(accounts):
            return None  # one system bot in two seats: no rating is one player's
        return RatedGame(table.title, game_id, tuple(seats))
