"""What token auth costs a move through the lobby (issue 8, "Numbers": at most
1 ms on the p99), measured side by side in one run.

Two lobby processes serve the same tables (one store, one Redis, one rules
service): the production lobby (``services.lobby.server``: every call's
bearer token is parsed, hashed, checked in the verifier's cache or the store)
and the same lobby with the caller's account id trusted from the metadata
(``benchmarks/lobby_without_auth.py``, a program of the benchmarks only). The
load generator plays 10 four-player Chicago Express tables through each lobby
at the same time, every game paced at 2 moves per second (open loop), each
move a ``ListMoves`` then a timed ``SubmitMove`` for the active seat. The
first seconds are not counted. The tables go in pairs, one through each
lobby, whose moves are submitted at the same instant, so both lobbies meet the
same load and the same noise of a shared machine. The figure is
p99(with auth) - p99(without).

Run: ``python -m benchmarks.run bench_lobby_auth``.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import time

import grpc

from benchmarks.common import Measurement
from benchmarks.lobby_without_auth import BENCH_ACCOUNT
from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.accounts.models import HUMAN
from services.accounts.store import AccountStore
from services.cli.launcher import Stack, free_port
from services.platform.auth import bearer
from services.platform.db import create_engine, session_factory, upgrade

TITLE = "railbarons"
PLAYERS = 4
GAMES_PER_LOBBY = 10
MOVES_PER_S = 2.0
SECONDS = float(os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "60"))
"""Length of the measured run (s); longer runs pin the p99 down better."""
WARMUP_S = 4.0


POSTGRES = os.environ.get(
    "ROUNDHOUSE_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
"""The PostgreSQL server the benchmark makes its throw-away database on (the
production store); without one it runs on the embedded SQLite file."""


async def _pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _bench_database() -> tuple[str | None, str]:
    """(URL of a fresh PostgreSQL database or None for SQLite, its name)."""
    name = f"rh_bench_{os.urandom(6).hex()}"
    try:
        asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    except Exception:  # noqa: BLE001 - no server: the embedded store
        return None, ""
    base = POSTGRES.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}", name


class _TwoLobbies(Stack):
    """Redis, the store, one rules service and two lobbies (with and without auth)."""

    def __init__(self, database_url: str | None) -> None:
        super().__init__([TITLE], private_redis=True, database_url=database_url)
        self.plain_address = f"127.0.0.1:{free_port()}"

    def start(self) -> None:
        self.ensure_redis()
        upgrade(self.database_url)
        py = sys.executable
        self.spawn(f"rules-{TITLE}", [py, "-m", f"services.{TITLE}.service.server"])
        self.spawn("lobby", [py, "-m", "services.lobby.server"])
        self.spawn(
            "lobby-without-auth",
            [py, "-m", "benchmarks.lobby_without_auth"],
            extra_env={
                "ROUNDHOUSE_LOBBY_ADDRESS": self.plain_address,
                "ROUNDHOUSE_CONSUMER_NAME": f"bench-plain-{os.getpid()}",
            },
        )
        for address in [*self.rules_addresses.values(), self.lobby_address, self.plain_address]:
            self.wait_healthy(address)


async def _accounts(url: str) -> list[tuple[str, str]]:
    """(account id, token) of the players (scopes play, tables:write)."""
    engine = create_engine(url)
    store = AccountStore(session_factory(engine))
    out = []
    for i in range(PLAYERS):
        account = await store.create_account(f"bench-p{i}", None, HUMAN)
        token, _ = await store.create_token(account, ["play", "tables:write"], 0, "bench")
        out.append((account.id, token))
    await engine.dispose()
    return out


async def _table(lobby, players) -> str:
    owner = bearer(players[0][1])
    table = await lobby.CreateTable(
        lobby_pb2.CreateTableRequest(title=TITLE, num_players=PLAYERS), metadata=owner
    )
    for seat, (_, token) in enumerate(players):
        await lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=seat), metadata=bearer(token)
        )
    await lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id), metadata=owner)
    return table.table_id


async def _next_move(lobby, table_id, md, seat, version, rng):
    moves = await lobby.ListMoves(lobby_pb2.SeatRequest(table_id=table_id, seat=seat), metadata=md)
    return lobby_pb2.SubmitMoveRequest(
        table_id=table_id,
        seat=seat,
        expected_version=version,
        action_json=rng.choice(list(moves.actions_json)),
    )


async def _timed(lobby, request, md):
    t0 = time.perf_counter()
    answer = await lobby.SubmitMove(request, metadata=md)
    return time.perf_counter() - t0, answer


async def _play_pair(games, seed, latencies, start, deadline) -> None:
    """Play two tables side by side, one through each lobby: at every tick both
    next moves are chosen, then both are submitted at the same instant, so
    the two lobbies meet the same load and the same noise of the machine.
    ``games``: {"auth" | "plain": (stub, table id, metadata per seat)}."""
    rng = random.Random(seed)
    state = {}
    for which, (lobby, table_id, _) in games.items():
        view = await lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table_id))
        state[which] = (view.version, list(view.active_seats))
    first = start + (seed % GAMES_PER_LOBBY) / GAMES_PER_LOBBY / MOVES_PER_S
    n = 0
    while all(active for _, active in state.values()) and time.perf_counter() < deadline:
        requests = {}
        for which, (lobby, table_id, creds) in games.items():
            version, active = state[which]
            requests[which] = await _next_move(
                lobby, table_id, creds[active[0]], active[0], version, rng
            )
        delay = first + n / MOVES_PER_S - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        order = list(games)
        rng.shuffle(order)  # neither lobby's call always goes out first
        results = await asyncio.gather(
            *(_timed(games[w][0], requests[w], games[w][2][requests[w].seat]) for w in order)
        )
        counted = time.perf_counter() >= start + WARMUP_S
        for which, (elapsed, answer) in zip(order, results, strict=True):
            if counted:
                latencies[which].append(elapsed)
            state[which] = (answer.version, [] if answer.finished else list(answer.active_seats))
        n += 1


def _measure() -> tuple[dict[str, tuple[float, float, int]], str]:
    """({"auth" | "plain": (p50 ms, p99 ms, samples)}, the store's kind)."""
    url, name = _bench_database()
    try:
        return _measure_on(url), "PostgreSQL" if url else "SQLite"
    finally:
        if name:
            asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _measure_on(url: str | None) -> dict[str, tuple[float, float, int]]:
    with _TwoLobbies(url) as stack:
        players = asyncio.run(_accounts(stack.database_url))

        async def main():
            async with (
                grpc.aio.insecure_channel(stack.lobby_address) as auth_channel,
                grpc.aio.insecure_channel(stack.plain_address) as plain_channel,
            ):
                with_auth = lobby_pb2_grpc.LobbyStub(auth_channel)
                plain = lobby_pb2_grpc.LobbyStub(plain_channel)
                tables = [await _table(with_auth, players) for _ in range(2 * GAMES_PER_LOBBY)]
                creds = {
                    "auth": [bearer(token) for _, token in players],
                    "plain": [((BENCH_ACCOUNT, account),) for account, _ in players],
                }
                latencies: dict[str, list[float]] = {"auth": [], "plain": []}
                start = time.perf_counter()
                deadline = start + SECONDS
                plays = [
                    _play_pair(
                        {
                            "auth": (with_auth, tables[2 * i], creds["auth"]),
                            "plain": (plain, tables[2 * i + 1], creds["plain"]),
                        },
                        i,
                        latencies,
                        start,
                        deadline,
                    )
                    for i in range(GAMES_PER_LOBBY)
                ]
                await asyncio.gather(*plays)
                return latencies

        latencies = asyncio.run(main())
    out = {}
    for which, values in latencies.items():
        values.sort()
        out[which] = (
            statistics.median(values) * 1000,
            values[int(len(values) * 0.99)] * 1000,
            len(values),
        )
    return out


def auth_adds_to_the_p99_of_a_move() -> Measurement:
    figures, store = _measure()
    (a50, a99, an), (p50, p99, pn) = figures["auth"], figures["plain"]
    return Measurement(
        "lobby: p99 SubmitMove, token auth minus none (10+10 games, 2 moves/s each)",
        a99 - p99,
        "ms",
        1,
        higher_is_better=False,
        detail=f"{store}; with auth p50 {a50:.2f} / p99 {a99:.2f} ms ({an} moves); "
        f"without p50 {p50:.2f} / p99 {p99:.2f} ms ({pn} moves)",
    )


def _verify_cost(url: str, cache_seconds: float, calls: int = 3000) -> tuple[float, float]:
    """(p50 ms, p99 ms) of ``AuthInterceptor.authenticate`` for a valid token,
    in this process, on ``url``; ``cache_seconds`` 0 = a store lookup every call."""
    from services.accounts.verifier import StoreVerifier
    from services.platform.auth import AuthInterceptor

    async def main():
        engine = create_engine(url)
        store = AccountStore(session_factory(engine))
        account = await store.create_account(f"bench-v{cache_seconds:g}", None, HUMAN)
        token, _ = await store.create_token(account, ["play"], 0, "bench")
        check = AuthInterceptor(StoreVerifier(store, cache_seconds), "s")
        method, md = "/roundhouse.v1.Lobby/SubmitMove", bearer(token)
        for _ in range(100):
            await check.authenticate(method, md)
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            await check.authenticate(method, md)
            times.append(time.perf_counter() - t0)
        await engine.dispose()
        times.sort()
        return statistics.median(times) * 1000, times[int(len(times) * 0.99)] * 1000

    return asyncio.run(main())


def token_check_itself() -> Measurement:
    """The auth interceptor's own work per call, in process: a token in the
    verifier's cache (the common case) and a cache miss (a store lookup,
    once per token per ``ROUNDHOUSE_TOKEN_CACHE_SECONDS``)."""
    url, name = _bench_database()
    try:
        if url is None:
            url = f"sqlite+aiosqlite:///{os.path.abspath('.bench-auth.db')}"
        upgrade(url)
        hit50, hit99 = _verify_cost(url, 3600)
        miss50, miss99 = _verify_cost(url, 0, calls=1000)
    finally:
        if name:
            asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        elif os.path.exists(".bench-auth.db"):
            os.remove(".bench-auth.db")
    return Measurement(
        "lobby: p99 token check per call, cached token",
        hit99 * 1000,
        "us",
        1000,
        higher_is_better=False,
        detail=f"p50 {hit50 * 1000:.0f} us; a cache miss (store lookup): p50 {miss50:.2f} / "
        f"p99 {miss99:.2f} ms",
    )


BENCHMARKS = [auth_adds_to_the_p99_of_a_move, token_check_itself]
