"""The ``GameRules`` gRPC service, generic over the engine contract.

Each title's ``services/<title>/service/server.py`` is a thin adapter that
starts this servicer for its title. The servicer keeps no state that is not in
Redis: in-memory states are an LRU cache that any replica rebuilds by
replaying the game's stream (:mod:`services.common.gamelog`).

Errors (gRPC status codes; FAILED_PRECONDITION and INVALID_ARGUMENT also carry
the rule's machine code in the ``roundhouse-code`` trailing metadata):

* INVALID_ARGUMENT: malformed request, options or action;
* FAILED_PRECONDITION: the rules forbid the action now (the message is the
  rule's reason), or the result of a running game is asked for;
* ABORTED: ``expected_version`` is stale;
* NOT_FOUND: unknown game id;
* ALREADY_EXISTS: a create with a game id that is taken.

In every error case the stream and the state are unchanged.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence

import grpc
from google.protobuf import json_format
from prometheus_client import Counter, Gauge, Histogram

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.common import protomap
from services.common.engine import (
    Action,
    IllegalAction,
    InvalidOptions,
    MalformedAction,
    Result,
    State,
    canonical_json,
)
from services.common.gamelog import GameLog, LogEntry
from services.common.logging import get_logger
from services.common.registry import get_game

log = get_logger("rules")

GAME_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

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


class _Live:
    """A cached game: its state, creation record and a lock serialising moves."""

    __slots__ = ("state", "meta", "lock")

    def __init__(self, state: State, meta: dict) -> None:
        self.state = state
        self.meta = meta
        self.lock = asyncio.Lock()


def result_proto(result: Result) -> game_pb2.GameResult:
    return game_pb2.GameResult(
        scores=[int(s) for s in result.scores],
        ranks=list(result.ranks),
        end_reason=result.end_reason,
    )


def update_proto(title: str, entry: LogEntry) -> game_pb2.GameUpdate:
    """A stream entry as the ``GameUpdate`` message."""
    action = json.loads(entry.action)
    update = game_pb2.GameUpdate(
        version=entry.version,
        seat=entry.seat,
        action=protomap.action_to_proto(title, action),
        action_json=entry.action,
        events=[protomap.struct(e) for e in json.loads(entry.events)],
        active_seats=list(entry.active),
        finished=entry.finished,
    )
    if entry.result:
        r = json.loads(entry.result)
        update.result.CopyFrom(
            game_pb2.GameResult(scores=r["scores"], ranks=r["ranks"], end_reason=r["end_reason"])
        )
    return update


class GameRulesServicer(game_pb2_grpc.GameRulesServicer):
    """``roundhouse.v1.GameRules`` for one title.

    Args:
        title: the registered short name this server plays.
        gamelog: the Redis game log.
        max_cached: live states kept in memory (least recently used are dropped).
    """

    def __init__(self, title: str, gamelog: GameLog, max_cached: int = 5000) -> None:
        self.title = title
        self.game = get_game(title)
        self.log = gamelog
        self.max_cached = max_cached
        self._cache: OrderedDict[str, _Live] = OrderedDict()
        self._loading: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ cache

    async def get_live(self, game_id: str, context: grpc.aio.ServicerContext) -> _Live:
        """The cached game, rebuilt from its stream on a miss. Aborts the call
        with INVALID_ARGUMENT (bad id) or NOT_FOUND (no such game of this title)."""
        if not GAME_ID_RE.match(game_id or ""):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_game_id",
                "game_id must be 1-64 characters of A-Z a-z 0-9 _ . -",
            )
        live = self._cache.get(game_id)
        if live is not None:
            self._cache.move_to_end(game_id)
            return live
        lock = self._loading.setdefault(game_id, asyncio.Lock())
        try:
            async with lock:  # one rebuild per game, however many calls arrive
                live = self._cache.get(game_id)
                if live is None:
                    live = await self._rebuild(game_id, context)
                    self._remember(game_id, live)
        finally:
            if not lock.locked():
                self._loading.pop(game_id, None)
        return live

    async def _rebuild(self, game_id: str, context: grpc.aio.ServicerContext) -> _Live:
        meta = await self.log.meta(game_id)
        if meta is None or meta.get("title") != self.title:
            await abort(
                context,
                grpc.StatusCode.NOT_FOUND,
                "unknown_game",
                f"no {self.title} game {game_id!r}",
            )
        state = self.game.new_state(meta["num_players"], meta["seed"], meta["options"])
        for entry in await self.log.entries(game_id):
            state.apply(entry.seat, self.game.parse_action(json.loads(entry.action)))
        REBUILDS.labels(self.title).inc()
        return _Live(state, meta)

    def _remember(self, game_id: str, live: _Live) -> None:
        self._cache[game_id] = live
        self._cache.move_to_end(game_id)
        while len(self._cache) > self.max_cached:
            old_id, old = next(iter(self._cache.items()))
            if old.lock.locked():
                break
            del self._cache[old_id]
        CACHED.labels(self.title).set(len(self._cache))

    def _evict(self, game_id: str) -> None:
        self._cache.pop(game_id, None)
        CACHED.labels(self.title).set(len(self._cache))

    async def catch_up(self, game_id: str, live: _Live) -> None:
        """Apply entries another replica appended since this cache was built."""
        for entry in await self.log.entries(game_id, live.state.version):
            live.state.apply(entry.seat, self.game.parse_action(json.loads(entry.action)))

    def info(self, game_id: str, meta: dict) -> game_pb2.GameInfo:
        """The public ``GameInfo`` of a game from its creation record (no seed)."""
        return game_pb2.GameInfo(
            game_id=game_id,
            title=self.title,
            rules_version=meta["rules_version"],
            num_players=meta["num_players"],
            options_json=canonical_json(meta["options"]),
        )

    async def _seat(self, seat: int, live: _Live, context) -> int:
        if not 0 <= seat < live.state.num_players:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_seat",
                f"seat must be 0..{live.state.num_players - 1}, got {seat}",
            )
        return seat

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
        state = self.game.new_state(num_players, seed, options)
        entries = []
        for seat, action in log:
            events = state.apply(seat, action)
            entries.append(self._entry(state, seat, action, events))
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
        if not await self.log.create_with_log(game_id, meta, entries, lifecycle):
            return None
        live = _Live(state, meta)
        self._remember(game_id, live)
        return live

    def _meta(self, num_players: int, seed: int, options: dict) -> dict:
        return {
            "title": self.title,
            "rules_version": self.game.rules_version,
            "num_players": num_players,
            "seed": seed,
            "options": options,
            "created_at": time.time(),
        }

    def _entry(self, state: State, seat: int, action: Action, events: list) -> LogEntry:
        finished = state.is_terminal()
        return LogEntry(
            version=state.version,
            seat=seat,
            action=canonical_json(action.to_json()),
            events=canonical_json(events),
            active=tuple(state.active_seats()),
            finished=finished,
            result=canonical_json(state.result().to_json()) if finished else "",
        )

    def _lifecycle(self, game_id: str, state: State, result_json: str) -> dict:
        finished = state.is_terminal()
        event = {
            "type": "game_finished" if finished else "turn",
            "game_id": game_id,
            "title": self.title,
            "version": state.version,
            "active": list(state.active_seats()),
        }
        if finished:
            event["result"] = result_json
        return event

    # ------------------------------------------------------------------ calls

    async def CreateGame(self, request, context):
        if request.title != self.title:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "wrong_title",
                f"this server plays {self.title!r}, not {request.title!r}",
            )
        game_id = request.game_id or uuid.uuid4().hex
        if not GAME_ID_RE.match(game_id):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_game_id",
                "game_id must be 1-64 characters of A-Z a-z 0-9 _ . -",
            )
        try:
            options_in = json.loads(request.options_json) if request.options_json else {}
            if not isinstance(options_in, dict):
                raise InvalidOptions("options_json must be a JSON object")
            options = self.game.parse_options(options_in)
            seed = request.seed if request.HasField("seed") else secrets.randbits(63)
            state = self.game.new_state(request.num_players, seed, options)
        except (InvalidOptions, ValueError) as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad_options", str(exc))
        meta = self._meta(request.num_players, seed, options.model_dump(mode="json"))
        active = list(state.active_seats())
        created = await self.log.create(
            game_id,
            meta,
            {
                "type": "game_created",
                "game_id": game_id,
                "title": self.title,
                "version": 0,
                "active": active,
            },
        )
        if not created:
            await abort(
                context,
                grpc.StatusCode.ALREADY_EXISTS,
                "game_exists",
                f"game {game_id!r} already exists",
            )
        self._remember(game_id, _Live(state, meta))
        log.info("game created", game_id=game_id, title=self.title, players=request.num_players)
        return game_pb2.CreateGameResponse(
            info=self.info(game_id, meta), version=0, active_seats=active
        )

    async def GetView(self, request, context):
        live = await self.get_live(request.game_id, context)
        seat = None
        if request.HasField("seat"):
            seat = await self._seat(request.seat, live, context)
        async with live.lock:
            await self.catch_up(request.game_id, live)
            state = live.state
            view = state.view(seat)
            response = game_pb2.GetViewResponse(
                info=self.info(request.game_id, live.meta),
                version=state.version,
                active_seats=list(state.active_seats()),
                finished=state.is_terminal(),
                view=protomap.view_to_proto(self.title, view),
                view_json=canonical_json(view),
            )
            if state.is_terminal():
                response.result.CopyFrom(result_proto(state.result()))
        return response

    async def ListLegalActions(self, request, context):
        live = await self.get_live(request.game_id, context)
        seat = await self._seat(request.seat, live, context)
        async with live.lock:
            await self.catch_up(request.game_id, live)
            actions = [a.to_json() for a in live.state.legal_actions(seat)]
            version = live.state.version
        return game_pb2.ListLegalActionsResponse(
            version=version,
            actions=[protomap.action_to_proto(self.title, a) for a in actions],
            actions_json=[canonical_json(a) for a in actions],
        )

    async def SubmitAction(self, request, context):
        started = time.perf_counter()
        try:
            return await self._submit(request, context)
        finally:
            SUBMIT_SECONDS.labels(self.title).observe(time.perf_counter() - started)

    async def _submit(self, request, context):
        game_id = request.game_id
        live = await self.get_live(game_id, context)
        seat = await self._seat(request.seat, live, context)
        try:
            if request.HasField("action"):
                action_json = protomap.action_from_proto(request.action, self.title)
            elif request.HasField("action_json"):
                action_json = request.action_json
            else:
                raise MalformedAction("missing_action", "the request carries no action")
            action = self.game.parse_action(action_json)
        except (MalformedAction, json_format.ParseError) as exc:
            ACTIONS.labels(self.title, "malformed").inc()
            code = getattr(exc, "code", "bad_action")
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, code, str(exc))
        key = request.idempotency_key
        if len(key) > 200:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_idempotency_key",
                "idempotency_key is at most 200 characters",
            )
        prior = await self.log.answer(game_id, key)
        if prior is not None:
            ACTIONS.labels(self.title, "duplicate").inc()
            return _answer_proto(prior)
        async with live.lock:
            state = live.state
            if request.expected_version > state.version:
                await self.catch_up(game_id, live)
            if request.expected_version != state.version:
                ACTIONS.labels(self.title, "stale").inc()
                await abort(
                    context,
                    grpc.StatusCode.ABORTED,
                    "stale_version",
                    f"expected_version {request.expected_version} is stale: "
                    f"the game is at version {state.version}",
                )
            try:
                events = state.apply(seat, action)
            except MalformedAction as exc:
                ACTIONS.labels(self.title, "malformed").inc()
                await abort(context, grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason)
            except IllegalAction as exc:
                ACTIONS.labels(self.title, "illegal").inc()
                await abort(context, grpc.StatusCode.FAILED_PRECONDITION, exc.code, exc.reason)
            try:
                entry = self._entry(state, seat, action, events)
                answer = canonical_json(
                    {
                        "version": entry.version,
                        "events": events,
                        "active": list(entry.active),
                        "finished": entry.finished,
                    }
                )
                lifecycle = self._lifecycle(game_id, state, entry.result)
                outcome = await self.log.append(
                    game_id, request.expected_version, entry, key, answer, lifecycle
                )
            except BaseException:
                self._evict(game_id)  # the cache moved ahead of the log: rebuild next time
                raise
            if outcome.status != "ok":
                self._evict(game_id)
                if outcome.status == "duplicate":
                    ACTIONS.labels(self.title, "duplicate").inc()
                    return _answer_proto(outcome.answer)
                ACTIONS.labels(self.title, "stale").inc()
                await abort(
                    context,
                    grpc.StatusCode.ABORTED,
                    "stale_version",
                    f"expected_version {request.expected_version} is stale: "
                    f"the game is at version {outcome.version}",
                )
        ACTIONS.labels(self.title, "applied").inc()
        return _answer_proto(answer)

    async def WatchGame(self, request, context) -> AsyncIterator[game_pb2.GameUpdate]:
        live = await self.get_live(request.game_id, context)
        if request.from_version < 0:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_version",
                "from_version must be >= 0",
            )
        async with live.lock:
            await self.catch_up(request.game_id, live)
            done = live.state.is_terminal() and request.from_version >= live.state.version
        if done:
            return
        async for entry in self.log.follow(request.game_id, request.from_version):
            yield update_proto(self.title, entry)

    async def GetResult(self, request, context):
        live = await self.get_live(request.game_id, context)
        async with live.lock:
            await self.catch_up(request.game_id, live)
            if not live.state.is_terminal():
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "game_not_over",
                    f"game {request.game_id!r} is still running",
                )
            result = live.state.result()
        return game_pb2.GetResultResponse(
            info=self.info(request.game_id, live.meta),
            result=result_proto(result),
            seed=str(live.meta["seed"]),
        )


def _answer_proto(answer: str) -> game_pb2.SubmitActionResponse:
    a = json.loads(answer)
    return game_pb2.SubmitActionResponse(
        version=a["version"],
        events=[protomap.struct(e) for e in a["events"]],
        active_seats=a["active"],
        finished=a["finished"],
    )


async def abort(
    context: grpc.aio.ServicerContext, code: grpc.StatusCode, rule_code: str, message: str
):
    """End the call with ``code`` and ``message``; ``rule_code`` goes to the
    ``roundhouse-code`` trailing metadata. Never returns."""
    await context.abort(code, message, trailing_metadata=(("roundhouse-code", rule_code),))


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
    ``rules_addresses[title]`` from the settings.
    """
    import redis.asyncio as aioredis

    from services.common.logging import configure_logging
    from services.common.server import GrpcServer
    from services.common.settings import get_settings

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    if address is None:
        port = settings.rules_addresses[title].rsplit(":", 1)[1]
        address = f"{settings.bind_host}:{port}"
    client = aioredis.from_url(settings.redis_url, decode_responses=True)
    servicer = GameRulesServicer(
        title, GameLog(client, settings.key_prefix), settings.max_cached_games
    )
    names = [game_pb2.DESCRIPTOR.services_by_name["GameRules"].full_name]

    def add(server: grpc.aio.Server) -> None:
        game_pb2_grpc.add_GameRulesServicer_to_server(servicer, server)
        names.extend(extra(servicer, server) for extra in extras)

    async def close() -> None:
        await client.aclose()

    server = GrpcServer(
        f"rules-{title}",
        names,
        add,
        address,
        settings.metrics_port if metrics_port is None else metrics_port,
        settings.grace_seconds,
        on_stop=close,
    )
    await server.run_until_signal()


def main_for(title: str, extras: Sequence[Extra] = ()) -> None:
    """Console entry: ``python -m services.<title>.service.server``."""
    asyncio.run(serve(title, extras=extras))
