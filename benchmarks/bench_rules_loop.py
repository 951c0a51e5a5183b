"""The rules service's CPU work off the event loop: latency of the loop's other work while
1894 games are played flat out, with the rules on the loop (``workers=0``, the servicer
before) and on its bounded pool (``workers=2``, the default), side by side.

Run: ``nice -n 10 .venv/bin/python -m benchmarks.run bench_rules_loop``

In process against a private ``redis-server``: ``LOADERS`` clients each replay a recorded
random 4-player 1894 game move by move through the generic servicer (``ListLegalActions``
for the seat to move, then ``SubmitAction``: the hosted bots' calls), up to ``MOVES`` moves
each. Meanwhile a probe does what every call does first on the loop, a Redis round trip
(``GameLog.last_entry``), every ``PROBE_EVERY_S``, and records how long it took from its
start to its answer: with the rules on the loop, the probe waits behind route searches.
Rounds alternate the two servicers; the figures are pooled over the rounds.

* ``probe_p99_ratio``: the probe's 99th percentile with the pool over without it. Target:
  at most 1.0 (the pool must not make the loop slower to answer).
* ``moves_ratio``: moves per second of the loaders with the pool over without it. Target:
  at least 0.90 (the thread hand-off may cost at most a tenth of the throughput).
* ``cheap_moves_ratio``: the same for Chicago Express, whose moves cost microseconds, so the
  hand-off to a thread is most of what changes. Target: at least 0.90.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time

from benchmarks.common import Measurement
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game

LOADERS = 4
MOVES = 400
ROUNDS = 2
PROBE_EVERY_S = 0.005
TITLE = "e1894"
CHEAP = "railbarons"
"""The cheap title (moves of a few microseconds): the hand-off must not slow it much."""


def _logs(title: str) -> list[list[tuple[int, str]]]:
    game = get_game(title)
    logs = []
    for seed in range(1, LOADERS + 1):
        state = game.new_state(4, seed)
        rng = SeededRandom(seed)
        log = []
        while not state.is_terminal() and len(log) < MOVES:
            seat = state.active_seats()[0]
            action = random_choice(state, seat, rng)
            log.append((seat, json.dumps(action.to_json())))
            state.apply(seat, action)
        logs.append(log)
    return logs


class _Context:
    async def abort_with_status(self, status):  # pragma: no cover - a bug in the bench
        raise RuntimeError(status.details)


async def _round(servicer, tag: str, logs, title: str) -> tuple[list[float], float]:
    """(probe latencies in seconds, moves per second) of one round."""
    from roundhouse.v1 import game_pb2

    ctx = _Context()
    ids = [f"{tag}-{i}" for i in range(len(logs))]
    for i, game_id in enumerate(ids):
        create = game_pb2.CreateGameRequest(title=title, num_players=4, seed=i + 1, game_id=game_id)
        await servicer.CreateGame(create, ctx)

    async def load(game_id: str, log) -> None:
        for version, (seat, text) in enumerate(log):
            await servicer.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat), ctx
            )
            await servicer.SubmitAction(
                game_pb2.SubmitActionRequest(
                    game_id=game_id, seat=seat, expected_version=version, action_json=text
                ),
                ctx,
            )

    done = asyncio.Event()
    probes: list[float] = []

    async def probe() -> None:
        while not done.is_set():
            t0 = time.perf_counter()
            await servicer.gamelog.last_entry(ids[0])
            probes.append(time.perf_counter() - t0)
            await asyncio.sleep(PROBE_EVERY_S)

    prober = asyncio.create_task(probe())
    t0 = time.perf_counter()
    await asyncio.gather(*(load(g, log) for g, log in zip(ids, logs, strict=True)))
    elapsed = time.perf_counter() - t0
    done.set()
    await prober
    return probes, sum(len(log) for log in logs) / elapsed


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


_cache: dict[str, tuple] = {}


def _measure(title: str = TITLE):
    if title in _cache:
        return _cache[title]
    import redis.asyncio as aioredis

    from benchmarks.bench_archive import private_redis
    from services.platform.gamelog import GameLog
    from services.rules.servicer import GameRulesServicer

    logs = _logs(title)

    async def run(url: str):
        client = aioredis.from_url(url, decode_responses=True)
        log = GameLog(client, f"bench-rules-loop-{title}")
        servicers = {
            "loop": GameRulesServicer(title, log, workers=0),
            "pool": GameRulesServicer(title, log, workers=2),
        }
        out = {name: ([], []) for name in servicers}
        await _round(servicers["pool"], "warm", [logs[0][:50]], title)
        for r in range(ROUNDS):
            for name in ("loop", "pool") if r % 2 == 0 else ("pool", "loop"):
                probes, rate = await _round(servicers[name], f"{name}{r}", logs, title)
                out[name][0].extend(probes)
                out[name][1].append(rate)
        await client.aclose()
        return out

    with private_redis() as url:
        _cache[title] = asyncio.run(run(url))
    return _cache[title]


def _detail(out) -> str:
    parts = []
    for name, (probes, rates) in out.items():
        parts.append(
            f"{name}: probe p50 {_p(probes, 50) * 1e3:.2f} ms, p99 {_p(probes, 99) * 1e3:.2f} ms, "
            f"max {max(probes) * 1e3:.1f} ms ({len(probes)} probes); "
            f"{statistics.mean(rates):.0f} moves/s"
        )
    return "; ".join(parts) + f" ({LOADERS} games x {MOVES} moves x {ROUNDS} rounds)"


def probe_p99_ratio() -> Measurement:
    out = _measure()
    ratio = _p(out["pool"][0], 99) / _p(out["loop"][0], 99)
    return Measurement(
        name="rules off the loop: Redis round trip p99 under 1894 load, pool/loop",
        value=ratio,
        unit="x",
        target=1.0,
        higher_is_better=False,
        detail=_detail(out),
    )


def moves_ratio() -> Measurement:
    out = _measure()
    ratio = statistics.mean(out["pool"][1]) / statistics.mean(out["loop"][1])
    return Measurement(
        name="rules off the loop: 1894 moves per second, pool/loop",
        value=ratio,
        unit="x",
        target=0.90,
        detail=_detail(out),
    )


def cheap_moves_ratio() -> Measurement:
    out = _measure(CHEAP)
    ratio = statistics.mean(out["pool"][1]) / statistics.mean(out["loop"][1])
    return Measurement(
        name="rules off the loop: Chicago Express moves per second, pool/loop",
        value=ratio,
        unit="x",
        target=0.90,
        detail=_detail(out),
    )


BENCHMARKS = [probe_p99_ratio, moves_ratio, cheap_moves_ratio]
