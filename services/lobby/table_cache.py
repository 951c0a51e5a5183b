"""The lobby's cache of table records, invalidated on every change, in every lobby replica.

``GetTable`` and ``ListTables`` are what polling clients call most (a web page refreshing its
table, the lobby page), and each read of a table from the durable store is two SQL queries
through the ORM: under 50 polling clients, the lobby's largest cost (issue 33, item 6:
``bench_poll_load``, ``docs/benchmarks.md``). So the lobby keeps the records it read
(:class:`TableCache`) and drops one whenever it may have changed:

* its own writes (:meth:`services.lobby.store.TableStore.change`, ``create``) drop the table
  as soon as they commit, and announce its id on the channel ``P:tables:changed`` (Redis
  pub/sub, :func:`publish_change`);
* every lobby follows that channel (:func:`follow_changes`) and drops the announced tables;
  pub/sub delivers at most once, so each (re)subscription first empties the cache, and a
  record is trusted for ``table_cache_seconds`` at most whatever happens (a lost message);
* a read that began before a drop never stores what it read (the cache's generation moved
  on: :meth:`TableCache.generation`), so a slow read cannot put back the record a change
  just replaced.

The lobby also keeps its answers to ``GetTable`` and ``ListTables`` (:meth:`TableCache.answer`,
the messages built from those records: building a listing's 25 ``Table`` messages cost more than
reading them from the cache), each valid until anything is dropped (the generation moves on) and
for ``table_cache_seconds`` at most, like the page ids a listing is read from.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from cachetools import TTLCache

from services.platform import hotstore
from services.platform.logging import get_logger

if TYPE_CHECKING:
    from services.lobby.store import TableRecord

log = get_logger("lobby")


def channel(prefix: str) -> str:
    """The pub/sub channel of changed table ids."""
    return f"{prefix}:tables:changed"


def _copy(record: TableRecord) -> TableRecord:
    """A copy a caller may change without changing the cached record (seats copied too)."""
    return dataclasses.replace(record, seats=[dataclasses.replace(s) for s in record.seats])


class TableCache:
    """Table id -> :class:`~services.lobby.store.TableRecord`, at most ``size`` records,
    and the table ids of ``ListTables`` pages, each for ``ttl_s`` seconds at most (0: nothing
    is kept)."""

    def __init__(self, ttl_s: float, size: int = 20_000) -> None:
        self.ttl_s = ttl_s
        self._records: TTLCache[str, TableRecord] | None = (
            TTLCache(maxsize=size, ttl=ttl_s) if ttl_s > 0 else None
        )
        self._pages: TTLCache[tuple, tuple[list[str], bool]] | None = (
            TTLCache(maxsize=1000, ttl=ttl_s) if ttl_s > 0 else None
        )
        self._answers: TTLCache[tuple, tuple[int, Any]] | None = (
            TTLCache(maxsize=size, ttl=ttl_s) if ttl_s > 0 else None
        )
        self._generation = 0

    def answer(self, key: tuple) -> Any | None:
        """The answer kept under ``key`` (:meth:`keep_answer`), unless anything was dropped
        since it was made; None otherwise. The caller must not change it (copy it first)."""
        if self._answers is None:
            return None
        found = self._answers.get(key)
        return found[1] if found is not None and found[0] == self._generation else None

    def keep_answer(self, key: tuple, answer: Any, generation: int) -> None:
        """Keep ``answer`` (not copied: the caller must not change it after), made from reads
        begun at ``generation``, unless something was dropped since."""
        if self._answers is not None and generation == self._generation:
            self._answers[key] = (generation, answer)

    def generation(self) -> int:
        """Take it before a read of the store; pass it to :meth:`put` with what was read."""
        return self._generation

    def get(self, table_id: str) -> TableRecord | None:
        """A copy of the cached record, or None."""
        found = self._records.get(table_id) if self._records is not None else None
        return None if found is None else _copy(found)

    def put(self, record: TableRecord, generation: int) -> None:
        """Keep ``record`` (a copy), unless something was dropped since ``generation``."""
        if self._records is not None and generation == self._generation:
            self._records[record.table_id] = _copy(record)

    def page(self, query: tuple) -> tuple[list[str], bool] | None:
        """The table ids of a ``ListTables`` page (and whether more follow), or None."""
        return self._pages.get(query) if self._pages is not None else None

    def put_page(self, query: tuple, ids: list[str], more: bool, generation: int) -> None:
        """Keep a page's ids, unless something was dropped since ``generation``."""
        if self._pages is not None and generation == self._generation:
            self._pages[query] = (list(ids), more)

    def forget(self, table_id: str) -> None:
        """Drop one table (it changed, here or in another lobby), and every page (a change
        may move any table into or out of any listing)."""
        self._generation += 1
        if self._records is not None:
            self._records.pop(table_id, None)
        if self._pages is not None:
            self._pages.clear()
        if self._answers is not None:
            self._answers.clear()

    def clear(self) -> None:
        self._generation += 1
        if self._records is not None and self._pages is not None:
            self._records.clear()
            self._pages.clear()
        if self._answers is not None:
            self._answers.clear()

    def cached(self, table_id: str) -> bool:
        return self._records is not None and table_id in self._records


async def publish_change(client: aioredis.Redis, prefix: str, table_id: str) -> None:
    """Tell every lobby that ``table_id`` changed (best effort: a Redis outage is logged; the
    other lobbies then trust their copy for ``table_cache_seconds`` at most)."""
    error = await hotstore.publish_id(client, channel(prefix), table_id)
    if error:
        log.warning("table change not broadcast", table_id=table_id, error=error)


async def follow_changes(
    client: aioredis.Redis, prefix: str, cache: TableCache, stop: asyncio.Event
) -> None:
    """Drop each announced table from ``cache`` until ``stop`` is set. Empties the cache once
    subscribed (announcements sent before may have been missed). Raises what Redis raises (run
    it under :class:`services.platform.supervise.Supervisor`, which restarts it)."""
    await hotstore.follow_ids(client, channel(prefix), cache.forget, cache.clear, stop)
