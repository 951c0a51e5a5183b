"""``WatchGame``: a game's stored entries from a version, then each new one as it is appended."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from roundhouse.v1 import game_pb2
from services.platform.gamelog import StreamRewound
from services.platform.grpc_errors import RETRY_AFTER_S, abort
from services.rules.messages import (
    update_proto,
)
from services.rules.metrics import WATCHERS


class Watch:
    """The watch of :class:`services.rules.servicer.GameRulesServicer`."""

    async def WatchGame(self, request, context) -> AsyncIterator[game_pb2.GameUpdate]:
        live = await self.find_live(request.game_id, context)
        if live is None:
            stored = await self.archived(request.game_id, context)
            for update in await self.archive.updates(stored, request.from_version):
                yield update
            return
        async with live.lock:
            await self.catch_up(request.game_id, live)
            version, finished = live.state.version, live.state.is_terminal()
        if request.from_version < 0:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_version",
                "from_version must be 0 or more",
                from_version=request.from_version,
                min_version=0,
                current_version=version,
            )
        if request.from_version > version:
            await abort(
                context,
                grpc.StatusCode.OUT_OF_RANGE,
                "bad_version",
                f"from_version must be at most {version} (the game's current version)",
                from_version=request.from_version,
                max_version=version,
                current_version=version,
            )
        if finished and request.from_version == version:
            return
        if finished:  # nothing more can come: the stored entries, from Redis or the archive
            entries = await self.gamelog.entries(request.game_id, request.from_version)
            if len(entries) == version - request.from_version:
                for entry in entries:
                    yield update_proto(self.title, entry)
                return
            # this replica still caches a game whose keys expired once archived
            stored = await self.archived(request.game_id, context)
            for update in await self.archive.updates(stored, request.from_version):
                yield update
            return
        if self.watchers >= self.max_watchers:
            await abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too_many_watchers",
                "this server has too many open watches; try again later",
                max_watchers=self.max_watchers,
                retry_after_s=RETRY_AFTER_S,
            )
        self.watchers += 1
        WATCHERS.labels(self.title).set(self.watchers)
        try:
            async for entry in self.watch_log.follow(request.game_id, request.from_version):
                yield update_proto(self.title, entry)
        except StreamRewound:
            async with live.lock:
                await self.catch_up(request.game_id, live)
                version = live.state.version
            await abort(
                context,
                grpc.StatusCode.ABORTED,
                "game_rewound",
                f"the game's stream lost moves (a storage failover); it is at version {version}: "
                "read the game again",
                current_version=version,
            )
        finally:
            self.watchers -= 1
            WATCHERS.labels(self.title).set(self.watchers)
