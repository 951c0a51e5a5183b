"""The archiver: copies every finished game from Redis into the durable store.

It reads the lifecycle stream through its own consumer group
(``archive_group``, :func:`services.platform.consumer.consume`). For each
``game_finished`` event, :meth:`Archiver.archive`:

1. reads the game's creation record and its whole stream from Redis (one
   round trip), and its seats (:func:`seats_of`);
2. stores meta, options, seed, seats, every entry and the result in one
   transaction (:meth:`services.archive.store.ArchiveStore.save`); a game
   archived already is not stored again (the insert of its game row fails on
   the primary key and nothing is written: a second delivery changes
   nothing, idempotent on the game id);
3. copies a lobby table's chat into ``archived_chat``
   (:func:`services.lobby.chat.archive_chat`, idempotent on the message ids) and lets its
   Redis keys expire with the game's;
4. sets the game's Redis keys to expire after ``archived_game_ttl_s``.

While the database (or Redis) is down the handler retries (tenacity,
exponential back-off capped at ``retry_max_wait_s``) and never returns, so the
lifecycle entry is not acknowledged until the game is stored: nothing is
lost, and the archiver catches up once the database is back. A stop request
ends the retrying; the entry stays pending and is handled again after a
restart (the consumer re-reads its own pending entries first).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from datetime import UTC, datetime

import redis.asyncio as aioredis
from prometheus_client import Counter, Histogram
from sqlalchemy.ext.asyncio import AsyncEngine
from tenacity import AsyncRetrying, retry_if_exception, wait_exponential

from services.archive.store import ArchiveStore, GameRecord, SeatInfo
from services.lobby.chat import ChatLog, archive_chat
from services.lobby.store import TableNotFound, TableStore
from services.platform.consumer import consume
from services.platform.db import is_unavailable, session_factory, utcnow
from services.platform.gamelog import GameLog, LogEntry
from services.platform.hotstore import is_outage
from services.platform.logging import get_logger
from services.platform.settings import ArchiveSettings

log = get_logger("archiver")

ARCHIVED = Counter("roundhouse_archive_games_total", "Finished games by outcome", ["outcome"])
ARCHIVE_SECONDS = Histogram(
    "roundhouse_archive_seconds",
    "Time to archive one finished game (Redis read + database write)",
    buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0, 5.0),
)

STORED, ALREADY, MISSING, UNFINISHED = "stored", "already", "missing", "unfinished"


LINGER_MS = 100
"""The lifecycle consumer's wait after a batch (``services.platform.consumer``): the archiver
acts only on finished games, so under load it reads the moves' entries in batches."""
REPLAY_KEYS = ("clock", "clock_start_ms", "resignation")
"""What the archive keeps of a creation record for replays besides seed and options."""


def _outage(exc: BaseException) -> bool:
    return is_unavailable(exc) or is_outage(exc)


async def seats_of(meta: dict, tables: TableStore, result: dict) -> tuple[SeatInfo, ...]:
    """The seats of a game, from the records as they exist:

    * ``meta["seats"]`` when the creation record carries them (a list of
      ``{"name", "kind", "policy", "account_id"}``, one per seat);
    * else the lobby's table in the store when ``meta["owner"]`` is
      ``table:<id>`` (each seat's account id and username, kind and policy);
    * else unnamed seats (an imported game).

    Scores and ranks are in ``result``; they are not part of the seats.
    """
    n = meta["num_players"]
    given = meta.get("seats")
    if isinstance(given, list) and len(given) == n:
        return tuple(
            SeatInfo(
                i,
                str(s.get("name", "")),
                str(s.get("kind", "")),
                str(s.get("policy", "")),
                s.get("account_id") or None,
            )
            for i, s in enumerate(given)
        )
    owner = meta.get("owner", "")
    if owner.startswith("table:"):
        try:
            table = await tables.get(owner.removeprefix("table:"))
        except TableNotFound:
            table = None
        if table is not None and len(table.seats) == n:
            return tuple(
                SeatInfo(i, s.username, s.kind, s.policy, s.account_id or None)
                for i, s in enumerate(table.seats)
            )
    return tuple(SeatInfo(i) for i in range(n))


def _time(value, default: datetime) -> datetime:
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (TypeError, ValueError, OverflowError):
        return default


