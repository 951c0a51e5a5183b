"""One shared move feed per table for the web pages: a single spectator ``WatchTable`` stream
per table and gateway process, however many pages show or watch it (the lobby limits watch
streams per account and per connection: ``watch_opens_per_account``, ``watches_per_peer``).

A feed keeps the table's public moves (``update_line`` dicts, version order); the table
page's move log reads it, and each page's live-update stream waits on it. A feed whose
stream broke starts again from the last move it has when next asked."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.web.models import update_line

MAX_FEEDS = 2000
"""Feeds one gateway keeps; past it the oldest finished ones are dropped."""


class TableFeed:
    def __init__(self, lobby: lobby_pb2_grpc.LobbyStub, table_id: str) -> None:
        self.lobby, self.table_id = lobby, table_id
        self.moves: list[dict[str, Any]] = []
        self.finished = False
        self.error = ""
        self._task: asyncio.Task | None = None
        self._changed = asyncio.Event()

    def ensure(self) -> None:
        """Starts (or restarts) the stream unless the game's last move is in."""
        if not self.finished and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        call = self.lobby.WatchTable(
            lobby_pb2.WatchTableRequest(table_id=self.table_id, from_version=len(self.moves))
        )
        try:
            async for update in call:
                if update.version <= len(self.moves):
                    continue
                self.moves.append(update_line(update))
                self.finished = update.finished
                self._notify()
                if update.finished:
                    break
        except grpc.aio.AioRpcError as err:
            self.error = err.code().name
        finally:
            call.cancel()
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for(self, version: int, timeout_s: float) -> None:
        """Returns once the feed holds ``version`` moves, the game ended, or ``timeout_s``
        passed (seconds)."""
        self.ensure()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while len(self.moves) < version and not self.finished:
                    await self._changed.wait()

    async def updates(self, after: int, idle_s: float) -> AsyncIterator[dict[str, Any] | None]:
        """The moves after version ``after`` as they come; None after ``idle_s`` seconds
        without one (a keep-alive); ends after the game's last move."""
        sent = after
        while True:
            self.ensure()
            while sent < len(self.moves):
                yield self.moves[sent]
                sent += 1
            if self.finished:
                return
            event = self._changed
            try:
                await asyncio.wait_for(event.wait(), idle_s)
            except TimeoutError:
                yield None
            if self._task is not None and self._task.done() and not self.finished:
                await asyncio.sleep(1.0)  # the stream broke: start it again shortly


class Feeds:
    """table id -> :class:`TableFeed` (made on first use)."""

    def __init__(self, lobby: lobby_pb2_grpc.LobbyStub) -> None:
        self.lobby = lobby
        self._feeds: dict[str, TableFeed] = {}

    def get(self, table_id: str) -> TableFeed:
        feed = self._feeds.get(table_id)
        if feed is None:
            if len(self._feeds) >= MAX_FEEDS:
                for key in [k for k, f in self._feeds.items() if f.finished][: MAX_FEEDS // 4]:
                    del self._feeds[key]
            feed = self._feeds[table_id] = TableFeed(self.lobby, table_id)
        return feed
