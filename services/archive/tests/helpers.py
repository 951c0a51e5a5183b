"""Shared pieces of the archive tests: random finished games stored in Redis
the way the rules service stores them, an in-process rules servicer with the
archive fallback, and a fake gRPC context."""

from __future__ import annotations

import contextlib

import redis.asyncio as aioredis

from services.archive.archiver import Archiver
from services.archive.fallback import ArchiveFallback
from services.archive.store import ArchiveStore
from services.kernel.rng import SeededRandom
from services.platform.db import create_engine
from services.platform.gamelog import GameLog
from services.platform.settings import ArchiveSettings
from services.rules.servicer import GameRulesServicer
from services.rules.titles import get_game


class Aborted(Exception):
    def __init__(self, status):
        super().__init__(status.details)
        self.code = status.code
        self.status = status


class FakeContext:
    async def abort_with_status(self, status):
        raise Aborted(status)


def random_log(title: str, players: int, seed: int) -> list:
    """A whole random game as (seat, action) pairs."""
    state = get_game(title).new_state(players, seed)
    rng = SeededRandom(seed)
    log = []
    while not state.is_terminal():
        seat = state.active_seats()[0]
        action = rng.choice(state.legal_actions(seat))
        log.append((seat, action))
        state.apply(seat, action)
    return log


class Rig:
    """A Redis prefix, a store, an archiver and a rules servicer of ``title``
    with the archive fallback, all in this process."""

    def __init__(
        self,
        redis_url: str,
        prefix: str,
        store_url: str,
        title: str = "railbarons",
        ttl_s: int = 3600,
    ) -> None:
        self.settings = ArchiveSettings(
            redis_url=redis_url,
            key_prefix=prefix,
            database_url=store_url,
            archived_game_ttl_s=ttl_s,
            consumer_name="test",
        )
        self.redis = aioredis.from_url(redis_url, decode_responses=True)
        self.engine = create_engine(store_url, self.settings)
        self.store = ArchiveStore(self.engine)
        self.gamelog = GameLog(self.redis, prefix)
        self.archiver = Archiver(self.settings, self.redis, self.engine, retry_max_wait_s=0.2)
        self.title = title
        self.rules = GameRulesServicer(
            title, self.gamelog, archive=ArchiveFallback(title, self.store)
        )

    async def finished_game(
        self, game_id: str, players: int = 3, seed: int = 1, owner: str = "", **extra_meta
    ) -> None:
        """Store a whole random game (and its lifecycle events) in Redis."""
        log = random_log(self.title, players, seed)
        live = await self.rules.store_game(
            game_id, players, seed, {}, log, extra_meta={"owner": owner, **extra_meta}
        )
        assert live is not None and live.state.is_terminal()
        self.rules._cache.pop(game_id)  # later calls read Redis (or the archive)

    async def close(self) -> None:
        await self.redis.aclose()
        await self.engine.dispose()


@contextlib.asynccontextmanager
async def rig(redis_url, prefix, store_url, **kwargs):
    r = Rig(redis_url, prefix, store_url, **kwargs)
    try:
        yield r
    finally:
        await r.close()
