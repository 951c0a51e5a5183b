"""The lobby: ``roundhouse.v1.Lobby``, the public entry point.

Tables are created for a title with options; seats are taken by players (who
get a secret seat token) or given to bots (a policy name); starting a table
creates the game on the title's rules service (found by title in the
settings' ``rules_addresses``; the rules services themselves stay internal).
Players see their seat's view, list their moves and submit them here, each
checked against the seat token; spectators see the public view. A background
consumer of the lifecycle stream (consumer group ``lobby_group``) records
results when games finish.

Errors follow ``proto/roundhouse/v1/lobby.proto``; the rules service's errors
are relayed unchanged (:func:`services.common.grpc_errors.relay`).

Run: ``python -m services.lobby.server``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid

import grpc
from prometheus_client import Counter

from roundhouse.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from services.bots.policies import POLICY_NAMES, policy_available
from services.common.channels import aio_channel
from services.common.consumer import consume
from services.common.engine import InvalidOptions
from services.common.gamelog import GameLog
from services.common.grpc_errors import ServiceError, abort, relay
from services.common.logging import configure_logging, get_logger
from services.common.registry import TITLE_MODULES, get_game
from services.common.results import result_proto
from services.common.server import GrpcServer, redis_client
from services.common.settings import Settings, get_settings
from services.common.supervise import Supervisor
from services.common.tables import (
    BOT,
    EMPTY,
    FINISHED,
    OPEN,
    PLAYER,
    RUNNING,
    SeatRecord,
    TableNotFound,
    TableRecord,
    TableStore,
    token_hash,
)

log = get_logger("lobby")

WATCH_RETRIES = 5
"""Times in a row the lobby resumes a dropped watch before it gives up."""

TABLES = Counter("roundhouse_lobby_tables_total", "Tables by event", ["title", "event"])
MOVES = Counter("roundhouse_lobby_moves_total", "Player moves forwarded", ["title", "outcome"])

_STATUS = {
    OPEN: lobby_pb2.TABLE_STATUS_OPEN,
    RUNNING: lobby_pb2.TABLE_STATUS_RUNNING,
    FINISHED: lobby_pb2.TABLE_STATUS_FINISHED,
}
_KIND = {
    EMPTY: lobby_pb2.SEAT_KIND_EMPTY,
    PLAYER: lobby_pb2.SEAT_KIND_PLAYER,
    BOT: lobby_pb2.SEAT_KIND_BOT,
}


def table_proto(t: TableRecord) -> lobby_pb2.Table:
    """A table record as the public ``Table`` message (no token hashes, no seed)."""
    msg = lobby_pb2.Table(
        table_id=t.table_id,
        title=t.title,
        num_players=t.num_players,
        options_json=t.options_json,
        seats=[
            lobby_pb2.Seat(index=i, kind=_KIND[s.kind], name=s.name, policy=s.policy)
            for i, s in enumerate(t.seats)
        ],
        status=_STATUS[t.status],
        game_id=t.game_id,
    )
    if t.result:
        msg.result.CopyFrom(result_proto(t.result))
    return msg


def standings_proto(table: TableRecord) -> lobby_pb2.TableResult:
    """The final standings of a finished table, best first."""
    r = table.result or {"scores": [], "ranks": [], "end_reason": ""}
    standings = sorted(
        (
            lobby_pb2.Standing(seat=i, name=table.seats[i].name, score=int(s), rank=r["ranks"][i])
            for i, s in enumerate(r["scores"])
        ),
        key=lambda st: (st.rank, st.seat),
    )
    return lobby_pb2.TableResult(
        table=table_proto(table), standings=standings, end_reason=r["end_reason"]
    )


def _require_status(t: TableRecord, *allowed: str) -> None:
    if t.status not in allowed:
        raise ServiceError(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"not_{allowed[0]}",
            f"table {t.table_id} is {t.status}, not {' or '.join(allowed)}",
            status=t.status,
        )


def _open_seat(t: TableRecord, seat: int) -> None:
    _require_status(t, OPEN)
    if not 0 <= seat < t.num_players:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_seat",
            f"seat must be 0..{t.num_players - 1}, got {seat}",
            seat=seat,
            min_seat=0,
            max_seat=t.num_players - 1,
        )
    if t.seats[seat].kind != EMPTY:
        raise ServiceError(
            grpc.StatusCode.FAILED_PRECONDITION, "seat_taken", f"seat {seat} is taken", seat=seat
        )


class LobbyServicer(lobby_pb2_grpc.LobbyServicer):
    """``roundhouse.v1.Lobby`` over a :class:`TableStore` and the rules services."""

    def __init__(self, store: TableStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self._channels: dict[str, grpc.aio.Channel] = {}

    def rules(self, title: str) -> game_pb2_grpc.GameRulesStub:
        channel = self._channels.get(title)
        if channel is None:
            channel = self._channels[title] = aio_channel(self.settings.rules_addresses[title])
        return game_pb2_grpc.GameRulesStub(channel)

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    async def _table(self, table_id: str, context) -> TableRecord:
        try:
            return await self.store.get(table_id)
        except TableNotFound:
            await abort(
                context, grpc.StatusCode.NOT_FOUND, "unknown_table", f"no table {table_id!r}"
            )

    async def _update(self, table_id: str, change, context) -> TableRecord:
        try:
            return await self.store.update(table_id, change)
        except TableNotFound:
            await abort(
                context, grpc.StatusCode.NOT_FOUND, "unknown_table", f"no table {table_id!r}"
            )

    def rules_timeout(self, context) -> float:
        """Seconds a call to a rules service may take: the caller's remaining
        time, at most ``rules_call_timeout_s`` (also when the caller set none)."""
        cap = self.settings.rules_call_timeout_s
        remaining = context.time_remaining()
        return cap if remaining is None else max(0.0, min(remaining, cap))

    async def _call_rules(self, title: str, method: str, request, context):
        try:
            return await getattr(self.rules(title), method)(
                request, timeout=self.rules_timeout(context)
            )
        except grpc.aio.AioRpcError as err:
            await relay(context, err)

    async def _check_seat(self, table: TableRecord, seat: int, token: str, context) -> None:
        """The caller holds ``seat``: UNAUTHENTICATED without a token,
        PERMISSION_DENIED for a bot's seat or a wrong token."""
        if not 0 <= seat < table.num_players:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_seat",
                f"seat must be 0..{table.num_players - 1}, got {seat}",
                seat=seat,
                min_seat=0,
                max_seat=table.num_players - 1,
            )
        record = table.seats[seat]
        if not token:
            await abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "no_token",
                "this call needs the seat token JoinSeat returned",
            )
        if record.kind == BOT:
            MOVES.labels(table.title, "denied").inc()
            await abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "bot_seat",
                f"seat {seat} is played by a bot ({record.policy})",
            )
        if not secrets.compare_digest(record.token_hash, token_hash(token)):
            MOVES.labels(table.title, "denied").inc()
            await abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "wrong_token",
                f"the token does not hold seat {seat}",
            )

    # ------------------------------------------------------------------ tables

    async def CreateTable(self, request, context):
        if request.title not in TITLE_MODULES or request.title not in self.settings.rules_addresses:
            known = ", ".join(sorted(self.settings.rules_addresses))
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "unknown_title",
                f"unknown title {request.title!r}; known: {known}",
            )
        game = get_game(request.title)
        if not game.min_players <= request.num_players <= game.max_players:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_player_count",
                f"{request.title} takes {game.min_players} to {game.max_players} "
                f"players, got {request.num_players}",
                num_players=request.num_players,
                min_players=game.min_players,
                max_players=game.max_players,
            )
        try:
            game.parse_options_json(request.options_json)
        except InvalidOptions as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad_options", str(exc))
        table = TableRecord(
            table_id=uuid.uuid4().hex[:12],
            title=request.title,
            num_players=request.num_players,
            options_json=request.options_json,
            seed=request.seed if request.HasField("seed") else None,
            seats=[SeatRecord() for _ in range(request.num_players)],
        )
        await self.store.create(table)
        TABLES.labels(table.title, "created").inc()
        log.info(
            "table created", table_id=table.table_id, title=table.title, players=table.num_players
        )
        return table_proto(table)

    async def GetTable(self, request, context):
        return table_proto(await self._table(request.table_id, context))

    async def JoinSeat(self, request, context):
        token = secrets.token_urlsafe(24)
        name = request.name.strip()[:64] or f"player-{request.seat}"

        def change(t: TableRecord) -> None:
            _open_seat(t, request.seat)
            t.seats[request.seat] = SeatRecord(PLAYER, name, "", token_hash(token))

        table = await self._update(request.table_id, change, context)
        return lobby_pb2.JoinSeatResponse(table=table_proto(table), seat_token=token)

    async def AddBot(self, request, context):
        if request.policy not in POLICY_NAMES:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "unknown_policy",
                f"unknown bot policy {request.policy!r}; known: {', '.join(POLICY_NAMES)}",
            )
        table = await self._table(request.table_id, context)
        if not policy_available(request.policy, table.title):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "policy_unavailable",
                f"bot policy {request.policy!r} cannot play {table.title}",
            )

        def change(t: TableRecord) -> None:
            _open_seat(t, request.seat)
            t.seats[request.seat] = SeatRecord(BOT, f"bot:{request.policy}", request.policy)

        return table_proto(await self._update(request.table_id, change, context))

    async def StartTable(self, request, context):
        table = await self._table(request.table_id, context)
        _require_status(table, OPEN)
        empty = [i for i, s in enumerate(table.seats) if s.kind == EMPTY]
        if empty:
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "seats_empty",
                f"seats {empty} are empty; every seat needs a player or a bot",
                empty_seats=",".join(map(str, empty)),
            )
        if table.seed is not None and table.has_players():
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "seed_with_players",
                "a fixed seed is only allowed at a table of bots: whoever knows the "
                "seed knows every hidden card",
            )
        game_id = f"{table.title}-{table.table_id}"
        owner = f"table:{table.table_id}"
        # Link first: the dispatcher must find the bot seats as soon as the game exists.
        await self.store.link_game(game_id, table.table_id)
        create = game_pb2.CreateGameRequest(
            title=table.title,
            num_players=table.num_players,
            options_json=table.options_json,
            game_id=game_id,
            owner=owner,
        )
        if table.seed is not None:
            create.seed = table.seed
        try:
            await self.rules(table.title).CreateGame(create, timeout=self.rules_timeout(context))
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.ALREADY_EXISTS:
                await relay(context, err)
            # a retried start is fine, but only for the game this table created
            view = await self._call_rules(
                table.title, "GetView", game_pb2.GetViewRequest(game_id=game_id), context
            )
            if view.info.owner != owner:
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "game_id_taken",
                    f"game {game_id} exists and does not belong to this table",
                )

        def change(t: TableRecord) -> None:
            if t.status == OPEN:
                t.status, t.game_id = RUNNING, game_id

        table = await self._update(request.table_id, change, context)
        TABLES.labels(table.title, "started").inc()
        log.info("table started", table_id=table.table_id, game_id=game_id)
        return table_proto(table)

    # ------------------------------------------------------------------ play

    async def GetSeatView(self, request, context):
        table = await self._table(request.table_id, context)
        _require_status(table, RUNNING, FINISHED)
        view = game_pb2.GetViewRequest(game_id=table.game_id)
        if request.HasField("seat"):
            await self._check_seat(table, request.seat, request.seat_token, context)
            view.seat = request.seat
        return await self._call_rules(table.title, "GetView", view, context)

    async def ListMoves(self, request, context):
        table = await self._table(request.table_id, context)
        _require_status(table, RUNNING, FINISHED)
        if not request.HasField("seat"):
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "ListMoves needs a seat"
            )
        await self._check_seat(table, request.seat, request.seat_token, context)
        legal = game_pb2.ListLegalActionsRequest(game_id=table.game_id, seat=request.seat)
        return await self._call_rules(table.title, "ListLegalActions", legal, context)

    async def SubmitMove(self, request, context):
        """Forward a seat's move. At a finished table only a retry (same
        idempotency key and request) of a move that was applied is answered,
        with its first answer; anything else there is ``not_running``."""
        table = await self._table(request.table_id, context)
        retry_after_end = table.status == FINISHED and bool(request.idempotency_key)
        if not retry_after_end:
            _require_status(table, RUNNING)
        await self._check_seat(table, request.seat, request.seat_token, context)
        forward = game_pb2.SubmitActionRequest(
            game_id=table.game_id,
            seat=request.seat,
            expected_version=request.expected_version,
            idempotency_key=request.idempotency_key,
        )
        which = request.WhichOneof("move")
        if which == "action":
            forward.action.CopyFrom(request.action)
        elif which == "action_json":
            forward.action_json = request.action_json
        else:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "missing_action",
                "the request carries no move",
            )
        try:
            response = await self.rules(table.title).SubmitAction(
                forward, timeout=self.rules_timeout(context)
            )
        except grpc.aio.AioRpcError as err:
            MOVES.labels(table.title, err.code().name.lower()).inc()
            if retry_after_end:  # not a retry of an applied move
                _require_status(table, RUNNING)
            await relay(context, err)
        MOVES.labels(table.title, "applied").inc()
        return response

    async def WatchTable(self, request, context):
        """Relay the game's updates; a dropped connection to the rules service
        (a replica restarting, say) is resumed from the last update sent."""
        table = await self._table(request.table_id, context)
        _require_status(table, RUNNING, FINISHED)
        last, retries = request.from_version, 0
        while True:
            watch = game_pb2.WatchGameRequest(game_id=table.game_id, from_version=last)
            try:
                # a watch is long: it gets the caller's deadline, if any, and no cap
                stream = self.rules(table.title).WatchGame(watch, timeout=context.time_remaining())
                async for update in stream:
                    last, retries = update.version, 0
                    yield update
                return
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE or retries >= WATCH_RETRIES:
                    await relay(context, err)
                retries += 1
                log.warning(
                    "watch of the rules service dropped; resuming",
                    game_id=table.game_id,
                    from_version=last,
                    retry=retries,
                )
                await asyncio.sleep(0.2 * retries)

    async def GetTableResult(self, request, context):
        """Standings and seed of a finished game; the rules service refuses
        (FAILED_PRECONDITION ``game_not_over``) while it runs, so the seed
        is only ever given after the end."""
        table = await self._table(request.table_id, context)
        _require_status(table, FINISHED, RUNNING)
        res = await self._call_rules(
            table.title, "GetResult", game_pb2.GetResultRequest(game_id=table.game_id), context
        )
        if table.result is None:
            table = await self.record_result(
                table.table_id,
                {
                    "scores": list(res.result.scores),
                    "ranks": list(res.result.ranks),
                    "end_reason": res.result.end_reason,
                },
            )
        answer = standings_proto(table)
        answer.seed = res.seed
        return answer

    async def record_result(self, table_id: str, result: dict) -> TableRecord:
        """Mark a table finished with ``result`` (``{"scores", "ranks", "end_reason"}``)."""

        def change(t: TableRecord) -> None:
            t.status, t.result = FINISHED, result

        table = await self.store.update(table_id, change)
        TABLES.labels(table.title, "finished").inc()
        return table


