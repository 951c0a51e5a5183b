"""Our 1894 replay against another engine's strict replay of the same recorded games, side by
side in one run (the issue's bar: ours at most one third of the reference's time).

Run: ``ROUNDHOUSE_E1894_REFERENCE_CMD="CMD" .venv/bin/python -m benchmarks.run
bench_e1894_reference``. ``CMD FILE`` must replay an 18xx.games JSON strictly (every action
checked, every route rebuilt and revalued) and print the differential tool's JSON line
(``docs/e1894-game.md``); when that line has ``seconds`` (the replay itself, measured by the
command, without loading its code) that is the reference's time, otherwise the command's wall
time. Without the variable this module has no benchmark (CI has no reference engine).

* ``ratio_vs_reference``: for each shared recorded game (``tests/fixtures/e1894``), rounds
  alternate one reference replay and one of ours (:func:`~services.e1894.engine.interchange.
  importer.import_game`: undo/redo filtering, every action checked, every ``run_routes``
  recomputed and compared); the figure is the sum of our medians over the sum of the
  reference's, in per cent (target <= 33.3 %); per-game medians in the detail.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import time
from pathlib import Path

from benchmarks.common import Measurement
from services.e1894.engine.interchange.importer import import_game

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "e1894"
GAMES = ("1894_game_end_final_phase", "1894_game_end_stock_market")
ROUNDS = int(os.environ.get("ROUNDHOUSE_BENCH_ROUNDS", "5"))
ENV = "ROUNDHOUSE_E1894_REFERENCE_CMD"


def _reference_seconds(cmd: str, path: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*shlex.split(cmd), str(path)], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    for line in reversed(proc.stdout.splitlines()):
        if line.strip().startswith("{"):
            out = json.loads(line)
            if not out.get("ok"):
                raise RuntimeError(f"the reference refused {path.name}: {out.get('error')}")
            return float(out.get("seconds", wall))
    raise RuntimeError(f"no JSON line from the reference on {path.name}: {proc.stderr[-300:]}")


def _ours_seconds(data: dict) -> float:
    t0 = time.perf_counter()
    imp = import_game(data)
    spent = time.perf_counter() - t0
    if imp.result() != {str(k): v for k, v in data["result"].items()}:
        raise RuntimeError("our replay's result differs from the recorded one")
    return spent


def ratio_vs_reference() -> Measurement:
    cmd = os.environ[ENV]
    ours: dict[str, list[float]] = {g: [] for g in GAMES}
    ref: dict[str, list[float]] = {g: [] for g in GAMES}
    data = {g: json.loads((FIXTURES / f"{g}.json").read_text(encoding="utf-8")) for g in GAMES}
    for g in GAMES:  # warm-up (imports, caches) on both sides
        _ours_seconds(data[g])
    for _ in range(ROUNDS):
        for g in GAMES:
            ref[g].append(_reference_seconds(cmd, FIXTURES / f"{g}.json"))
            ours[g].append(_ours_seconds(data[g]))
    med_ours = {g: statistics.median(v) for g, v in ours.items()}
    med_ref = {g: statistics.median(v) for g, v in ref.items()}
    detail = "; ".join(
        f"{g.removeprefix('1894_game_end_')}: ours {med_ours[g] * 1000:.0f} ms, "
        f"reference {med_ref[g] * 1000:.0f} ms"
        for g in GAMES
    )
    return Measurement(
        name="e1894 replay time / reference strict replay time (routes recomputed)",
        value=100 * sum(med_ours.values()) / sum(med_ref.values()),
        unit="%",
        target=100 / 3,
        higher_is_better=False,
        detail=f"{detail}; medians of {ROUNDS} alternating rounds",
    )


BENCHMARKS = [ratio_vs_reference] if os.environ.get(ENV) else []
