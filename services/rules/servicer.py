"""The ``GameRules`` gRPC service, generic over the engine contract.

The servicer is one class made of its concerns, each in its own module: the live games
(:mod:`services.rules.cache`), moves (:mod:`services.rules.submit`), resign, timeout, pause
and reclaim (:mod:`services.rules.lifecycle`) and the watch (:mod:`services.rules.watch`);
the answers they build are in :mod:`services.rules.messages`.

Each title's ``services/<title>/service/server.py`` is a thin adapter that
starts this servicer for its title. The servicer keeps no state that is not in
Redis: in-memory states are an LRU cache that any replica rebuilds by
replaying the game's stream (:mod:`services.platform.gamelog`), and that
catches up with entries other replicas appended before every call.

A move is applied to a *clone* of the cached state; the clone replaces the
cached state only once the compare-and-set append succeeded. So a refused,
stale, duplicate or failed append leaves the cache exactly as the log is.

Errors (gRPC status codes; the rule's machine code is the ``reason`` of the
``google.rpc.ErrorInfo`` detail, see :mod:`services.platform.grpc_errors`):

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
(an :class:`services.rules.ports.ArchivePort`: ``services.archive.fallback.ArchiveFallback``,
which documents the answers, plugged in by the entry point).
"""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import grpc

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.kernel.engine import (
    Action,
    InvalidOptions,
    State,
    canonical_json,
)
from services.match.botcatalogue import POLICY_NAMES, policy_available
from services.match.controls import InvalidClock, parse_clock_json
from services.match.resignation import (
    ResignationPolicy,
    entry_label,
    resignation_policy,
)
from services.match.timesource import WALL, TimeSource
from services.platform.gamelog import GameLog, LogEntry
from services.platform.grpc_errors import abort, require_game_id
from services.platform.logging import get_logger
from services.rules.cache import LiveCache, LiveGame
from services.rules.lifecycle import Lifecycle
from services.rules.messages import (
    legal_response,
    stored_moves,
    view_answer,
    view_of_state,
)
from services.rules.ports import ArchivePort
from services.rules.repetition import RepetitionGuard, limit_from_env
from services.rules.results import result_proto
from services.rules.submit import Submit
from services.rules.titles import get_game
from services.rules.watch import Watch

logger = get_logger("rules")


class GameRulesServicer(LiveCache, Submit, Lifecycle, Watch, game_pb2_grpc.GameRulesServicer):
    """``roundhouse.v1.GameRules`` for one title.

    Args:
        title: the registered short name this server plays.
        gamelog: the Redis game log (its client must be bounded: see ``serve``).
        watch_log: the game log used by ``WatchGame`` (a separate client, so
            blocking reads never take the connections other calls need).
        max_cached: live states kept in memory (least recently used are dropped).
        max_watchers: open ``WatchGame`` streams allowed on this replica.
        resignation: what ``Resign`` does in this title
            (:func:`services.match.resignation.resignation_policy`).
        archive: answers for finished games Redis no longer holds (an
            :class:`services.rules.ports.ArchivePort`, which the archive implements);
            None = such games are NOT_FOUND.
        time: the one clock log entries are stamped with (``at_ms``) and
            timeouts are judged by (:mod:`services.match.timesource`).
        workers: threads that run the rules' CPU work off the event loop (``apply``,
            ``legal_actions``, ``view``); 0 = on the loop (the benchmark's baseline).
        repeat_limit: the repetition guard's limit (:class:`~services.rules.repetition.
            RepetitionGuard`, a game repeating a position that often is reported); None = the
            environment's ``ROUNDHOUSE_RULES_REPEAT_LIMIT``, else 50.
    """

    def __init__(
        self,
        title: str,
        gamelog: GameLog,
        max_cached: int = 5000,
        watch_log: GameLog | None = None,
        max_watchers: int = 500,
        resignation: ResignationPolicy | None = None,
        archive: ArchivePort | None = None,
        time: TimeSource = WALL,
        workers: int = 2,
        repeat_limit: int | None = None,
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
        self._cache: OrderedDict[str, LiveGame] = OrderedDict()
        self._loading: dict[str, asyncio.Lock] = {}
        self.repetition = RepetitionGuard(title, repeat_limit or limit_from_env())

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

    async def _seat(self, seat: int, live: LiveGame, context) -> int:
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
    ) -> LiveGame | None:
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
        live = LiveGame(state, meta, entries[-1] if entries else None)
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
        self._remember(game_id, LiveGame(state, meta))
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
            kept = live.views.get(seat)
            if kept is not None and kept[0] is state:
                return view_answer(kept[1], info, state, now_ms)
            base = await self.cpu(lambda: view_of_state(self.title, state, seat))
            live.views[seat] = (state, base)
            return view_answer(base, info, state, now_ms)

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