async def record_finished_game(servicer: LobbyServicer, fields: dict[str, str]) -> None:
    """Lifecycle handler: store the result of a finished game on its table
    (idempotent: a table keeps its first recorded result)."""
    if fields.get("type") != "game_finished":
        return
    table = await servicer.store.by_game(fields["game_id"])
    if table is not None and table.result is None:
        await servicer.record_result(table.table_id, json.loads(fields["result"]))


async def serve(address: str | None = None) -> None:
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    address = address or f"{settings.bind_host}:{settings.lobby_address.rsplit(':', 1)[1]}"
    client = redis_client(settings.redis_url, settings.redis_max_connections)
    servicer = LobbyServicer(TableStore(client, settings.key_prefix), settings)
    gamelog = GameLog(client, settings.key_prefix, settings.lifecycle_maxlen)
    stop = asyncio.Event()
    background = Supervisor("lobby")  # a dead results consumer: logged, NOT_SERVING, restarted
    background.start(
        "lobby-results",
        lambda: consume(
            client,
            gamelog.lifecycle_key,
            settings.lobby_group,
            f"{settings.consumer_name}-lobby",
            lambda fields: record_finished_game(servicer, fields),
            stop=stop,
        ),
    )

    async def close() -> None:
        stop.set()
        await background.wait("lobby-results", 5)
        await servicer.close()
        await client.aclose()

    server = GrpcServer(
        "lobby",
        [lobby_pb2.DESCRIPTOR.services_by_name["Lobby"].full_name],
        lambda s: lobby_pb2_grpc.add_LobbyServicer_to_server(servicer, s),
        address,
        settings.metrics_port,
        settings.grace_seconds,
        on_stop=close,
        ready=client.ping,
        max_message_bytes=1024 * 1024,
        metrics_host=settings.bind_host,
        supervisor=background,
    )
    await server.run_until_signal()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
