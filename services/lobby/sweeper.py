"""Tables that never start expire (issue 13, item 1).

A table nobody starts would hold its owner's quota (``tables_per_account``)
and its row for ever. The lobby's sweeper aborts every table still ``open``
``open_table_ttl_s`` seconds after its creation (status ABORTED, as if the
owner had aborted it; the row stays, for the owner's history), looking every
``open_table_sweep_s`` seconds. Each abort is the usual row-locked change, so
a table started or joined meanwhile is left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime, timedelta

import sqlalchemy as sa

from services.lobby.models import ABORTED, OPEN, Table
from services.lobby.store import TableNotFound, TableRecord, TableStore
from services.platform.db import utcnow
from services.platform.logging import get_logger
from services.platform.settings import LobbySettings

log = get_logger("lobby.sweeper")

BATCH = 500
"""Tables aborted per database query at most (the next round takes the rest)."""


async def abort_expired(store: TableStore, ttl_s: float, now: datetime) -> list[str]:
    """Abort the tables still open that were created more than ``ttl_s``
    seconds before ``now``; their ids."""
    cutoff = now - timedelta(seconds=ttl_s)
    async with store.sessions() as session:
        ids = list(
            await session.scalars(
                sa.select(Table.id)
                .where(Table.status == OPEN, Table.created_at < cutoff)
                .order_by(Table.created_at)
                .limit(BATCH)
            )
        )

    def expire(t: TableRecord) -> None:
        if t.status == OPEN and t.created_at < cutoff:
            t.status = ABORTED

    aborted = []
    for table_id in ids:
        with contextlib.suppress(TableNotFound):
            if (await store.change(table_id, expire)).status == ABORTED:
                aborted.append(table_id)
    if aborted:
        log.info("open tables expired", count=len(aborted), ttl_s=ttl_s)
    return aborted


async def sweep_open_tables(
    store: TableStore,
    settings: LobbySettings,
    stop: asyncio.Event,
    clock: Callable[[], datetime] = utcnow,
) -> None:
    """Run :func:`abort_expired` every ``open_table_sweep_s`` until ``stop``
    is set (a supervised background task of the lobby)."""
    while not stop.is_set():
        await abort_expired(store, settings.open_table_ttl_s, clock())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), settings.open_table_sweep_s)
