"""CPU per HTTP move of two or more trees side by side: ``bench_gateway``'s probe
(``ROUNDHOUSE_BENCH_GATEWAY_RATES``, one phase at a fixed offered rate that every version
achieves) run on each tree in turn, rounds alternating the order, medians per process.

Each probe starts its own stack from its tree (the processes import that tree's code and
its generated protobuf code, made in ``<tree>/gen/python`` when missing), so the figures
compare the code, on the same machine, within minutes of each other. The probe's own
code (the load generator) is this checkout's ``benchmarks/bench_gateway.py`` for every tree.

Run (each tree a checkout of one revision, e.g. ``git archive main | tar -x -C /tmp/before``;
``.`` for this checkout)::

    nice -n 10 .venv/bin/python -m benchmarks.gateway_side_by_side /tmp/before /tmp/after

With ``ROUNDHOUSE_BENCH_TOGETHER=1`` the trees' probes of a round run at the same time (their
timed parts start together), so each meets the same load from the rest of a shared machine;
each then also loads the other, so the absolute figures are those of a busier machine.

Options (environment): ``ROUNDHOUSE_BENCH_GATEWAY_RATES`` (default 100 moves/s; ``events:100``
for the event path),
``ROUNDHOUSE_BENCH_SECONDS`` (timed seconds per probe, default 12), ``ROUNDHOUSE_BENCH_ROUNDS``
(default 3).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PROBE = HERE / "benchmarks" / "bench_gateway.py"
LOAD_GENERATOR = "load generator"


def _gen(tree: Path) -> Path:
    """``tree``'s generated protobuf code (made with grpc_tools when missing)."""
    gen = tree / "gen" / "python"
    if not (gen / "roundhouse" / "v1" / "lobby_pb2.py").exists():
        (gen / "roundhouse" / "v1").mkdir(parents=True, exist_ok=True)
        for package in (gen / "roundhouse", gen / "roundhouse" / "v1"):
            (package / "__init__.py").touch()
        protos = sorted(str(p.relative_to(tree)) for p in (tree / "proto").rglob("*.proto"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                "-Iproto",
                f"--python_out={gen}",
                f"--pyi_out={gen}",
                f"--grpc_python_out={gen}",
                *protos,
            ],
            cwd=tree,
            check=True,
        )
    return gen


def _start(tree: Path, sync: str = "") -> subprocess.Popen:
    """One probe phase on ``tree``'s stack (``bench_gateway``'s probe), started."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{tree}{os.pathsep}{_gen(tree)}",
        "ROUNDHOUSE_BENCH_GATEWAY_RATES": os.environ.get("ROUNDHOUSE_BENCH_GATEWAY_RATES", "100"),
        "ROUNDHOUSE_BENCH_SECONDS": os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "12"),
    }
    if sync:
        env["ROUNDHOUSE_BENCH_GATEWAY_SYNC"] = sync
    # cwd = the tree: ``python -m`` puts the working directory first on the processes' path
    return subprocess.Popen(
        [sys.executable, str(PROBE)], cwd=tree, env=env, stdout=subprocess.PIPE, text=True
    )


def _result(run: subprocess.Popen) -> dict:
    out, _ = run.communicate()
    if run.returncode:
        raise RuntimeError(f"a probe failed (exit {run.returncode})")
    return json.loads(out.strip().splitlines()[-1])


def probe(tree: Path) -> dict:
    """One probe phase on ``tree``'s stack (the JSON line of ``bench_gateway``'s probe)."""
    return _result(_start(tree))


def probe_together(trees: list[Path]) -> list[dict]:
    """One probe phase on each tree's stack, all at once (their timed parts start together),
    so that every tree meets the same load from the rest of the machine."""
    with tempfile.TemporaryDirectory() as folder:
        runs = [_start(tree, f"{folder}:{len(trees)}") for tree in trees]
        return [_result(run) for run in runs]


def main(argv: list[str]) -> None:
    trees = [Path(a).resolve() for a in argv]
    rounds = int(os.environ.get("ROUNDHOUSE_BENCH_ROUNDS", "3"))
    runs: dict[Path, list[dict]] = {t: [] for t in trees}
    together = bool(os.environ.get("ROUNDHOUSE_BENCH_TOGETHER"))
    for r in range(rounds):
        order = trees if r % 2 == 0 else trees[::-1]
        phases = probe_together(order) if together else [probe(tree) for tree in order]
        for tree, phase in zip(order, phases, strict=True):
            runs[tree].append(phase)
            print(
                f"round {r + 1} {tree.name}: {phase['achieved']} moves/s, stack "
                f"{phase['stack_cpu_ms_per_move']:.2f} ms/move, load generator "
                f"{phase['cpu_ms_per_move'].get(LOAD_GENERATOR, 0):.2f} "
                f"(load {os.getloadavg()[0]:.1f}, {time.strftime('%H:%M:%S')})",
                flush=True,
            )
    names = sorted({n for t in trees for p in runs[t] for n in p["cpu_ms_per_move"]})
    print("\nCPU ms per move, medians of", rounds, "rounds")
    print(f"{'process':<20}" + "".join(f"{t.name[:14]:>16}" for t in trees))
    rows = [n for n in names if n != LOAD_GENERATOR] + ["stack total", LOAD_GENERATOR]
    for name in rows:
        cells = []
        for t in trees:
            if name == "stack total":
                values = [p["stack_cpu_ms_per_move"] for p in runs[t]]
            else:
                values = [p["cpu_ms_per_move"].get(name, 0.0) for p in runs[t]]
            cells.append(f"{statistics.median(values):>16.3f}")
        print(f"{name:<20}" + "".join(cells))
    for key in ("move_p50_ms", "move_p99_ms", "turn_p50_ms", "turn_p99_ms"):
        cells = [statistics.median(p[key] or 0 for p in runs[t]) for t in trees]
        print(f"{key:<20}" + "".join(f"{c:>16.2f}" for c in cells))


if __name__ == "__main__":
    main(sys.argv[1:])
