"""``bench_scale_out`` at a tiny size, so that it cannot rot (issue 28): K = 1 and 2 replica
sets under CPU quotas for a few seconds each, on a real stack and Redis Cluster; and its
CPU-quota groups, which must hold a quota, and go away whatever happens."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import psutil
import pytest

from benchmarks import bench_scale_out, cgroups
from benchmarks.bench_scale_out import ScaleSettings, efficiency_line, run_scale_out

pytestmark = pytest.mark.integration


def test_a_group_holds_its_quota_and_is_removed_after_an_error():
    """A busy loop in a group of 0.2 core gets about 0.2 of a core (throttled in most
    periods), and an exception inside the ``with`` still removes the group (its process
    moved out first, still running)."""
    assert cgroups.unavailable() is None, cgroups.unavailable()  # CI runs as root on v1
    name = f"roundhouse-test-{os.getpid()}"
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with pytest.raises(RuntimeError, match="on purpose"), cgroups.CpuQuotas(name) as quotas:
            group = quotas.group("busy", 0.2)
            assert group.add(loop.pid) == 1
            assert group.pids() == [loop.pid]
            before = group.throttling()
            cpu0 = _cpu_s(loop.pid)
            time.sleep(2.0)
            used = (_cpu_s(loop.pid) - cpu0) / 2.0
            held = group.throttling() - before
            assert 0.1 < used < 0.3, used  # 0.2 core, not the whole core it wants
            assert held.share > 0.8, held
            raise RuntimeError("on purpose")
        assert cgroups.leftover(name) == []
        assert loop.poll() is None  # moved out, not killed
    finally:
        loop.kill()
        loop.wait()


def test_a_quota_must_be_positive_and_none_means_no_quota_at_the_groups_priority():
    name = f"roundhouse-test-{os.getpid()}-q"
    with cgroups.CpuQuotas(name) as quotas:
        with pytest.raises(ValueError, match="positive"):
            quotas.group("none", 0)
        free = quotas.group("free", None)
        assert (free.path / "cpu.cfs_quota_us").read_text().strip() == "-1"
        shares = (quotas.parent / "cpu.shares").read_text().strip()
        assert int(shares) == cgroups.PRIORITY_SHARES
    assert cgroups.leftover(name) == []


def test_without_root_the_benchmark_says_so_and_gives_no_figure(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(bench_scale_out, "_results", {})
    m = bench_scale_out.bench_scale_out()
    assert m.skipped == "not root: cgroups cannot be made"
    assert m.ok and m.value != m.value  # no figure (NaN), and not a failure
    assert m.value_text.startswith("skipped: not root")


def test_the_benchmark_runs_k1_and_k2_for_a_few_seconds_and_cleans_up(capsys):
    s = ScaleSettings(
        sets=[1, 2],
        games_per_set=4,
        worker_concurrency=1,
        warmup_s=2,
        measure_s=4,
        paced_warmup_s=2,
        paced_measure_s=5,
        background_loops=1,
    )
    runs = run_scale_out(s)
    assert sorted(runs) == [1, 2]
    for k, r in runs.items():
        assert r.saturated.moves > 0, k
        # the 80% phase paced the people: first at the saturated cycle / 0.8, then as
        # corrected by what that gave (0 s when the waiting alone fills the cycle)
        people = s.games_per_set * k
        assert r.person_rate > 0, k
        assert r.cycle_target_s == pytest.approx(people / (r.person_rate * s.paced_share))
        assert r.think_s == bench_scale_out.think_for(
            r.cycle_target_s, r.cycle_target_s, people, r.cycle_rate
        )
        assert r.paced.seconds >= 5, k
        sets = [t for n, t in r.throttling.items() if "-set-" in n]
        assert len(sets) == k and all(t.periods > 0 for t in sets)  # the quotas were enforced
        assert {"gateway", "lobby", "dispatcher", "worker"} <= set(r.saturated.cpu)
    line = efficiency_line(runs)
    assert re.fullmatch(r"scale-out efficiency: K=2 \d+\.\d\d", line), line
    assert line in capsys.readouterr().out
    assert cgroups.leftover(f"roundhouse-bench-{os.getpid()}") == []
    # the background loop is stopped with the run, and the steal share was read
    assert not [p for p in psutil.Process().children() if "while True" in " ".join(p.cmdline())]
    assert all(0 <= r.steal_share <= 1 for r in runs.values())


def test_the_think_time_is_corrected_by_the_waiting_seen():
    # 10 people thinking 20 s moved 0.4 times a second: a 25 s cycle, 5 s of it waiting;
    # for a 30 s cycle they should think 25 s
    assert bench_scale_out.think_for(30.0, 20.0, 10, 0.4) == pytest.approx(25.0)
    assert bench_scale_out.think_for(3.0, 20.0, 10, 0.4) == 0.0  # never negative
    assert bench_scale_out.think_for(30.0, 20.0, 10, 0.0) == 20.0  # nothing seen: unchanged


def _cpu_s(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system
