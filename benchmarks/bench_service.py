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
from services.common.registry import get_game
from services.common.rng import SeededRandom

TITLE = "railbarons"


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


async def _play(stub, game, seed: int, latencies: list[float], deadline: float) -> int:
    created = await stub.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, seed=seed)
    )
    game_id = created.info.game_id
    local = game.new_state(4, seed)
    rng = SeededRandom(seed)
    moves = 0
    while time.perf_counter() < deadline:
        if local.is_terminal():
            created = await stub.CreateGame(
                game_pb2.CreateGameRequest(title=TITLE, num_players=4, seed=seed + moves)
            )
            game_id, local = created.info.game_id, game.new_state(4, seed + moves)
        seat = local.active_seats()[0]
        action = rng.choice(local.legal_actions(seat))
        text = json.dumps(action.to_json())
        t0 = time.perf_counter()
        await stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game_id, seat=seat, expected_version=local.version, action_json=text
            )
        )
        latencies.append(time.perf_counter() - t0)
        local.apply(seat, action)
        moves += 1
    return moves


def _throughput(concurrency: int = 50, seconds: float = 15.0) -> tuple[float, float, float]:
    game = get_game(TITLE)
    with _RulesOnly([TITLE], private_redis=True) as stack:

        async def main():
            async with grpc.aio.insecure_channel(stack.rules_addresses[TITLE]) as channel:
                stub = game_pb2_grpc.GameRulesStub(channel)
                latencies: list[float] = []
                start = time.perf_counter()
                deadline = start + seconds
                counts = await asyncio.gather(
                    *[_play(stub, game, 1000 + i, latencies, deadline) for i in range(concurrency)]
                )
                elapsed = time.perf_counter() - start
                return sum(counts) / elapsed, latencies

        rate, latencies = asyncio.run(main())
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    p50 = statistics.median(latencies) * 1000
    return rate, p99, p50


_last: dict[str, float] = {}


def submit_throughput() -> Measurement:
    rate, p99, p50 = _throughput()
    _last.update(p99=p99, p50=p50)
    return Measurement(
        "service: moves/s over 50 concurrent games",
        rate,
        "moves/s",
        500,
        detail=f"p50 {p50:.1f} ms, p99 {p99:.1f} ms",
    )


def submit_p99_latency() -> Measurement:
    if "p99" not in _last:
        submit_throughput()
    return Measurement(
        "service: p99 SubmitAction latency (50 games)",
        _last["p99"],
        "ms",
        20,
        higher_is_better=False,
        detail=f"p50 {_last['p50']:.1f} ms",
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
                        await _play_n(stub, game, 5000 + i, moves_each)

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


async def _play_n(stub, game, seed: int, n: int) -> None:
    created = await stub.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, seed=seed)
    )
    local = game.new_state(4, seed)
    rng = SeededRandom(seed)
    for _ in range(n):
        if local.is_terminal():
            return
        seat = local.active_seats()[0]
        action = rng.choice(local.legal_actions(seat))
        await stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=created.info.game_id,
                seat=seat,
                expected_version=local.version,
                action_json=json.dumps(action.to_json()),
            )
        )
        local.apply(seat, action)


BENCHMARKS = [submit_throughput, submit_p99_latency, memory_1000_games]
