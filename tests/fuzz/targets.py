"""What the fuzz suite attacks (issue 13, item 9): a :class:`Target` is a
running service with its addresses, the credentials to try, the ids worth
knowing, and a snapshot of the state a refused call must leave alone.

:class:`LobbyAndRules` runs the in-process lobby of the lobby tests
(``services/lobby/tests/harness.py``: the production interceptors, message
bounds and quotas, a real Redis and store, rules services) in a thread of
its own, with an account, a token, an open and a running table, so fuzzed
calls reach deep paths (real ids, real seats).

The HTTP gateway's target (``tests/fuzz/gateway.py``) runs the same way:
both start their services through :class:`ServicesInAThread`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading

import grpc
import sqlalchemy as sa
from google.protobuf import message_factory

from roundhouse.v1 import game_pb2, lobby_pb2
from services.lobby.models import Table, TableSeat
from services.lobby.tests.harness import INTERNAL_SECRET, running_lobby
from services.platform.auth import internal
from tests.fuzz.strategies import Request


@dataclasses.dataclass(frozen=True)
class Outcome:
    code: grpc.StatusCode
    reason: str = ""


class ServicesInAThread:
    """Services started on an asyncio loop in a thread of their own, for a
    blocking fuzz client in the main thread.

    A subclass gives :meth:`running` (an async context manager yielding the
    started services' environment), :meth:`_populate` (what to create first),
    and :meth:`_opened` / :meth:`_closing` (its client side, in the main
    thread). ``__enter__`` raises what starting them raised.
    """

    start_timeout_s = 60.0

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def running(self) -> contextlib.AbstractAsyncContextManager:
        raise NotImplementedError

    async def _populate(self, env) -> None:
        """Create what the fuzzed calls should find (accounts, tables)."""

    def _opened(self) -> None:
        """The client side, once the services are up."""

    def _closing(self) -> None:
        """Close the client side."""

    def __enter__(self):
        self.thread.start()
        self._ready.wait(self.start_timeout_s)
        if self._error is not None:
            raise self._error
        self._opened()
        return self

    def __exit__(self, *exc) -> None:
        self._closing()
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with self.running() as env:
                self.env = env
                await self._populate(env)
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported by __enter__
            self._error = exc
            self._ready.set()

    def call(self, coro):
        """Run ``coro`` on the services' loop; its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)


class LobbyAndRules(ServicesInAThread):
    """The in-process lobby and rules service, started in a thread.

    Args:
        database_url, redis_url, key_prefix: where the lobby keeps its state.
        settings: lobby settings overrides (quotas high enough not to refuse
            everything after the first seconds, by default).
    """

    def __init__(self, database_url: str, redis_url: str, key_prefix: str, **settings) -> None:
        super().__init__()
        self.args = (database_url, redis_url, key_prefix)
        self.settings = {
            "tables_per_account": 10_000,
            "tables_created_per_account": "100000/minute",
            "moves_per_account": "100000/second",
            "watch_opens_per_account": "100000/minute",
            **settings,
        }

    def running(self) -> contextlib.AbstractAsyncContextManager:
        return running_lobby(*self.args, **self.settings)

    def _opened(self) -> None:
        self.lobby_channel = grpc.insecure_channel(self.env.lobby_address)
        rules_address = self.env.settings.rules_addresses["railbarons"]
        self.rules_channel = grpc.insecure_channel(rules_address)

    def _closing(self) -> None:
        self.lobby_channel.close()
        self.rules_channel.close()

    async def _populate(self, env) -> None:
        ada = await env.person("ada")
        self.token = ada.token
        self.md_token = ada.md
        open_table = await env.table(ada, 2)
        running = await env.table(ada, 2)
        await env.lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=running.table_id, seat=0), metadata=ada.md
        )
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=running.table_id, seat=1, policy="random"),
            metadata=ada.md,
        )
        running = await env.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=running.table_id), metadata=ada.md
        )
        self.table_ids = [open_table.table_id, running.table_id]
        self.game_ids = [running.game_id]

    # ----------------------------------------------------------------- fuzzing

    @property
    def known(self) -> dict[str, list[str]]:
        return {
            "table_id": self.table_ids,
            "game_id": self.game_ids,
            "title": ["railbarons", "transsib", "e1894"],
            "policy": ["random", "greedy"],
            "bot": ["random-bot", "ada"],
            "player": ["ada"],
        }

    @property
    def lobby_credentials(self) -> list[tuple[tuple[str, str], ...]]:
        return [
            (),
            self.md_token,
            (("authorization", "Bearer rh_wrong_token"),),
            (("authorization", "Bearer " + "x" * 3000),),
            (("authorization", "Basic abc"),),
            (("authorization", ""),),
            internal("wrong-secret", "tests"),
        ]

    @property
    def rules_credentials(self) -> list[tuple[tuple[str, str], ...]]:
        return [
            (),
            internal(INTERNAL_SECRET, "fuzz"),
            internal("wrong-secret", "fuzz"),
            self.md_token,
        ]

    def send(self, request: Request, timeout: float = 2.0, stream_timeout: float = 0.3) -> Outcome:
        """Send one fuzzed request; the status it got (OK for an answer, and
        for a stream that gave its first item or ran out of time)."""
        channel = self.lobby_channel if "/roundhouse.v1.Lobby/" in request.method else None
        channel = channel or self.rules_channel
        try:
            if request.streaming:
                call = channel.unary_stream(
                    request.method, request_serializer=None, response_deserializer=None
                )(request.body, metadata=request.metadata, timeout=stream_timeout)
                with contextlib.suppress(StopIteration):
                    next(iter(call))
                call.cancel()
            else:
                channel.unary_unary(
                    request.method, request_serializer=None, response_deserializer=None
                )(request.body, metadata=request.metadata, timeout=timeout)
        except grpc.RpcError as err:
            from services.platform.grpc_errors import error_reason

            if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED and request.streaming:
                return Outcome(grpc.StatusCode.OK, "stream_waited")
            return Outcome(err.code(), error_reason(err))
        return Outcome(grpc.StatusCode.OK)

    def snapshot(self) -> tuple:
        """The state a refused call must not change: a digest of every table
        and seat row (count, revisions, statuses, seats taken) and each game's
        stream length and meta (the rate-limit counters are left out: a counted
        refusal is what they are for)."""
        return self.call(self._snapshot())

    async def _snapshot(self) -> tuple:
        env = self.env
        async with env.store.sessions() as session:
            tables = (
                await session.execute(
                    sa.select(
                        sa.func.count(),
                        sa.func.sum(Table.revision),
                        sa.func.sum(Table.open_seats),
                        sa.func.count(Table.game_id),
                        sa.func.count(Table.result_json),
                    )
                )
            ).one()
            seats = (
                await session.execute(
                    sa.select(
                        sa.func.count(), sa.func.count(TableSeat.account_id), TableSeat.kind
                    ).group_by(TableSeat.kind)
                )
            ).all()
        prefix = f"{env.settings.key_prefix}:game:"
        async with env.redis.pipeline(transaction=False) as pipe:
            metas = [k async for k in env.redis.scan_iter(f"{prefix}*:meta", count=1000)]
            for key in sorted(metas):
                pipe.xlen(key.removesuffix(":meta") + ":log")
                pipe.strlen(key)
            lengths = await pipe.execute()
        return tuple(tables), tuple(sorted(map(tuple, seats))), tuple(sorted(metas)), lengths


RULES_SERVICE = game_pb2.DESCRIPTOR.services_by_name["GameRules"]
LOBBY_SERVICE = lobby_pb2.DESCRIPTOR.services_by_name["Lobby"]


def request_classes(service) -> dict[str, type]:
    """Method name -> request message class of a service descriptor."""
    return {m.name: message_factory.GetMessageClass(m.input_type) for m in service.methods}
