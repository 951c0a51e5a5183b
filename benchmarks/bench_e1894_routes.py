"""Benchmarks of the 1894 board: optimal routes and tile-lay enumeration.

Run: ``.venv/bin/python -m benchmarks.run e1894_routes``

Positions come from the reference traces of the two recorded games
(``tests/fixtures/e1894/traces``), rebuilt by ``services.e1894.engine.tests.tracekit``.

* ``optimal_routes_largest_position``: the ``run_routes`` position with the most laid tiles,
  tokens and trains over both games; for every corporation holding trains there, the median of
  ``best_routes`` over repeated runs. Target: median over corporations <= 50 ms; the worst
  corporation is in the detail.
* ``optimal_routes_stress``: the same position with every floated corporation given two D trains
  (the longest routes the rules allow), to show the head-room; target as above.
* ``legal_tile_lays_late_game``: ``legal_tile_lays`` for every corporation with a token in the
  late-game position (Gray phase, brown tiles allowed) with the most legal lays; median per call.
  Target <= 20 ms. The detail gives the cold figure (lay caches cleared) as well.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.common import Measurement
from services.e1894.engine.routes import best_routes
from services.e1894.engine.tests import tracekit as tk
from services.e1894.engine.track import _static_options, legal_tile_lays

CORPS = ("PLM", "Ouest", "Nord", "Est", "CFOR", "Belge", "AG", "LF", "LB")


def _size(prev: dict, board) -> int:
    tiles = sum(1 for c in board.copies if c >= 0)
    tokens = sum(len(v["tokens"]) for v in prev["corps"].values())
    trains = sum(len(v["trains"]) for v in prev["corps"].values())
    return tiles + tokens + trains


def _largest_position():
    best = None
    for game in tk.GAMES:
        for line, prev, board in tk.run_routes_cases(game):
            size = _size(prev, board)
            if best is None or size > best[0]:
                best = (size, game, line, prev, board)
    return best


def _time(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _routes_measure(name: str, stress: bool) -> Measurement:
    size, game, line, prev, board = _largest_position()
    per_corp = {}
    for corp in CORPS:
        trains = (
            ["D-0", "D-1"]
            if stress
            else [f"{t}-{i}" for i, t in enumerate(prev["corps"][corp]["trains"])]
        )
        if not trains or not prev["corps"][corp]["tokens"]:
            continue
        best_routes(board, corp, trains, prev["phase"])  # warm up
        per_corp[corp] = _time(lambda c=corp, t=trains: best_routes(board, c, t, prev["phase"]), 30)
    med = statistics.median(per_corp.values()) * 1000
    worst_corp = max(per_corp, key=per_corp.get)
    return Measurement(
        name=name,
        value=med,
        unit="ms",
        target=50,
        higher_is_better=False,
        detail=(
            f"{game.removeprefix('1894_game_end_')} action {line['id']} ({prev['phase']}, size "
            f"{size}); {len(per_corp)} corporations; worst {worst_corp} "
            f"{per_corp[worst_corp] * 1000:.2f} ms"
        ),
    )


def optimal_routes_largest_position() -> Measurement:
    return _routes_measure("e1894 best_routes, largest recorded position (median/corp)", False)


def optimal_routes_stress() -> Measurement:
    return _routes_measure("e1894 best_routes, largest position, 2 D trains each", True)


def _late_position():
    best = None
    for game in tk.GAMES:
        for line, prev, board in tk.run_routes_cases(game):
            if prev["phase"] not in ("Brown", "Red", "Gray"):
                continue
            n = sum(
                len(legal_tile_lays(board, c, prev["phase"]))
                for c in CORPS
                if prev["corps"][c]["tokens"]
            )
            if best is None or n > best[0]:
                best = (n, game, line, prev, board)
    return best


def legal_tile_lays_late_game() -> Measurement:
    n, game, line, prev, board = _late_position()
    corps = [c for c in CORPS if prev["corps"][c]["tokens"]]
    _static_options.cache_clear()
    t0 = time.perf_counter()
    for c in corps:
        legal_tile_lays(board, c, prev["phase"])
    cold = (time.perf_counter() - t0) / len(corps) * 1000
    per_corp = {c: _time(lambda c=c: legal_tile_lays(board, c, prev["phase"]), 50) for c in corps}
    med = statistics.median(per_corp.values()) * 1000
    worst = max(per_corp, key=per_corp.get)
    return Measurement(
        name="e1894 legal_tile_lays, late-game position (median/corp)",
        value=med,
        unit="ms",
        target=20,
        higher_is_better=False,
        detail=(
            f"{game.removeprefix('1894_game_end_')} action {line['id']} ({prev['phase']}), "
            f"{n} lays over {len(corps)} corporations; worst {worst} "
            f"{per_corp[worst] * 1000:.2f} ms; cold cache {cold:.2f} ms/corp"
        ),
    )


BENCHMARKS = [optimal_routes_largest_position, optimal_routes_stress, legal_tile_lays_late_game]
