"""A simulated 1,000-player, 7-round Swiss through the tournament service, start to
finish (target: 60 s or less).

Run: ``.venv/bin/python -m benchmarks.run tournament_service`` (or
``.venv/bin/python -m benchmarks.bench_tournament_service [--sqlite]``).

The real service in-process (gRPC over loopback with the production auth interceptor),
its store (a fresh PostgreSQL database on the test server,
``ROUNDHOUSE_TEST_POSTGRES_URL``; ``--sqlite`` or no server: an SQLite file) and its
pairing; tables are simulated (no lobby games): each table's result is drawn at random
(a seeded shuffle of the ranks) and recorded by the organiser with ``RecordResult``.
Timed from the first ``Register`` to the tournament's ``FINISHED``: 1,000 registrations
(each player with his own token), the start (round 1), then 7 rounds of 250 results, each
round paired by the service when its last table's result arrives. Accounts and tokens are
made before the clock starts. The detail also gives the process's CPU time (with SQLite the
store runs in the process too), which a loaded machine inflates much less than the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
import tempfile
import time
import uuid

from rich.progress import Progress

from benchmarks.common import Measurement
from roundhouse.v1 import tournaments_pb2 as pb
from services.platform.db import upgrade
from services.tournaments.service.events import NullPublisher
from services.tournaments.service.tests.harness import running_tournaments

PLAYERS, ROUNDS, TABLE = 1000, 7, 4
TARGET_S = 60.0


@contextlib.contextmanager
def _database(sqlite: bool):
    """A fresh migrated store: PostgreSQL if the test server answers, else SQLite."""
    if not sqlite:
        try:
            import conftest  # the tests' throw-away PostgreSQL databases

            asyncio.run(conftest._pg_admin("SELECT 1"))
        except Exception:  # noqa: BLE001 - no server: SQLite
            sqlite = True
    if sqlite:
        with tempfile.TemporaryDirectory(prefix="rh-bench-") as d:
            url = f"sqlite+aiosqlite:///{d}/bench.db"
            upgrade(url)
            yield url, "SQLite"
        return
    name = f"rh_bench_{uuid.uuid4().hex[:10]}"
    asyncio.run(conftest._pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        url = conftest._pg_url(name)
        upgrade(url)
        yield url, "PostgreSQL"
    finally:
        asyncio.run(conftest._pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _run(url: str, seed: int = 1) -> dict:
    rng = random.Random(seed)
    async with running_tournaments(url, events=NullPublisher()) as env:
        organiser = await env.person("organiser")
        players = [await env.person(f"p{i:04d}", ("play",)) for i in range(PLAYERS)]
        t = await env.create(organiser, rounds=ROUNDS, table_size=TABLE, rated=False, seed=seed)
        tid = t.tournament_id
        per_round = []
        with Progress(transient=True) as progress:
            task = progress.add_task(
                "1,000-player Swiss", total=PLAYERS + ROUNDS * PLAYERS // TABLE
            )
            t0, cpu0 = time.perf_counter(), time.process_time()
            for p in players:
                await env.stub.Register(pb.RegisterRequest(tournament_id=tid), metadata=p.md)
                progress.advance(task)
            registered = time.perf_counter() - t0
            await env.stub.StartTournament(
                pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
            )
            for r in range(1, ROUNDS + 1):
                r0 = time.perf_counter()
                t = await env.get(tid)
                assert t.current_round == r, (t.current_round, r)
                for x in t.rounds[r - 1].tables:
                    ranks = list(range(1, len(x.seats) + 1))
                    rng.shuffle(ranks)
                    await env.stub.RecordResult(
                        pb.RecordResultRequest(
                            tournament_id=tid, round=r, table=x.number, ranks=ranks
                        ),
                        metadata=organiser.md,
                    )
                    progress.advance(task)
                per_round.append(time.perf_counter() - r0)
            total = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
        t = await env.get(tid)
        assert t.status == pb.TOURNAMENT_STATUS_FINISHED and len(t.rounds) == ROUNDS
        repeats = 0
        met = set()
        for rnd in t.rounds[:5]:
            for x in rnd.tables:
                names = [s.account_id for s in x.seats]
                for i, a in enumerate(names):
                    for b in names[i + 1 :]:
                        pair = (min(a, b), max(a, b))
                        repeats += pair in met
                        met.add(pair)
        return {
            "total": total,
            "cpu": cpu,
            "registered": registered,
            "per_round": per_round,
            "repeats_1_5": repeats,
            "games": sum(s.games for s in t.standings),
        }


def tournament_1000_players_7_rounds(sqlite: bool = False) -> Measurement:
    with _database(sqlite) as (url, store):
        got = asyncio.run(_run(url))
    rounds = ", ".join(f"{x:.1f}" for x in got["per_round"])
    return Measurement(
        name=f"1,000-player 7-round Swiss through the tournament service ({store})",
        value=got["total"],
        unit="s",
        target=TARGET_S,
        higher_is_better=False,
        detail=(
            f"CPU time of the process {got['cpu']:.1f} s; 1,000 registrations "
            f"{got['registered']:.1f} s; rounds (250 results + pairing the "
            f"next) {rounds} s; {got['games']} seat-games; repeat pairs in rounds 1-5: "
            f"{got['repeats_1_5']}"
        ),
    )


BENCHMARKS = [tournament_1000_players_7_rounds]


if __name__ == "__main__":
    m = tournament_1000_players_7_rounds(sqlite="--sqlite" in sys.argv)
    print(f"{m.name}: {m.value_text} (target {m.target_text}); {m.detail}")
    os._exit(0 if m.ok else 1)