class Archiver:
    """Finished games from Redis into the archive.

    Args:
        settings: key prefix, consumer group and name, ``archived_game_ttl_s``.
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        engine: the durable store (migrated to ``0003_archive`` or later).
        stop: set to end the consumer loop and any retrying.
        retry_max_wait_s: the longest pause between two tries while the
            database or Redis is down.
    """

    def __init__(
        self,
        settings: ArchiveSettings,
        client: aioredis.Redis,
        engine: AsyncEngine,
        stop: asyncio.Event | None = None,
        retry_max_wait_s: float = 5.0,
    ) -> None:
        self.r = client
        self.gamelog = GameLog.for_settings(client, settings)
        self.tables = TableStore(session_factory(engine))
        self.chat = ChatLog(client, settings.key_prefix)
        self.store = ArchiveStore(engine)
        self.ttl_s = settings.archived_game_ttl_s
        self.group = settings.archive_group
        self.consumer = f"{settings.consumer_name}-archiver"
        self.stop = stop or asyncio.Event()
        self.retry_max_wait_s = retry_max_wait_s

    async def archive(self, game_id: str, finished_at: datetime | None = None) -> str:
        """Archive one finished game (see the module docstring); returns
        ``"stored"``, ``"already"`` (archived before: only the expiry is set),
        ``"missing"`` (Redis has no such game: nothing to copy) or
        ``"unfinished"`` (its stream has no final entry: nothing stored).

        Raises:
            the driver's or Redis' error when either is down (nothing stored).
        """
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.get(self.gamelog.meta_key(game_id))
            pipe.xrange(self.gamelog.log_key(game_id))
            raw_meta, raw_entries = await pipe.execute()
        if raw_meta is None:  # expired after an earlier archive, or never there
            return ALREADY if await self.store.has(game_id) else MISSING
        meta = json.loads(raw_meta)
        entries = [LogEntry.from_fields(fields) for _, fields in raw_entries]
        if not entries or not entries[-1].finished:
            return UNFINISHED
        result = json.loads(entries[-1].result)
        now = utcnow()
        finished = finished_at or now
        record = GameRecord(
            game_id=game_id,
            title=meta["title"],
            rules_version=meta["rules_version"],
            num_players=meta["num_players"],
            options=meta["options"],
            seed=int(meta["seed"]),
            owner=meta.get("owner", ""),
            created_at=_time(meta.get("created_at"), finished),
            finished_at=finished,
            num_actions=len(entries),
            result=result,
            seats=await seats_of(meta, self.tables, result),
            replay={k: meta[k] for k in REPLAY_KEYS if k in meta},
        )
        stored = await self.store.save(record, entries)
        if record.owner.startswith("table:"):  # its table's chat goes with it (lobby/chat.py)
            table_id = record.owner.removeprefix("table:")
            await archive_chat(self.chat, self.tables.sessions, table_id, game_id)
            await self.chat.expire(table_id, self.ttl_s)
        await self.expire(game_id)
        return STORED if stored else ALREADY

    async def expire(self, game_id: str) -> None:
        """Let Redis keep the game's keys (creation record, stream, idempotency
        answers) for ``archived_game_ttl_s`` more seconds (0: delete them now)."""
        keys = [
            self.gamelog.meta_key(game_id),
            self.gamelog.log_key(game_id),
            self.gamelog.idem_key(game_id),
        ]
        async with self.r.pipeline(transaction=True) as pipe:
            for key in keys:
                if self.ttl_s:
                    pipe.expire(key, self.ttl_s)
                else:
                    pipe.delete(key)
            await pipe.execute()

    async def handle(self, fields: dict[str, str]) -> None:
        """Lifecycle handler: archive a ``game_finished`` event's game, retrying
        through outages until it is stored or :attr:`stop` is set (then it
        raises, leaving the entry pending)."""
        if fields.get("type") != "game_finished":
            return
        game_id = fields["game_id"]
        finished_at = _time(fields["finished_at"], utcnow()) if "finished_at" in fields else None
        with ARCHIVE_SECONDS.time():
            outcome = await self._retrying(self.archive, game_id, finished_at)
        ARCHIVED.labels(outcome).inc()
        if outcome in (MISSING, UNFINISHED):
            log.error("finished game not archived", game_id=game_id, outcome=outcome)
        else:
            log.info("game archived", game_id=game_id, outcome=outcome)

    async def _retrying(self, fn, *args):
        retrying = AsyncRetrying(
            retry=retry_if_exception(_outage),
            wait=wait_exponential(multiplier=0.1, max=self.retry_max_wait_s),
            stop=lambda _state: self.stop.is_set(),
            sleep=self._sleep,
            reraise=True,
            before_sleep=lambda state: log.warning(
                "store unavailable; archiving retried",
                game_id=args[0],
                attempt=state.attempt_number,
                error=repr(state.outcome.exception())[:300],
            ),
        )
        return await retrying(fn, *args)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    async def run(self) -> None:
        """Consume the lifecycle stream until :attr:`stop` is set."""
        log.info("archiving", group=self.group, consumer=self.consumer, ttl_s=self.ttl_s)
        await consume(
            self.r,
            self.gamelog.lifecycle_keys,
            self.group,
            self.consumer,
            self.handle,
            stop=self.stop,
            linger_ms=LINGER_MS,
        )
