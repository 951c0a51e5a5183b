"""The ``GameRules`` gRPC service, generic over the engine contract.

Each title's ``services/<title>/service/server.py`` is a thin adapter that
starts this servicer for its title. The servicer keeps no state that is not in
Redis: in-memory states are an LRU cache that any replica rebuilds by
replaying the game's stream (:mod:`services.common.gamelog`), and that
catches up with entries other replicas appended before every call.

A move is applied to a *clone* of the cached state; the clone replaces the
cached state only once the compare-and-set append succeeded. So a refused,
stale, duplicate or failed append leaves the cache exactly as the log is.

Errors (gRPC status codes; the rule's machine code is the ``reason`` of the
``google.rpc.ErrorInfo`` detail, see :mod:`services.common.grpc_errors`):

* INVALID_ARGUMENT: malformed request, options or action; an idempotency key
  reused for a different request; a negative ``expected_version`` (``bad_version``);
* FAILED_PRECONDITION: the rules forbid the action now (the message is the
  rule's reason); the result of a running game; a game stored under another
  rules version;
* ABORTED: ``expected_version`` is stale (behind the game); a watch of a game
  whose stream lost entries (``game_rewound``, see :meth:`GameRulesServicer.rewind`);
* OUT_OF_RANGE: ``expected_version`` ahead of the game (``future_version``); a
  watch from beyond the game's current version;
* NOT_FOUND: unknown game id (neither in Redis nor in the archive);
* ALREADY_EXISTS: a create with a game id that is taken (in Redis or in the archive);
* RESOURCE_EXHAUSTED: too many open watches on this replica;
* UNAVAILABLE: Redis cannot be reached; DATA_LOSS: a stored log no longer
  replays; INTERNAL: a bug (logged with an incident id).

In every error case the stream and the state are unchanged.

The rules' CPU work (``apply``, ``legal_actions``, ``view`` and the building of the answer
from them) of a title in ``rules_pool_titles`` (1894) runs on a small bounded thread pool
(``rules_workers`` threads), never on the event loop: a dear call (1894's route search,
~10 ms) then no longer stalls every other call's Redis round trips and watches. The per-game
lock still serialises a game's calls; the GIL means the pool buys responsiveness, not
parallel rules (``benchmarks/bench_rules_loop.py``; docs/benchmarks.md, "Rules off the event
loop"). The other titles' calls take tens of microseconds (a few milliseconds at worst), less
than the hop to a thread and back, so they run on the loop (docs/benchmarks.md, bench_gateway).

A finished game that Redis no longer holds (it expires after being archived)
is answered from the archive by ``GetView``, ``WatchGame``, ``GetResult``,
``ListLegalActions`` and ``SubmitAction`` when the servicer has an ``archive``
(:class:`services.archive.fallback.ArchiveFallback`, which documents the
answers).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import NoReturn, TypeVar

import grpc
from google.protobuf import json_format
from prometheus_client import Counter, Gauge, Histogram

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.clocks.controls import InvalidClock, parse_clock_json, parse_clock_settings
from services.clocks.timesource import WALL, TimeSource
from services.common import bounds, protomap
from services.common.botcatalogue import POLICY_NAMES, policy_available
from services.common.bounds import FieldBounds
from services.common.db import is_unavailable
from services.common.engine import (
    Action,
    IllegalAction,
    InvalidOptions,
    MalformedAction,
    State,
    canonical_json,
)
from services.common.gamelog import GameLog, LogEntry, StreamRewound
from services.common.grpc_errors import RETRY_AFTER_S, ServiceError, abort, require_game_id
from services.common.logging import get_logger
from services.common.registry import get_game
from services.common.resignation import (
    NO_SEAT,
    Pause,
    Reclaim,
    Resign,
    ResignableState,
    ResignationPolicy,
    Resume,
    Timeout,
    entry_action,
    entry_label,
    is_seat_entry,
    policy_of_meta,
    resignation_policy,
)
from services.common.results import clocks_proto, result_proto, takeovers_proto

logger = get_logger("rules")

ACTIONS = Counter(
    "roundhouse_rules_actions_total", "Submitted actions by outcome", ["title", "outcome"]
)
SUBMIT_SECONDS = Histogram(
    "roundhouse_rules_submit_seconds",
    "SubmitAction latency",
    ["title"],
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
)
CACHED = Gauge("roundhouse_rules_cached_games", "Live game states held in memory", ["title"])
REBUILDS = Counter("roundhouse_rules_rebuilds_total", "Games rebuilt from their stream", ["title"])
WATCHERS = Gauge("roundhouse_rules_watchers", "Open WatchGame streams", ["title"])
REWINDS = Counter(
    "roundhouse_rules_rewinds_total", "Games whose stream lost entries the cache had", ["title"]
)


T = TypeVar("T")

MAX_IDEMPOTENCY_KEY = 200
"""Longest idempotency key accepted (characters)."""


def view_response(
    title: str, info: game_pb2.GameInfo, state: ResignableState, seat: int | None, now_ms: int
) -> game_pb2.GetViewResponse:
    """``GetView``'s answer for ``state`` seen by ``seat`` (None: spectators), clocks
    as of ``now_ms``; the live game's and the archived one's (``services/archive``)."""
    game = get_game(title)
    view = state.view(seat)
    response = game_pb2.GetViewResponse(
        info=info,
        version=state.version,
        active_seats=list(state.active_seats()),
        finished=state.is_terminal(),
        view=protomap.view_to_proto(title, view),
        view_json=canonical_json(view),
        resigned_seats=list(state.resigned),
        paused=state.paused,
        takeovers=takeovers_proto([t.to_json() for t in state.takeovers]),
        seat_summaries=game.summarize_view(view, state.num_players),
    )
    if state.clocks is not None:
        response.clocks.extend(clocks_proto(state.clocks.to_json(), now_ms, state.clocks))
    if state.is_terminal():
        response.result.CopyFrom(result_proto(state.result_json()))
    return response


class _Live:
    """A cached game: its state, creation record, the stream entry it is at
    (``last``, None at version 0; compared with the stream to notice lost
    entries) and a lock serialising calls."""

    __slots__ = ("state", "meta", "last", "lock")

    def __init__(self, state: State, meta: dict, last: LogEntry | None = None) -> None:
        self.state = state
        self.meta = meta
        self.last = last
        self.lock = asyncio.Lock()


def update_proto(title: str, entry: LogEntry) -> game_pb2.GameUpdate:
    """A stream entry as the ``GameUpdate`` message (a resignation has no typed
    ``action``, only ``action_json`` ``{"type":"resign"}``)."""
    action = json.loads(entry.action)
    update = game_pb2.GameUpdate(
        version=entry.version,
        seat=entry.seat,
        action=None if is_seat_entry(action) else protomap.action_to_proto(title, action),
        action_json=entry.action,
        events=[protomap.struct(e) for e in json.loads(entry.events)],
        active_seats=list(entry.active),
        finished=entry.finished,
        at_ms=entry.at_ms,
        label=entry.label,
    )
    if entry.clock:
        update.clocks.extend(clocks_proto(json.loads(entry.clock), entry.at_ms))
    if entry.result:
        update.result.CopyFrom(result_proto(json.loads(entry.result)))
    return update


def legal_response(
    title: str, state: State, seat: int, game=None
) -> game_pb2.ListLegalActionsResponse:
    """``ListLegalActions``'s answer for ``seat`` on ``state``: every legal entry, typed and as
    JSON, with its range and its label (``Game.describe_all``)."""
    game = game or get_game(title)
    legal = state.legal_actions(seat)
    response = protomap.legal_to_proto(title, [a.to_json() for a in legal], state.version)
    response.labels.extend(game.describe_all(state, legal))
    return response


def stored_moves(title: str, state: ResignableState, meta: dict, game=None) -> dict[str, str]:
    """The legal moves stored with an entry (``services.common.gamelog``, ``P:game:{T}:G:moves``):
    ``version``, ``active`` and, for each active seat its account plays (not a hosted bot's
    seat, not taken over by one: bots ask the rules service themselves), the base64 of its
    :func:`legal_response`. Empty for a finished game (nothing stored)."""
    if state.is_terminal():
        return {}
    active = list(state.active_seats())
    fields = {"version": str(state.version), "active": json.dumps(active)}
    hosted = meta.get("bots", {})
    for seat in active:
        if str(seat) in hosted or state.taken_over(seat):
            continue
        answer = legal_response(title, state, seat, game).SerializeToString()
        fields[str(seat)] = base64.b64encode(answer).decode()
    return fields


def fingerprint(seat: int, expected_version: int, action: Action) -> str:
    """What an idempotency key stands for: (seat, expected version, action)."""
    text = f"{seat}:{expected_version}:{canonical_json(action.to_json())}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class GameRulesServicer(game_pb2_grpc.GameRulesServicer):
    """``roundhouse.v1.GameRules`` for one title.

    Args:
        title: the registered short name this server plays.
        gamelog: the Redis game log (its client must be bounded: see ``serve``).
        watch_log: the game log used by ``WatchGame`` (a separate client, so
            blocking reads never take the connections other calls need).
        max_cached: live states kept in memory (least recently used are dropped).
        max_watchers: open ``WatchGame`` streams allowed on this replica.
        resignation: what ``Resign`` does in this title
            (:func:`services.common.resignation.resignation_policy`).
        archive: answers for finished games Redis no longer holds
            (:class:`services.archive.fallback.ArchiveFallback`); None = such
            games are NOT_FOUND.
        time: the one clock log entries are stamped with (``at_ms``) and
            timeouts are judged by (:mod:`services.clocks.timesource`).
        workers: threads that run the rules' CPU work off the event loop (``apply``,
            ``legal_actions``, ``view``); 0 = on the loop (the benchmark's baseline).
    """

    def __init__(
        self,
        title: str,
        gamelog: GameLog,
        max_cached: int = 5000,
        watch_log: GameLog | None = None,
        max_watchers: int = 500,
        resignation: ResignationPolicy | None = None,
        archive=None,
        time: TimeSource = WALL,
        workers: int = 2,
    ) -> None:
        self.title = title
        self._pool = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"rules-{title}")
            if workers > 0
            else None
        )
        self.time = time
        self.archive = archive
        self.game = get_game(title)
        self.resignation = resignation or resignation_policy(title)
        self.gamelog = gamelog
        self.watch_log = watch_log or gamelog
        self.max_cached = max_cached
        self.max_watchers = max_watchers
        self.watchers = 0
        self._cache: OrderedDict[str, _Live] = OrderedDict()
        self._loading: dict[str, asyncio.Lock] = {}

    async def cpu(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the rules pool (on the loop when the pool is off): the loop serves
        other calls meanwhile. Exceptions raised by ``fn`` propagate."""
        if self._pool is None:
            return fn()
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    # ------------------------------------------------------------------ cache

    async def get_live(self, game_id: str, context: grpc.aio.ServicerContext) -> _Live:
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
            return await self.archive.store.has(game_id)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            logger.warning("archive unavailable; game id not checked against it", game_id=game_id)
            return False

    async def find_live(self, game_id: str, context: grpc.aio.ServicerContext) -> _Live | None:
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

    async def _rebuild(self, game_id: str, meta: dict) -> _Live:
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
        return _Live(state, meta, entries[-1] if entries else None)

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

    def _remember(self, game_id: str, live: _Live) -> None:
        self._cache[game_id] = live
        self._cache.move_to_end(game_id)
        while len(self._cache) > self.max_cached:
            old_id, old = next(iter(self._cache.items()))
            if old.lock.locked():
                break
            del self._cache[old_id]
        CACHED.labels(self.title).set(len(self._cache))

    async def catch_up(self, game_id: str, live: _Live) -> None:
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

    async def rewind(self, game_id: str, live: _Live) -> None:
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

    def info(self, game_id: str, meta: dict) -> game_pb2.GameInfo:
        """The public ``GameInfo`` of a game from its creation record (no seed)."""
        return game_pb2.GameInfo(
            game_id=game_id,
            title=self.title,
            rules_version=meta["rules_version"],
            num_players=meta["num_players"],
            options_json=canonical_json(meta["options"]),
            owner=meta.get("owner", ""),
        )

    async def _seat(self, seat: int, live: _Live, context) -> int:
        if not 0 <= seat < live.state.num_players:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_seat",
                f"seat must be 0..{live.state.num_players - 1}, got {seat}",
                seat=seat,
                min_seat=0,
                max_seat=live.state.num_players - 1,
            )
        return seat

    # ------------------------------------------------------------------ building blocks

    def _meta(self, num_players: int, seed: int, options: dict, owner: str = "") -> dict:
        return {
            "title": self.title,
            "rules_version": self.game.rules_version,
            "num_players": num_players,
            "seed": seed,
            "options": options,
            "owner": owner,
            "created_at": time.time(),
            # replays (the archive's too) apply the rule the game was played under
            "resignation": {
                "mode": self.resignation.mode,
                "takeover_policy": self.resignation.takeover_policy,
            },
        }

    def label(self, before: State, seat: int, action: Action) -> str:
        """``action`` in words (``Game.describe``) on ``before``, the state it is applied
        to; a resignation is ``"Seat N resigns"`` (a timeout, reclaim, pause, resume alike)."""
        return entry_label(self.game, before, seat, action)

    def _entry(
        self, state: State, seat: int, action: Action, events: list, label: str = ""
    ) -> LogEntry:
        finished = state.is_terminal()
        clocks = getattr(state, "clocks", None)
        return LogEntry(
            version=state.version,
            seat=seat,
            action=canonical_json(action.to_json()),
            events=canonical_json(events),
            active=tuple(state.active_seats()),
            finished=finished,
            result=canonical_json(state.result_json()) if finished else "",
            at_ms=getattr(state, "at_ms", 0),
            clock=canonical_json(clocks.to_json()) if clocks is not None else "",
            label=label,
        )

    def _lifecycle(self, game_id: str, state: State, result_json: str = "") -> dict:
        """The lifecycle event of ``state``: ``type``, ``game_id``, ``title``,
        ``version``, ``active``; timed games add ``deadlines`` (JSON seat ->
        Unix ms of each running clock), ``clock_low_s`` and ``timeout_policy``; games with seats a
        bot took over add ``takeover`` (JSON seat -> policy)."""
        finished = state.is_terminal()
        event = {
            "type": "game_finished" if finished else "turn",
            "game_id": game_id,
            "title": self.title,
            "version": state.version,
            "active": list(state.active_seats()),
        }
        clocks = getattr(state, "clocks", None)
        if clocks is not None:
            running = {} if finished else clocks.deadlines()
            event["deadlines"] = {str(k): v for k, v in running.items()}
            event["clock_low_s"] = state.settings.clock_low_s
            event["timeout_policy"] = state.settings.timeout_policy
        bots = state.bot_seats() if hasattr(state, "bot_seats") else {}
        if bots:
            event["takeover"] = {str(k): v for k, v in bots.items()}
        if state.version == 0:
            event["type"] = "game_created"
        if finished:
            event["result"] = result_json
            event["finished_at"] = repr(time.time())  # seconds since the epoch (the archive)
        return event

    async def store_game(
        self,
        game_id: str,
        num_players: int,
        seed: int,
        options: dict,
        log: list[tuple[int, Action]],
        extra_meta: dict | None = None,
    ) -> _Live | None:
        """Store a game given whole, e.g. an imported one: replay ``log`` (every
        check on), then write its creation record and its stream in one
        transaction and cache it. Returns None if ``game_id`` is taken.

        Raises:
            IllegalAction: an entry of the log is refused.
            InvalidOptions: bad player count or options.
        """

        def replay() -> tuple[State, list[LogEntry]]:
            state = self.new_state(num_players, seed, options)
            entries = []
            for seat, action in log:
                label = self.label(state, seat, action)
                events = state.apply(seat, action)
                entries.append(self._entry(state, seat, action, events, label))
            return state, entries

        state, entries = await asyncio.to_thread(replay)
        meta = self._meta(
            num_players, seed, self.game.parse_options(options).model_dump(mode="json")
        )
        meta.update(extra_meta or {})
        lifecycle = [
            {
                "type": "game_created",
                "game_id": game_id,
                "title": self.title,
                "version": 0,
                "active": [],
            }
        ]
        if state.is_terminal():
            lifecycle.append(self._lifecycle(game_id, state, entries[-1].result))
        if await self._archived_id(game_id) or not await self.gamelog.create_with_log(
            game_id, meta, entries, lifecycle
        ):
            return None
        live = _Live(state, meta, entries[-1] if entries else None)
        self._remember(game_id, live)
        return live

    # ------------------------------------------------------------------ calls

    async def CreateGame(self, request, context):
        if request.title != self.title:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "wrong_title",
                f"this server plays {self.title!r}, not {request.title!r}",
            )
        game_id = await require_game_id(context, request.game_id or uuid.uuid4().hex)
        try:
            clock = parse_clock_json(request.clock_json)
        except InvalidClock as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason)
        meta = self._meta(request.num_players, 0, {}, request.owner)
        bots = dict(request.bot_policies)
        for seat in sorted(bots):
            if not 0 <= seat < request.num_players:
                await abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "bad_seat",
                    f"bot_policies names seat {seat}; seats are 0..{request.num_players - 1}",
                    seat=seat,
                    min_seat=0,
                    max_seat=request.num_players - 1,
                )
        for seat, policy in sorted(bots.items()):
            if not policy_available(policy, self.title):
                await abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "unknown_policy" if policy not in POLICY_NAMES else "policy_unavailable",
                    f"bot_policies[{seat}]: {policy!r} is not a hosted policy that plays "
                    f"{self.title}; known: {', '.join(POLICY_NAMES)}",
                    seat=seat,
                )
        if bots:  # the seats hosted bots play: the dispatcher reads them here
            meta["bots"] = {str(seat): policy for seat, policy in sorted(bots.items())}
        if clock.timed or clock.timeout_policy != "forfeit":
            meta["clock"], meta["clock_start_ms"] = clock.to_json(), self.time.now_ms()
        try:
            options = self.game.parse_options_json(request.options_json)
            seed = request.seed if request.HasField("seed") else secrets.randbits(63)
            state = self.new_state(request.num_players, seed, options, meta)
        except InvalidOptions as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad_options", str(exc))
        meta["seed"], meta["options"] = seed, options.model_dump(mode="json")
        moves = await self.cpu(lambda: stored_moves(self.title, state, meta, self.game))
        if await self._archived_id(game_id) or not await self.gamelog.create(
            game_id, meta, self._lifecycle(game_id, state), moves
        ):
            await abort(
                context,
                grpc.StatusCode.ALREADY_EXISTS,
                "game_exists",
                f"game {game_id!r} already exists",
                game_id=game_id,
            )
        self._remember(game_id, _Live(state, meta))
        logger.info("game created", game_id=game_id, title=self.title, players=request.num_players)
        return game_pb2.CreateGameResponse(
            info=self.info(game_id, meta), version=0, active_seats=list(state.active_seats())
        )

    async def GetView(self, request, context):
        live = await self.find_live(request.game_id, context)
        if live is None:
            stored = await self.archived(request.game_id, context)
            seat = request.seat if request.HasField("seat") else None
            return await self.archive.view(stored, seat)
        seat = None
        if request.HasField("seat"):
            seat = await self._seat(request.seat, live, context)
        async with live.lock:
            await self.catch_up(request.game_id, live)
            state = live.state
            now_ms = self.time.now_ms()
            info = self.info(request.game_id, live.meta)
            return await self.cpu(lambda: view_response(self.title, info, state, seat, now_ms))

    async def ListLegalActions(self, request, context):
        live = await self.find_live(request.game_id, context)
        if live is None:
            stored = await self.archived(request.game_id, context)
            return self.archive.legal_actions(stored, request.seat)
        seat = await self._seat(request.seat, live, context)
        async with live.lock:
            await self.catch_up(request.game_id, live)
            state = live.state

            response = await self.cpu(lambda: legal_response(self.title, state, seat, self.game))
        return response

    async def SubmitAction(self, request, context):
        started = time.perf_counter()
        try:
            return await self._submit(request, context)
        finally:
            SUBMIT_SECONDS.labels(self.title).observe(time.perf_counter() - started)

    async def _submit(self, request, context):
        game_id = request.game_id
        live = await self.find_live(game_id, context)
        if live is None:
            stored = await self.archived(game_id, context)  # NOT_FOUND without archive
            self.archive.refuse_action(stored, request.seat)
        seat = await self._seat(request.seat, live, context)
        try:
            which = request.WhichOneof("move")
            if which == "action":
                action_json = protomap.action_from_proto(request.action, self.title)
            elif which == "action_json":
                action_json = request.action_json
            else:
                raise MalformedAction("missing_action", "the request carries no action")
            action = self.game.parse_action(action_json)
        except (MalformedAction, json_format.ParseError) as exc:
            ACTIONS.labels(self.title, "malformed").inc()
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                getattr(exc, "code", "bad_action"),
                str(exc),
            )
        if len(request.idempotency_key) > MAX_IDEMPOTENCY_KEY:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_idempotency_key",
                f"idempotency_key is at most {MAX_IDEMPOTENCY_KEY} characters, "
                f"got {len(request.idempotency_key)}",
                max_length=MAX_IDEMPOTENCY_KEY,
                length=len(request.idempotency_key),
            )
        key = f"{seat}:{request.idempotency_key}" if request.idempotency_key else ""
        print_ = fingerprint(seat, request.expected_version, action)
        # No look-up of the key's stored answer before the lock: a retry of an applied move
        # is at an older version (found below, on the stale path), and any other reuse of
        # the key is answered by the append script, which checks the key atomically; a read
        # here would cost every move one more Redis round trip.
        async with live.lock:
            if request.expected_version != live.state.version:
                await self.catch_up(game_id, live)  # also notices a stream that lost entries
            if request.expected_version != live.state.version:
                if key:  # a concurrent twin of this request may have just won
                    prior = await self.gamelog.answer(game_id, key)
                    if prior is not None:
                        return await self._repeat(prior, print_, context)
                await self._stale(context, request.expected_version, live.state.version)
            if live.state.taken_over(seat) and _caller_service() == "lobby":
                await abort(
                    context,
                    grpc.StatusCode.PERMISSION_DENIED,
                    "seat_taken_over",
                    f"seat {seat} is played by a hosted bot since its timeout or resignation",
                    seat=seat,
                )
            before, now_ms = live.state, self.time.now_ms()

            def move() -> tuple[State, list, LogEntry, dict[str, str]]:
                nxt = before.clone()  # the cache changes only once the log has the move
                events = nxt.apply(seat, action, at_ms=now_ms)
                label = self.label(before, seat, action)
                moves = stored_moves(self.title, nxt, live.meta, self.game)
                return nxt, events, self._entry(nxt, seat, action, events, label), moves

            try:
                nxt, events, entry, moves = await self.cpu(move)
            except MalformedAction as exc:
                ACTIONS.labels(self.title, "malformed").inc()
                await abort(context, grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason)
            except IllegalAction as exc:
                version = live.state.version
                await self.catch_up(game_id, live)  # the refusal may rest on lost moves
                if live.state.version != version:
                    await self._stale(context, request.expected_version, live.state.version)
                ACTIONS.labels(self.title, "illegal").inc()
                await abort(context, grpc.StatusCode.FAILED_PRECONDITION, exc.code, exc.reason)
            answer = canonical_json(
                {
                    "version": entry.version,
                    "events": events,
                    "active": list(entry.active),
                    "finished": entry.finished,
                    "fingerprint": print_,
                }
            )
            outcome = await self.gamelog.append(
                game_id,
                request.expected_version,
                entry,
                key,
                answer,
                self._lifecycle(game_id, nxt, entry.result),
                moves,
            )
            if outcome.status == "ok":
                live.state, live.last = nxt, entry
            elif outcome.status == "duplicate":
                return await self._repeat(outcome.answer, print_, context)
            else:  # another replica appended first: catch up, then tell the caller
                await self.catch_up(game_id, live)
                await self._stale(context, request.expected_version, outcome.version)
        ACTIONS.labels(self.title, "applied").inc()
        return _answer_proto(answer)

    async def Resign(self, request, context):
        """Append the seat's resignation (``{"type": "resign"}``) at the game's
        current version, whoever is to act; the title's policy decides whether
        the game ends (:mod:`services.common.resignation`). FAILED_PRECONDITION
        ``game_over`` / ``seat_resigned``; the log is unchanged then."""
        game_id = request.game_id
        live = await self.get_live(game_id, context)
        seat = await self._seat(request.seat, live, context)
        action = Resign()
        async with live.lock:
            nxt, _, _ = await self._append_at_current(
                game_id,
                live,
                seat,
                action,
                "resigned",
                "the game kept moving while the resignation was recorded; try again",
                context,
            )
        ACTIONS.labels(self.title, "resigned").inc()
        logger.info("seat resigned", game_id=game_id, seat=seat, game_ends=nxt.is_terminal())
        return game_pb2.ResignResponse(
            version=nxt.version,
            finished=nxt.is_terminal(),
            active_seats=list(nxt.active_seats()),
            resigned_seats=list(nxt.resigned),
        )

    async def Timeout(self, request, context):
        """A seat's time ran out at ``expected_version`` (the clock keeper).
        Appended with compare-and-set and the idempotency key
        ``timeout:<version>`` of that seat, so a move and a timeout racing at
        the deadline settle on exactly one, and a repeated timeout is answered
        with the first answer. Errors: ABORTED ``stale_version`` (a move won),
        FAILED_PRECONDITION ``not_timed_out`` (metadata ``deadline_ms``),
        ``game_over``, ``table_paused``, ``no_clock``."""
        game_id = request.game_id
        live = await self.find_live(game_id, context)
        if live is None:  # finished and archived: nothing to time out
            await self.archived(game_id, context)
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "game_over",
                "the game is over; no more actions are accepted",
            )
        seat = await self._seat(request.seat, live, context)
        action = Timeout()
        key = f"{seat}:timeout:{request.expected_version}"
        print_ = fingerprint(seat, request.expected_version, action)
        prior = await self.gamelog.answer(game_id, key)
        if prior is not None:
            return await self._repeat(prior, print_, context)
        async with live.lock:
            await self.catch_up(game_id, live)
            if live.state.is_terminal():
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "game_over",
                    "the game is over; no more actions are accepted",
                    current_version=live.state.version,
                )
            if request.expected_version != live.state.version:
                await self._stale(context, request.expected_version, live.state.version)
            nxt = live.state.clone()
            now = self.time.now_ms()
            try:
                events = nxt.apply(seat, action, at_ms=now)
            except IllegalAction as exc:
                extra = {}
                clocks = live.state.clocks
                if clocks is not None and clocks.deadline_ms(seat) is not None:
                    extra["deadline_ms"] = clocks.deadline_ms(seat)
                await abort(
                    context, grpc.StatusCode.FAILED_PRECONDITION, exc.code, exc.reason, **extra
                )
            entry = self._entry(nxt, seat, action, events, self.label(nxt, seat, action))
            answer = canonical_json(
                {
                    "version": entry.version,
                    "events": events,
                    "active": list(entry.active),
                    "finished": entry.finished,
                    "fingerprint": print_,
                }
            )
            lifecycle = self._lifecycle(game_id, nxt, entry.result)
            lifecycle["timed_out"] = seat
            moves = await self.cpu(lambda: stored_moves(self.title, nxt, live.meta, self.game))
            outcome = await self.gamelog.append(
                game_id, request.expected_version, entry, key, answer, lifecycle, moves
            )
            if outcome.status == "duplicate":
                return await self._repeat(outcome.answer, print_, context)
            if outcome.status != "ok":
                await self.catch_up(game_id, live)
                await self._stale(context, request.expected_version, outcome.version)
            live.state, live.last = nxt, entry
        ACTIONS.labels(self.title, "timeout").inc()
        logger.info("seat timed out", game_id=game_id, seat=seat, version=entry.version)
        return _answer_proto(answer)

    async def SetPaused(self, request, context):
        """Pause or resume the game's clocks (an entry of seat -1 at the
        current version). FAILED_PRECONDITION ``already_paused``,
        ``not_paused``, ``no_clock``, ``game_over``."""
        action = Pause() if request.paused else Resume()
        return await self._table_entry(request.game_id, NO_SEAT, action, context)

    async def Reclaim(self, request, context):
        """The seat's player takes the seat back from its takeover bot
        (``reclaim`` tables, within the window). FAILED_PRECONDITION
        ``reclaim_not_allowed``, ``not_taken_over``, ``reclaim_window_closed``."""
        live = await self.get_live(request.game_id, context)
        seat = await self._seat(request.seat, live, context)
        answer = await self._table_entry(request.game_id, seat, Reclaim(), context)
        return answer

    async def _append_at_current(
        self,
        game_id: str,
        live: _Live,
        seat: int,
        action: Action,
        lifecycle_key: str,
        stale_reason: str,
        context,
    ) -> tuple[State, LogEntry, list]:
        """Apply ``action`` (a resignation or a table entry) at the game's current version and
        append it, catching up and trying again (5 times) when another replica appends in
        between; the caller holds ``live.lock``. The lifecycle event names the seat under
        ``lifecycle_key``. Returns the new state, its entry and the events.

        Aborts: FAILED_PRECONDITION with the rule's reason if the action is refused; ABORTED
        ``stale_version`` (``stale_reason``) if the game kept moving; the log is unchanged."""
        for _ in range(5):
            await self.catch_up(game_id, live)
            nxt = live.state.clone()
            try:
                events = nxt.apply(seat, action, at_ms=self.time.now_ms())
            except IllegalAction as exc:
                await abort(context, grpc.StatusCode.FAILED_PRECONDITION, exc.code, exc.reason)
            entry = self._entry(nxt, seat, action, events, self.label(nxt, seat, action))
            lifecycle = self._lifecycle(game_id, nxt, entry.result)
            lifecycle[lifecycle_key] = seat
            moves = await self.cpu(partial(stored_moves, self.title, nxt, live.meta, self.game))
            outcome = await self.gamelog.append(
                game_id, live.state.version, entry, "", "", lifecycle, moves
            )
            if outcome.status == "ok":
                live.state, live.last = nxt, entry
                return nxt, entry, events
        await abort(
            context,
            grpc.StatusCode.ABORTED,
            "stale_version",
            stale_reason,
            current_version=live.state.version,
        )
        raise AssertionError("abort raises")  # for the type checker: abort never returns

    async def _table_entry(self, game_id: str, seat: int, action: Action, context):
        """Append a non-move entry at the game's current version (retried
        when another replica appends in between)."""
        live = await self.get_live(game_id, context)
        async with live.lock:
            _, entry, events = await self._append_at_current(
                game_id,
                live,
                seat,
                action,
                action.TYPE,
                "the game kept moving meanwhile; try again",
                context,
            )
        logger.info("table entry", game_id=game_id, seat=seat, type=action.TYPE)
        return game_pb2.SubmitActionResponse(
            version=entry.version,
            events=[protomap.struct(e) for e in events],
            active_seats=list(entry.active),
            finished=entry.finished,
        )

    async def _repeat(self, prior: str, print_: str, context):
        """The stored answer for a repeated idempotency key, if it stands for
        the same request; INVALID_ARGUMENT if the key was used for another."""
        if json.loads(prior).get("fingerprint") != print_:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "idempotency_key_reused",
                "this idempotency key was already used for a different request",
            )
        ACTIONS.labels(self.title, "duplicate").inc()
        return _answer_proto(prior)

    async def _stale(self, context, expected: int, current: int):
        """ABORTED ``stale_version`` for a version the game has left behind;
        OUT_OF_RANGE ``future_version`` for one it has not reached (a client
        bug, not a race: the version it saw cannot be ahead of the log);
        INVALID_ARGUMENT ``bad_version`` for a negative one (versions count from 0)."""
        if expected < 0:
            label, code, reason = "malformed", grpc.StatusCode.INVALID_ARGUMENT, "bad_version"
            why = f"expected_version {expected} is negative: versions count from 0 (send the "
            why += "version you last saw)"
        elif expected > current:
            label, code, reason = "future", grpc.StatusCode.OUT_OF_RANGE, "future_version"
            why = f"expected_version {expected} is ahead of the game: it is at version "
            why += f"{current} (send the version you last saw)"
        else:
            label, code, reason = "stale", grpc.StatusCode.ABORTED, "stale_version"
            why = f"expected_version {expected} is stale: the game is at version {current}"
        ACTIONS.labels(self.title, label).inc()
        await abort(context, code, reason, why, expected_version=expected, current_version=current)

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

    async def GetResult(self, request, context):
        live = await self.find_live(request.game_id, context)
        if live is None:
            stored = await self.archived(request.game_id, context)  # NOT_FOUND without archive
            return self.archive.result(stored)
        async with live.lock:
            await self.catch_up(request.game_id, live)
            if not live.state.is_terminal():
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "game_not_over",
                    f"game {request.game_id!r} is still running",
                    current_version=live.state.version,
                )
            result = live.state.result_json()
        return game_pb2.GetResultResponse(
            info=self.info(request.game_id, live.meta),
            result=result_proto(result),
            seed=str(live.meta["seed"]),
        )


