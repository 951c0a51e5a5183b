"""Service benchmarks (platform issue, "Numbers"):

* throughput: submitted moves per second summed over 50 concurrent Chicago
  Express games through gRPC and Redis, with the p99 submit latency;
* memory: resident memory of one rules service holding 1,000 live games.

Each starts a real rules-service process (and a private redis-server when
one is installed) on this machine. The load generator keeps a local engine
copy of every game to pick legal moves without extra calls, so every
measured call is a ``SubmitAction`` that validates, applies and appends to
the game's stream.

Run: ``python -m benchmarks.run bench_service``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

import grpc

from benchmarks.common import Measurement
from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.cli.launcher import Stack
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom
from services.platform.auth import internal
from services.rules.titles import get_game

TITLE = "railbarons"
WARMUP_S = 2.0


class _RulesOnly(Stack):
    """A stack with just one rules service (no lobby, dispatcher or worker)."""

    def start(self) -> None:
        self.ensure_redis()
        for title in self.titles:
            self.spawn(f"rules-{title}", [sys.executable, "-m", f"services.{title}.service.server"])
        for address in self.rules_addresses.values():
            self.wait_healthy(address)

    def pid(self, title: str) -> int:
        return next(p.popen.pid for p in self.procs if p.name == f"rules-{title}")


def _random_game(game, seed: int) -> list[tuple[int, int, str]]:
    """A whole random game as (seat, expected version, action JSON) triples,
    computed before the measurement so the load generator only sends."""
    state = game.new_state(4, seed)
    rng = SeededRandom(seed)
    moves = []
    while not state.is_terminal():
        seat = state.active_seats()[0]
        action = random_choice(state, seat, rng)
        moves.append((seat, state.version, json.dumps(action.to_json())))
        state.apply(seat, action)
    return moves


async def _play(
    stub,
    games: list[list[tuple[int, int, str]]],
    seed: int,
    latencies: list[float],
    deadline: float,
    rate: float | None = None,
    measure_from: float = 0.0,
    md: tuple = (),
) -> int:
    """Play the precomputed ``games`` one after another through ``stub`` until
    ``deadline``; with ``rate`` (moves/s) the submits are paced open-loop on a
    fixed schedule, else they go back to back (closed loop). ``md``: the
    internal credentials rules services need for writes."""
    moves = 0
    # games are spread evenly over one period (phase = seed), not all at once
    start = time.perf_counter() + (seed % 50) / 50 / (rate or 1)
    for k, script in enumerate(games):
        created = await stub.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=4, seed=seed * 100 + k),
            metadata=md,
        )
        game_id = created.info.game_id
        for seat, version, text in script:
            if time.perf_counter() >= deadline:
                return moves
            if rate is not None:
                delay = start + moves / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            t0 = time.perf_counter()
            await stub.SubmitAction(
                game_pb2.SubmitActionRequest(
                    game_id=game_id, seat=seat, expected_version=version, action_json=text
                ),
                metadata=md,
            )
            if t0 >= measure_from:  # after the warm-up
                latencies.append(time.perf_counter() - t0)
            moves += 1
    return moves


def _throughput(
    concurrency: int = 50, seconds: float = 15.0, rate_per_game: float | None = None
) -> tuple[float, float, float]:
    """(moves/s achieved, p99 ms, p50 ms) for ``concurrency`` games; the
    first ``WARMUP_S`` seconds (all games being created at once) are not
    counted in the latencies."""
    game = get_game(TITLE)
    per_game = 2 if rate_per_game is not None else 6
    scripts = {
        i: [_random_game(game, (1000 + i) * 100 + k) for k in range(per_game)]
        for i in range(concurrency)
    }
    with _RulesOnly([TITLE], private_redis=True) as stack:

        async def main():
            async with grpc.aio.insecure_channel(stack.rules_addresses[TITLE]) as channel:
                stub = game_pb2_grpc.GameRulesStub(channel)
                latencies: list[float] = []
                start = time.perf_counter()
                deadline = start + seconds
                counts = await asyncio.gather(
                    *[
                        _play(
                            stub,
                            scripts[i],
                            1000 + i,
                            latencies,
                            deadline,
                            rate_per_game,
                            start + WARMUP_S,
                            internal(stack.internal_secret, "bench"),
                        )
                        for i in range(concurrency)
                    ]
                )
                elapsed = time.perf_counter() - start
                return sum(counts) / elapsed, latencies

        rate, latencies = asyncio.run(main())
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    p50 = statistics.median(latencies) * 1000
    return rate, p99, p50


def submit_at_500_per_second() -> Measurement:
    """The bar: 50 games each submitting 10 moves/s (500 moves/s offered,
    paced open-loop), through gRPC and Redis; p99 of SubmitAction latency."""
    rate, p99, p50 = _throughput(rate_per_game=10.0)
    return Measurement(
        "service: p99 SubmitAction latency at 500 moves/s (50 games)",
        p99,
        "ms",
        20,
        higher_is_better=False,
        detail=f"achieved {rate:.0f} moves/s, p50 {p50:.1f} ms",
    )


def submit_max_throughput() -> Measurement:
    """Closed loop: 50 games submitting back to back (latency is then queueing,
    50 in flight / throughput)."""
    rate, p99, p50 = _throughput()
    return Measurement(
        "service: max moves/s, 50 games back to back",
        rate,
        "moves/s",
        500,
        detail=f"p50 {p50:.1f} ms, p99 {p99:.1f} ms",
    )


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def memory_1000_games(games: int = 1000, moves_each: int = 60) -> Measurement:
    """RSS of a rules service after creating ``games`` games and playing each
    ``moves_each`` random moves (mid-game states)."""
    game = get_game(TITLE)
    with _RulesOnly([TITLE], private_redis=True) as stack:
        idle = _rss_mb(stack.pid(TITLE))

        async def main():
            async with grpc.aio.insecure_channel(stack.rules_addresses[TITLE]) as channel:
                stub = game_pb2_grpc.GameRulesStub(channel)
                sem = asyncio.Semaphore(50)

                async def one(i):
                    async with sem:
                        script = _random_game(game, 5000 + i)[:moves_each]
                        md = internal(stack.internal_secret, "bench")
                        await _play(stub, [script], 5000 + i, [], float("inf"), md=md)

                await asyncio.gather(*[one(i) for i in range(games)])

        asyncio.run(main())
        rss = _rss_mb(stack.pid(TITLE))
    return Measurement(
        f"service: RSS with {games} live games",
        rss,
        "MB",
        300,
        higher_is_better=False,
        detail=f"idle {idle:.0f} MB, {moves_each} moves per game",
    )


BENCHMARKS = [submit_at_500_per_second, submit_max_throughput, memory_1000_games]
