"""The live games of a rules replica: an LRU cache of states, rebuilt by replaying the
game's stream, caught up with entries other replicas appended, rewound when the stream lost
entries, and the archive's answer for a game Redis no longer holds."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import grpc

from services.kernel.engine import (
    Action,
    IllegalAction,
    State,
)
from services.match.controls import parse_clock_settings
from services.match.resignation import (
    ResignableState,
    entry_action,
    policy_of_meta,
)
from services.platform.db import is_unavailable
from services.platform.gamelog import LogEntry
from services.platform.grpc_errors import ServiceError, abort, require_game_id
from services.platform.logging import get_logger
from services.rules.metrics import CACHED, REBUILDS, REWINDS

logger = get_logger("rules")

T = TypeVar("T")


class LiveGame:
    """A cached game: its state, creation record, the stream entry it is at
    (``last``, None at version 0; compared with the stream to notice lost
    entries), a lock serialising calls, and per seat (None: spectators) the state its view
    was last built from and that view (:func:`services.rules.messages.view_of_state`; valid
    while ``state`` is that very object: a change replaces the state, never changes it)."""

    __slots__ = ("state", "meta", "last", "lock", "views")

    def __init__(self, state: State, meta: dict, last: LogEntry | None = None) -> None:
        self.state = state
        self.meta = meta
        self.last = last
        self.lock = asyncio.Lock()
        self.views: dict[int | None, tuple[State, Any]] = {}


class LiveCache:
    """The cache and replay half of :class:`services.rules.servicer.GameRulesServicer`."""

    async def cpu(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the rules pool (on the loop when the pool is off): the loop serves
        other calls meanwhile. Exceptions raised by ``fn`` propagate."""
        if self._pool is None:
            return fn()
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    # ------------------------------------------------------------------ cache

    async def get_live(self, game_id: str, context: grpc.aio.ServicerContext) -> LiveGame:
        """The cached game, rebuilt from its stream on a miss.

        Aborts the call with INVALID_ARGUMENT (bad id) or NOT_FOUND (no such
        game of this title); raises :class:`ServiceError` (FAILED_PRECONDITION,
        DATA_LOSS) for a log that cannot be replayed here.
        """
        live = await self.find_live(game_id, context)
        if live is None:
            await self._not_found(game_id, context)
        return live

    async def _not_found(self, game_id: str, context) -> NoReturn:
        await abort(
            context,
            grpc.StatusCode.NOT_FOUND,
            "unknown_game",
            f"no {self.title} game {game_id!r}",
            game_id=game_id,
        )

    async def archived(self, game_id: str, context):
        """The archived game (``services.archive.store.StoredGame``) for a
        game Redis does not hold; NOT_FOUND when the archive has none either."""
        stored = None if self.archive is None else await self.archive.load(game_id)
        if stored is None:
            await self._not_found(game_id, context)
        return stored

    async def _archived_id(self, game_id: str) -> bool:
        """Whether ``game_id`` is taken by an archived game (of any title): its
        Redis keys may have expired, but the id is not free again. While the
        database is down the answer is False (logged): new games must not
        depend on the durable store (lobby game ids are unique anyway)."""
        if self.archive is None:
            return False
        try:
            return await self.archive.has(game_id)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            logger.warning("archive unavailable; game id not checked against it", game_id=game_id)
            return False

    async def find_live(self, game_id: str, context: grpc.aio.ServicerContext) -> LiveGame | None:
        """:meth:`get_live`, but None when Redis has no such game of this title."""
        await require_game_id(context, game_id)
        live = self._cache.get(game_id)
        if live is not None:
            self._cache.move_to_end(game_id)
            return live
        lock = self._loading.setdefault(game_id, asyncio.Lock())
        try:
            async with lock:  # one rebuild per game, however many calls arrive
                live = self._cache.get(game_id)
                if live is None:
                    meta = await self.gamelog.meta(game_id)
                    if meta is None or meta.get("title") != self.title:
                        return None
                    live = await self._rebuild(game_id, meta)
                    self._remember(game_id, live)
        finally:
            if not lock.locked():
                self._loading.pop(game_id, None)
        return live

    async def _rebuild(self, game_id: str, meta: dict) -> LiveGame:
        if meta["rules_version"] != self.game.rules_version:
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "rules_version_mismatch",
                f"game {game_id!r} was played under {self.title} rules "
                f"{meta['rules_version']}; this server plays {self.game.rules_version}",
                game_rules_version=meta["rules_version"],
                server_rules_version=self.game.rules_version,
            )
        entries = await self.gamelog.entries(game_id)
        state = await asyncio.to_thread(self._replay, game_id, meta, entries)
        REBUILDS.labels(self.title).inc()
        return LiveGame(state, meta, entries[-1] if entries else None)

    def new_state(
        self, num_players: int, seed: int, options, meta: dict | None = None
    ) -> ResignableState:
        """A new game of this title, wrapped to record resignations, timeouts
        and takeovers and to run its clocks (``meta["clock"]``, started at
        ``meta["clock_start_ms"]``). Raises InvalidOptions."""
        meta = meta or {}
        clock = parse_clock_settings(meta["clock"]) if meta.get("clock") else None
        policy = policy_of_meta(self.title, meta) if "resignation" in meta else self.resignation
        return ResignableState(
            self.game.new_state(num_players, seed, options),
            policy,
            clock,
            int(meta.get("clock_start_ms", 0)),
        )

    def parse_entry_action(self, action_json: dict) -> Action:
        """A stored entry's action: a :class:`Resign` (timeout, reclaim,
        pause, resume) or the title's action."""
        return entry_action(self.game, action_json)

    def _replay(self, game_id: str, meta: dict, entries: list[LogEntry]) -> State:
        state = self.new_state(meta["num_players"], meta["seed"], meta["options"], meta)
        self._apply_entries(game_id, state, entries)
        return state

    def _apply_entries(self, game_id: str, state: State, entries: list[LogEntry]) -> None:
        for entry in entries:
            try:
                state.apply(
                    entry.seat,
                    self.parse_entry_action(json.loads(entry.action)),
                    at_ms=entry.at_ms or None,
                )
            except IllegalAction as exc:
                logger.error(
                    "stored log does not replay",
                    game_id=game_id,
                    version=entry.version,
                    code=exc.code,
                    reason=exc.reason,
                )
                raise ServiceError(
                    grpc.StatusCode.DATA_LOSS,
                    "log_does_not_replay",
                    f"game {game_id!r} cannot be rebuilt: its entry {entry.version} is refused",
                    version=entry.version,
                ) from None

    def _remember(self, game_id: str, live: LiveGame) -> None:
        self._cache[game_id] = live
        self._cache.move_to_end(game_id)
        while len(self._cache) > self.max_cached:
            old_id, old = next(iter(self._cache.items()))
            if old.lock.locked():
                break
            del self._cache[old_id]
        CACHED.labels(self.title).set(len(self._cache))

    async def catch_up(self, game_id: str, live: LiveGame) -> None:
        """Apply the entries other replicas appended since ``live`` was built;
        if the stream no longer holds the entry ``live`` is at (lost writes),
        :meth:`rewind`. A finished game whose keys are gone altogether (expired
        after the archive took it) is left as it is. Call with ``live.lock`` held."""
        version = live.state.version
        entries = await self.gamelog.entries(game_id, max(version - 1, 0))
        if version:
            if not entries or entries[0] != live.last:
                if (
                    not entries
                    and live.state.is_terminal()
                    and await self.gamelog.meta(game_id) is None
                ):
                    return  # a finished game whose keys expired once archived: nothing lost
                await self.rewind(game_id, live)
                return
            entries = entries[1:]
        if entries:
            state = live.state.clone()
            self._apply_entries(game_id, state, entries)
            live.state, live.last = state, entries[-1]

    async def rewind(self, game_id: str, live: LiveGame) -> None:
        """The stream lost entries the cache had (a failover to a lagging
        replica, a crash with ``appendfsync everysec``): rebuild ``live`` from
        the stream, drop the stored answers of the lost moves (so their
        retries apply afresh) and announce ``game_rewound`` (``version``,
        ``active``, ``lost_from``: the version the cache had) on the lifecycle
        stream, so bots and clients read the game again. Call with
        ``live.lock`` held."""
        lost_from = live.state.version
        entries = await self.gamelog.entries(game_id)
        state = await asyncio.to_thread(self._replay, game_id, live.meta, entries)
        live.state, live.last = state, entries[-1] if entries else None
        _, dropped = await self.gamelog.repair_after_loss(game_id)
        REWINDS.labels(self.title).inc()
        logger.warning(
            "game stream lost entries; rebuilt from the stream",
            game_id=game_id,
            lost_from=lost_from,
            version=state.version,
            answers_dropped=dropped,
        )
        await self.gamelog.announce(
            {
                "type": "game_rewound",
                "game_id": game_id,
                "title": self.title,
                "version": state.version,
                "active": list(state.active_seats()),
                "lost_from": lost_from,
            }
        )