def _caller_service() -> str:
    """The internal service making this call (``lobby``, ``bots``, ...), or ``""``."""
    from services.accounts.auth import current_principal

    principal = current_principal()
    return getattr(principal, "service", "") or "" if principal is not None else ""


def _answer_proto(answer: str) -> game_pb2.SubmitActionResponse:
    a = json.loads(answer)
    return game_pb2.SubmitActionResponse(
        version=a["version"],
        events=[protomap.struct(e) for e in a["events"]],
        active_seats=a["active"],
        finished=a["finished"],
    )


Extra = Callable[["GameRulesServicer", grpc.aio.Server], str]
"""Adds one more servicer beside GameRules (it may use the GameRules servicer)
and returns its full service name (for health and reflection)."""


async def serve(
    title: str,
    address: str | None = None,
    metrics_port: int | None = None,
    extras: Sequence[Extra] = (),
) -> None:
    """Run the rules service of ``title`` (plus ``extras``) until SIGTERM/SIGINT.

    The address defaults to ``bind_host`` and the port of
    ``rules_addresses[title]`` from the settings. Calls share one bounded Redis
    connection pool; watches use a second one sized ``max_watchers``.
    """
    from services.common.logging import configure_logging
    from services.common.server import redis_client, service_server
    from services.common.settings import get_settings, listen_address

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    if address is None:
        address = listen_address(settings, settings.rules_addresses[title])
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    watch_client = redis_client(
        settings.redis_url, settings.max_watchers + 1, cluster=settings.redis_cluster
    )
    # finished games Redis no longer holds come from the archive (lazy import:
    # the generic server does not depend on the archive unless it serves)
    from services.archive.fallback import ArchiveFallback
    from services.archive.store import ArchiveStore
    from services.common.db import create_engine, database_url, is_sqlite, upgrade_async

    url = database_url(settings)
    if is_sqlite(url):  # embedded mode: the process that needs the store migrates it
        await upgrade_async(url)
    engine = create_engine(url, settings)
    servicer = GameRulesServicer(
        title,
        GameLog.for_settings(client, settings),
        settings.max_cached_games,
        watch_log=GameLog.for_settings(watch_client, settings),
        max_watchers=settings.max_watchers,
        resignation=resignation_policy(title, settings.resignation),
        archive=ArchiveFallback(title, ArchiveStore(engine), settings.archive_cached_games),
        workers=settings.rules_workers if title in settings.rules_pool_titles else 0,
    )
    names = [game_pb2.DESCRIPTOR.services_by_name["GameRules"].full_name]

    def add(server: grpc.aio.Server) -> None:
        game_pb2_grpc.add_GameRulesServicer_to_server(servicer, server)
        names.extend(extra(servicer, server) for extra in extras)

    async def close() -> None:
        await client.aclose()
        await watch_client.aclose()
        await engine.dispose()

    server = service_server(
        f"rules-{title}",
        settings,
        names,
        add,
        address,
        bounds.rules_bounds(settings.max_watchers),
        on_stop=close,
        ready=client.ping,
        interceptors=[
            FieldBounds(bounds.RULES, bounds.RULES_FIELDS),
            internal_writes_only(settings.internal_secret),
        ],
        metrics_port=metrics_port,
    )
    await server.run_until_signal()


