"""What the labels of moves cost (``Game.describe``), side by side with the work they ride on.

Run: ``.venv/bin/python -m benchmarks.run bench_labels``

Positions are recorded along random 4-player games of each title (the ``random`` bot's
workload, :func:`benchmarks.common.random_game`); then, in alternating rounds over the same
positions (CPU time, ``time.process_time``, best round kept):

* ``move_path_ratio``: the engine part of ``SubmitAction`` (``clone()`` + ``apply``) with
  and without the one ``describe`` of the move the rules service now stores with it.
  Target: at most 1.25 (the label adds at most a quarter to the engine's work per move;
  Redis and gRPC, ~2 ms per move in ``bench_service``, come on top of both).
* ``list_moves_ratio``: ``legal_actions`` with and without ``describe_all`` of its entries
  (``ListLegalActions``, called by people's clients and by the hosted bots). Reported with
  the absolute time per call; target: at most 1 ms per call on average.
* ``submit_path_ratio``: whole ``SubmitAction`` calls of the generic rules servicer, in
  process against a private ``redis-server`` (validation, clone, apply, the label, the Lua
  compare-and-set append), Chicago Express games replayed move by move, alternating rounds
  of the servicer as it is and of one whose moves carry no label (the path before labels);
  wall time per move, median of the rounds. Target: at most 1.10.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time

from benchmarks.common import Measurement
from services.kernel.engine import choose_per_entry
from services.kernel.playout import playout_actions
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game

GAMES = {"railbarons": 3, "transsib": 2, "e1894": 1}
"""Random 4-player games recorded per title."""

ROUNDS = 5


def _positions(title: str):
    game = get_game(title)
    out = []
    for seed in range(1, GAMES[title] + 1):
        state = game.new_state(4, seed)
        rng = SeededRandom(seed)
        while not state.is_terminal():
            seat = state.active_seats()[0]
            action = choose_per_entry(playout_actions(state, seat), rng)
            out.append((state.clone(), seat, action))
            state.apply(seat, action)
    return game, out


def _move(game, positions, label: bool) -> float:
    t0 = time.process_time()
    for state, seat, action in positions:
        if label:
            game.describe(state, action)
        state.clone().apply(seat, action)
    return time.process_time() - t0


def _list(game, positions, label: bool) -> float:
    t0 = time.process_time()
    for state, seat, _ in positions:
        legal = state.legal_actions(seat)
        if label:
            game.describe_all(state, legal)
    return time.process_time() - t0


def _side_by_side(fn) -> dict[str, tuple[float, float, int]]:
    """title -> (best time without labels, best with, positions)."""
    out = {}
    for title in GAMES:
        game, positions = _positions(title)
        plain, labelled = [], []
        for _ in range(ROUNDS):
            plain.append(fn(game, positions, False))
            labelled.append(fn(game, positions, True))
        out[title] = (min(plain), min(labelled), len(positions))
    return out


def _detail(results) -> str:
    return "; ".join(
        f"{t} {a / n * 1e6:.1f} -> {b / n * 1e6:.1f} us ({b / a:.2f}x, {n} positions)"
        for t, (a, b, n) in results.items()
    )


def move_path_ratio() -> Measurement:
    results = _side_by_side(_move)
    worst = max(b / a for a, b, _ in results.values())
    return Measurement(
        name="labels: clone+apply with/without describe (worst title)",
        value=worst,
        unit="x",
        target=1.25,
        higher_is_better=False,
        detail=_detail(results),
    )


def list_moves_ratio() -> Measurement:
    results = _side_by_side(_list)
    worst_us = max(b / n * 1e6 for _, b, n in results.values())
    return Measurement(
        name="labels: legal_actions + describe_all per call (worst title)",
        value=worst_us,
        unit="us",
        target=1000,
        higher_is_better=False,
        detail=_detail(results),
    )


SUBMIT_GAMES = 6
SUBMIT_ROUNDS = 6


def _submit_logs() -> list[list[tuple[int, str]]]:
    game = get_game("railbarons")
    logs = []
    for seed in range(1, SUBMIT_GAMES + 1):
        state = game.new_state(4, seed)
        rng = SeededRandom(seed)
        log = []
        while not state.is_terminal():
            seat = state.active_seats()[0]
            action = choose_per_entry(playout_actions(state, seat), rng)
            log.append((seat, json.dumps(action.to_json())))
            state.apply(seat, action)
        logs.append(log)
    return logs


async def _submit_round(servicer, tag: str, logs) -> float:
    from roundhouse.v1 import game_pb2

    class Context:
        async def abort_with_status(self, status):  # pragma: no cover - a bug in the bench
            raise RuntimeError(status.details)

    ctx = Context()
    moves = 0
    elapsed = 0.0
    for i, log in enumerate(logs):
        game_id = f"{tag}-{i}"
        create = game_pb2.CreateGameRequest(
            title="railbarons", num_players=4, seed=i + 1, game_id=game_id
        )
        await servicer.CreateGame(create, ctx)
        t0 = time.perf_counter()
        for version, (seat, text) in enumerate(log):
            await servicer.SubmitAction(
                game_pb2.SubmitActionRequest(
                    game_id=game_id, seat=seat, expected_version=version, action_json=text
                ),
                ctx,
            )
        elapsed += time.perf_counter() - t0
        moves += len(log)
    return elapsed / moves


def submit_path_ratio() -> Measurement:
    import redis.asyncio as aioredis

    from benchmarks.bench_archive import private_redis
    from services.platform.gamelog import GameLog
    from services.rules.servicer import GameRulesServicer

    class Unlabelled(GameRulesServicer):
        def label(self, before, seat, action) -> str:
            return ""

    logs = _submit_logs()

    async def run(url: str) -> tuple[list[float], list[float]]:
        client = aioredis.from_url(url, decode_responses=True)
        log = GameLog(client, "bench-labels")
        with_labels = GameRulesServicer("railbarons", log)
        without = Unlabelled("railbarons", log)
        a, b = [], []
        await _submit_round(with_labels, "warm", logs[:1])
        for r in range(SUBMIT_ROUNDS):
            b.append(await _submit_round(without, f"u{r}", logs))
            a.append(await _submit_round(with_labels, f"l{r}", logs))
        await client.aclose()
        return a, b

    with private_redis() as url:
        labelled, plain = asyncio.run(run(url))
    ratio = statistics.median(labelled) / statistics.median(plain)
    moves = sum(len(x) for x in logs)
    return Measurement(
        name="labels: SubmitAction with/without the label (railbarons, Redis)",
        value=ratio,
        unit="x",
        target=1.10,
        higher_is_better=False,
        detail=f"{ratio:.3f}x: median {statistics.median(plain) * 1e6:.0f} -> "
        f"{statistics.median(labelled) * 1e6:.0f} us per move, {moves} moves x "
        f"{SUBMIT_ROUNDS} rounds each",
    )


BENCHMARKS = [move_path_ratio, list_moves_ratio, submit_path_ratio]
