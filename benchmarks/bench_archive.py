"""Archive benchmarks (accounts issue, "Numbers"):

* archiving one finished game of 1,000+ actions (a random 3-player 1894 game,
  1,065 actions): :meth:`services.archive.archiver.Archiver.archive` reads its
  creation record and stream from Redis and writes the game, its seats and
  every entry into PostgreSQL in one transaction, then sets the keys'
  expiry; median of 25 games (each under its own id);
* ``roundhouse archive verify`` over 300 archived random 4-player Chicago
  Express games: games replayed and checked per second (the command's own
  loop, :func:`services.archive.verify.verify`, timed in process; the wall
  time of the whole command, interpreter start included, is shown too).

Both run against a private ``redis-server`` and a throw-away database on the
local PostgreSQL server (``ROUNDHOUSE_TEST_POSTGRES_URL``, default
``postgresql://postgres@127.0.0.1:5432/postgres``), dropped afterwards.

Run: ``python -m benchmarks.run bench_archive``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import asyncpg
import redis.asyncio as aioredis
from sqlalchemy.engine import make_url

from benchmarks.common import Measurement
from services.archive.archiver import STORED, Archiver
from services.archive.store import ArchiveStore, GameRecord, SeatInfo
from services.archive.verify import OK, verify
from services.cli.launcher import free_port, redis_server_command, wait_for_redis
from services.kernel.engine import canonical_json
from services.kernel.rng import SeededRandom
from services.platform.db import create_engine, upgrade, utcnow
from services.platform.gamelog import GameLog, LogEntry
from services.platform.settings import ArchiveSettings
from services.rules.titles import get_game

POSTGRES = os.environ.get(
    "ROUNDHOUSE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def random_entries(title: str, players: int, seed: int) -> tuple[list[LogEntry], dict]:
    """A whole random game as the stream entries the rules service writes, and
    its creation record."""
    game = get_game(title)
    state = game.new_state(players, seed)
    rng = SeededRandom(seed)
    entries = []
    while not state.is_terminal():
        seat = state.active_seats()[0]
        action = rng.choice(state.legal_actions(seat))
        events = state.apply(seat, action)
        finished = state.is_terminal()
        entries.append(
            LogEntry(
                version=state.version,
                seat=seat,
                action=canonical_json(action.to_json()),
                events=canonical_json(events),
                active=tuple(state.active_seats()),
                finished=finished,
                result=canonical_json(state.result().to_json()) if finished else "",
            )
        )
    meta = {
        "title": title,
        "rules_version": game.rules_version,
        "num_players": players,
        "seed": seed,
        "options": game.parse_options({}).model_dump(mode="json"),
        "owner": "",
        "created_at": time.time(),
    }
    return entries, meta


@contextlib.contextmanager
def private_redis():
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="rh-bench-redis-")
    proc = subprocess.Popen(
        redis_server_command(port, workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        wait_for_redis(url)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def throwaway_database():
    name = f"rh_bench_{uuid.uuid4().hex[:10]}"
    admin = make_url(POSTGRES.replace("postgres://", "postgresql://", 1))
    plain = admin.set(drivername="postgresql").render_as_string(hide_password=False)

    async def sql(statement: str) -> None:
        conn = await asyncpg.connect(plain, timeout=10)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(sql(f'CREATE DATABASE "{name}"'))
    url = admin.set(drivername="postgresql+asyncpg", database=name).render_as_string(
        hide_password=False
    )
    try:
        upgrade(url)
        yield url
    finally:
        asyncio.run(sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def bench_archive_a_1000_action_game() -> Measurement:
    entries, meta = random_entries("e1894", 3, 0)
    runs = 25

    async def go(redis_url: str, db_url: str) -> tuple[list[float], list[float]]:
        settings = ArchiveSettings(redis_url=redis_url, key_prefix="bench", database_url=db_url)
        client = aioredis.from_url(redis_url, decode_responses=True)
        engine = create_engine(db_url, settings)
        gamelog = GameLog(client, "bench")
        archiver = Archiver(settings, client, engine)
        times, cpu = [], []
        try:
            for i in range(runs + 2):  # two warm-ups (connections, statement caches)
                game_id = f"g{i}"
                await gamelog.create_with_log(game_id, meta, entries, [])
                started, cpu_started = time.perf_counter(), time.process_time()
                assert await archiver.archive(game_id) == STORED
                if i >= 2:
                    times.append(time.perf_counter() - started)
                    cpu.append(time.process_time() - cpu_started)
        finally:
            await client.aclose()
            await engine.dispose()
        return times, cpu

    with private_redis() as redis_url, throwaway_database() as db_url:
        times, cpu = asyncio.run(go(redis_url, db_url))
    median = statistics.median(times) * 1000
    return Measurement(
        f"archive a finished {len(entries):,}-action game (1894, 3 players) into PostgreSQL",
        median,
        "ms",
        50,
        higher_is_better=False,
        detail=f"median of {runs}; min {min(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms; "
        f"this process's CPU {statistics.median(cpu) * 1000:.1f} ms (median); "
        f"load average {os.getloadavg()[0]:.1f}",
    )


def bench_verify_chicago_express_games() -> Measurement:
    games = 300

    async def fill(db_url: str) -> int:
        engine = create_engine(db_url)
        store = ArchiveStore(engine)
        actions = 0
        try:
            for seed in range(games):
                entries, meta = random_entries("railbarons", 4, seed)
                actions += len(entries)
                result = json.loads(entries[-1].result)
                record = GameRecord(
                    game_id=f"rb{seed:04d}",
                    title="railbarons",
                    rules_version=meta["rules_version"],
                    num_players=4,
                    options=meta["options"],
                    seed=seed,
                    owner="",
                    created_at=utcnow(),
                    finished_at=utcnow(),
                    num_actions=len(entries),
                    result=result,
                    seats=tuple(SeatInfo(i) for i in range(4)),
                )
                await store.save(record, entries)
        finally:
            await engine.dispose()
        return actions

    async def check(db_url: str) -> tuple[float, int]:
        engine = create_engine(db_url)
        ok = []
        try:
            started = time.perf_counter()
            await verify(ArchiveStore(engine), "railbarons", None, lambda v: ok.append(v))
            seconds = time.perf_counter() - started
        finally:
            await engine.dispose()
        assert len(ok) == games and all(v.status == OK for v in ok)
        return seconds, len(ok)

    with throwaway_database() as db_url:
        actions = asyncio.run(fill(db_url))
        asyncio.run(check(db_url))  # warm-up
        seconds, checked = asyncio.run(check(db_url))
        env = {**os.environ, "ROUNDHOUSE_DATABASE_URL": db_url}
        started = time.perf_counter()
        command = subprocess.run(
            [sys.executable, "-m", "services.cli.main", "archive", "verify"],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        assert command.returncode == 0, command.stdout + command.stderr
    rate = checked / seconds
    return Measurement(
        "roundhouse archive verify: archived Chicago Express games (4 players) replayed",
        rate,
        "games/s",
        100,
        detail=f"{checked} games, {actions / games:.0f} actions/game, {seconds:.2f} s; "
        f"the whole command {wall:.2f} s wall, interpreter start included; "
        f"load average {os.getloadavg()[0]:.1f}",
    )


BENCHMARKS = [bench_archive_a_1000_action_game, bench_verify_chicago_express_games]
