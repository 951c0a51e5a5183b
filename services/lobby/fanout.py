"""One upstream watch per game, fanned out to every client watching it (issue 13, item 2).

The lobby used to open one ``WatchGame`` stream on the rules service per
``WatchTable`` client, so one client opening 500 watches took every watch slot
of a rules replica (``max_watchers``) and everyone else's watch failed. Now
a :class:`WatchHub` keeps, per game watched on this lobby, one
:class:`Channel`: one upstream stream from version 0 whose updates are kept in
memory (a game has at most a few thousand small updates) and handed to every
subscriber from the version it asked for. The channel closes when its last
subscriber leaves or the game ends (later watchers open a new one, which the
rules service answers from its log or the archive without holding a slot).

Admission (:meth:`WatchHub.admit`) bounds the open watches of one lobby in
all (``lobby_max_watches``: ``too_many_watchers``), of one account
(``watches_per_account``) and of one connection (``watches_per_peer``;
both ``too_many_watches``): RESOURCE_EXHAUSTED with ``retry_after_s`` and
``limit``, see :class:`services.lobby.quotas.QuotaExceeded`. So a client at
its limits holds at most its share of this lobby's watches and one upstream
per game it watches.

A dropped upstream (UNAVAILABLE: a rules replica restarting) is resumed from
the last update received, ``retries`` times in a row at most; any other error
of the upstream (``game_rewound`` after a lost stream tail, say) ends every
subscriber's watch with that error, and the next watch opens a new channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import Counter
from collections.abc import AsyncIterator, Callable

import grpc

from roundhouse.v1 import game_pb2
from services.lobby.quotas import QuotaExceeded
from services.platform.grpc_errors import RETRY_AFTER_S
from services.platform.logging import get_logger

log = get_logger("lobby.fanout")

Upstream = Callable[[str, str, int], AsyncIterator[game_pb2.GameUpdate]]
"""``(title, game_id, from_version) ->`` the rules service's ``WatchGame`` stream."""


class Channel:
    """One game's upstream watch and the updates it brought so far.

    Attributes:
        updates: every update from version 1 on, in order.
        error: the upstream's final error (then no more updates come).
        done: the upstream ended (the game is over, or ``error``).
        subscribers: the watches reading it.
    """

    def __init__(self, hub: WatchHub, title: str, game_id: str) -> None:
        self.hub, self.title, self.game_id = hub, title, game_id
        self.updates: list[game_pb2.GameUpdate] = []
        self.error: grpc.aio.AioRpcError | None = None
        self.done = False
        self.subscribers = 0
        self._changed = asyncio.Condition()
        self.task = asyncio.create_task(self._pump(), name=f"watch-{game_id}")

    async def _pump(self) -> None:
        retries = 0
        try:
            while True:
                try:
                    async for update in self.hub.upstream(
                        self.title, self.game_id, len(self.updates)
                    ):
                        retries = 0
                        async with self._changed:
                            self.updates.append(update)
                            self._changed.notify_all()
                    return
                except grpc.aio.AioRpcError as err:
                    if err.code() != grpc.StatusCode.UNAVAILABLE or retries >= self.hub.retries:
                        self.error = err
                        return
                    retries += 1
                    log.warning(
                        "watch of the rules service dropped; resuming",
                        game_id=self.game_id,
                        from_version=len(self.updates),
                        retry=retries,
                    )
                    await asyncio.sleep(self.hub.retry_wait_s * retries)
        finally:
            self.hub._closed(self)
            async with self._changed:
                self.done = True
                self._changed.notify_all()

    def _past(self, i: int) -> bool:
        return len(self.updates) > i or self.done

    async def follow(self, from_version: int) -> AsyncIterator[game_pb2.GameUpdate]:
        """The updates after ``from_version``, then live ones, until the game
        ends. Raises the upstream's error (``grpc.aio.AioRpcError``) if it failed."""
        i = 0
        while True:
            async with self._changed:
                await self._changed.wait_for(functools.partial(self._past, i))
                batch = self.updates[i:]
                done = self.done  # every update is in batch: it is read under the lock
            for update in batch:
                i += 1
                if update.version > from_version:
                    yield update
            if done:
                if self.error is not None:
                    raise self.error
                return


class WatchHub:
    """The lobby's watches.

    Args:
        upstream: opens a rules service's ``WatchGame`` stream.
        max_watches: open watches of this lobby in all.
        per_account: open watches of one account.
        per_peer: open watches of one connection (gRPC peer: address and port).
        retries: times in a row a dropped upstream is resumed.
        retry_wait_s: wait before the n-th resume: ``n * retry_wait_s``.
    """

    def __init__(
        self,
        upstream: Upstream,
        max_watches: int,
        per_account: int,
        per_peer: int,
        retries: int = 5,
        retry_wait_s: float = 0.2,
    ) -> None:
        self.upstream = upstream
        self.max_watches, self.per_account, self.per_peer = max_watches, per_account, per_peer
        self.retries, self.retry_wait_s = retries, retry_wait_s
        self.channels: dict[str, Channel] = {}
        self.open = 0
        self.by_account: Counter[str] = Counter()
        self.by_peer: Counter[str] = Counter()

    @contextlib.contextmanager
    def admit(self, account_id: str, peer: str):
        """Hold one watch slot of ``account_id`` ("" = anonymous) on the
        connection ``peer`` while the ``with`` block runs.

        Raises:
            QuotaExceeded: ``too_many_watchers`` (this lobby is full) or
                ``too_many_watches`` (the account's or the connection's share).
        """
        if self.open >= self.max_watches:
            raise QuotaExceeded(
                "too_many_watchers",
                f"this lobby serves at most {self.max_watches} watches at once",
                RETRY_AFTER_S,
                str(self.max_watches),
            )
        if account_id and self.by_account[account_id] >= self.per_account:
            raise QuotaExceeded(
                "too_many_watches",
                f"an account keeps at most {self.per_account} watches open (end one first)",
                RETRY_AFTER_S,
                str(self.per_account),
            )
        if self.by_peer[peer] >= self.per_peer:
            raise QuotaExceeded(
                "too_many_watches",
                f"a connection keeps at most {self.per_peer} watches open (end one first)",
                RETRY_AFTER_S,
                str(self.per_peer),
            )
        self.open += 1
        self.by_account[account_id] += 1
        self.by_peer[peer] += 1
        try:
            yield
        finally:
            self.open -= 1
            for counter, key in ((self.by_account, account_id), (self.by_peer, peer)):
                counter[key] -= 1
                if counter[key] <= 0:
                    del counter[key]

    async def follow(
        self, title: str, game_id: str, from_version: int
    ) -> AsyncIterator[game_pb2.GameUpdate]:
        """The game's updates after ``from_version`` through the game's shared
        channel (opened on first use). Raises the upstream's error."""
        channel = self.channels.get(game_id)
        if channel is None or channel.done:
            channel = self.channels[game_id] = Channel(self, title, game_id)
        channel.subscribers += 1
        try:
            async for update in channel.follow(from_version):
                yield update
        finally:
            channel.subscribers -= 1
            if channel.subscribers == 0 and not channel.done:
                channel.task.cancel()  # its finally forgets it

    def _closed(self, channel: Channel) -> None:
        if self.channels.get(channel.game_id) is channel:
            del self.channels[channel.game_id]

    @property
    def upstreams(self) -> int:
        """Open upstream watches (one per game watched)."""
        return len(self.channels)

    async def close(self) -> None:
        tasks = [channel.task for channel in self.channels.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