RULES_READS = frozenset(
    {
        "/roundhouse.v1.GameRules/GetView",
        "/roundhouse.v1.GameRules/ListLegalActions",
        "/roundhouse.v1.GameRules/WatchGame",
        "/roundhouse.v1.GameRules/GetResult",
        "/roundhouse.v1.e1894.Interchange/ExportGame",
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.health.v1.Health/List",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)
"""Methods of a rules service callable without internal credentials (reads;
the services are internal, behind NetworkPolicies, see docs/deploy.md)."""


class _NoBearerTokens:
    """Rules services take internal credentials only, never a person's token."""

    async def verify(self, token: str):
        from services.accounts.auth import AuthError

        raise AuthError(
            "internal_only", "rules services are internal: they accept internal credentials only"
        )


def internal_writes_only(secret: str) -> grpc.aio.ServerInterceptor:
    """The interceptor of a rules service: every write (CreateGame,
    SubmitAction, Resign, ImportGame) needs ``authorization: Internal <secret>``
    (:func:`services.accounts.auth.internal`), else UNAUTHENTICATED
    (``token_missing``, ``token_invalid``, ``internal_only``,
    ``internal_auth_disabled`` when ``secret`` is empty); reads need nothing."""
    from services.accounts.auth import AuthInterceptor

    return AuthInterceptor(_NoBearerTokens(), secret, anonymous=RULES_READS)


def main_for(title: str, extras: Sequence[Extra] = ()) -> None:
    """Console entry: ``python -m services.<title>.service.server``."""
    from services.common.server import run_service

    run_service(serve(title, extras=extras))
