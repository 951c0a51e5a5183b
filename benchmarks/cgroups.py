"""Emulated machines: processes held to a fixed CPU quota in a cgroup of their own.

The scale-out benchmark (``bench_scale_out``) gives each replica set and each Redis node
what a machine of its own would give it: at most ``cores`` of CPU time, whatever else runs.
Linux enforces the quota with the CFS bandwidth controller:

* cgroup v1 (this machine): a folder under ``/sys/fs/cgroup/cpu/``, with
  ``cpu.cfs_period_us`` (100,000 us) and ``cpu.cfs_quota_us`` (``cores`` x the period), the
  processes listed in ``cgroup.procs``, the throttling counts in ``cpu.stat``
  (``nr_periods``, ``nr_throttled``, ``throttled_time`` in ns);
* cgroup v2: a folder under ``/sys/fs/cgroup/`` with ``cpu.max`` (``"quota period"``) and
  ``cpu.stat`` (``nr_periods``, ``nr_throttled``, ``throttled_usec``), the ``cpu``
  controller enabled in the parent's ``cgroup.subtree_control``.

:class:`CpuQuotas` makes the groups under one parent of its own and removes every one of
them when it closes, also after an exception, SIGINT or SIGTERM (:func:`removed_on_signal`):
a process still inside is moved back to the parent's parent first. Without root or without
a writable CPU controller, :func:`unavailable` says why, and the benchmark skips.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import psutil

V1_ROOT = Path("/sys/fs/cgroup/cpu")
V2_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
"""The CFS period (us): the quota is enforced over every 100 ms."""
PRIORITY_SHARES = 262_144
"""``cpu.shares`` (v1, the kernel's maximum) of the parent group, ``cpu.weight`` 10,000
(v2) likewise: against the machine's other busy processes, each of which weighs 1,024
(v1) or 100 (v2), the groups get the CPU their quotas allow, as machines of their own
would; without it, a group of sets weighs as much as one other busy process."""


def _version() -> int | None:
    """1 or 2 for the CPU controller this machine has writable, None for neither."""
    if (V1_ROOT / "cpu.cfs_quota_us").exists() and os.access(V1_ROOT, os.W_OK):
        return 1
    controllers = V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        if os.access(V2_ROOT, os.W_OK):
            return 2
    return None


def unavailable() -> str | None:
    """Why no CPU quota can be set here (``None``: it can): not root, or no writable cgroup
    CPU controller (neither v1 ``/sys/fs/cgroup/cpu/cpu.cfs_quota_us`` nor v2
    ``cpu.max``)."""
    if os.geteuid() != 0:
        return "not root: cgroups cannot be made"
    if _version() is None:
        return (
            "no writable cgroup CPU controller (neither v1 /sys/fs/cgroup/cpu nor v2 "
            "/sys/fs/cgroup with the cpu controller)"
        )
    return None


@dataclasses.dataclass(frozen=True)
class Throttling:
    """A group's ``cpu.stat`` counters: enforcement periods, periods in which it hit the
    quota, and the time it was held back (s)."""

    periods: int
    throttled: int
    throttled_s: float

    def __sub__(self, other: Throttling) -> Throttling:
        return Throttling(
            self.periods - other.periods,
            self.throttled - other.throttled,
            self.throttled_s - other.throttled_s,
        )

    @property
    def share(self) -> float:
        """Share of the periods in which the group used its whole quota (0-1)."""
        return self.throttled / self.periods if self.periods else 0.0


@dataclasses.dataclass
class Group:
    """One emulated machine: its folder and its quota (cores; 0: none)."""

    name: str
    path: Path
    cores: float
    version: int

    def add(self, pid: int, with_children: bool = True) -> int:
        """Move a process (every thread of it), and with ``with_children`` every process
        below it, into this group; processes they start later are born in it. Returns how
        many processes were moved (one that exited meanwhile is passed over)."""
        pids = [pid]
        if with_children:
            with contextlib.suppress(psutil.Error):
                pids += [c.pid for c in psutil.Process(pid).children(recursive=True)]
        moved = 0
        for p in pids:
            try:
                (self.path / "cgroup.procs").write_text(f"{p}\n")
                moved += 1
            except (ProcessLookupError, OSError):
                continue
        return moved

    def pids(self) -> list[int]:
        text = (self.path / "cgroup.procs").read_text()
        return [int(x) for x in text.split()]

    def throttling(self) -> Throttling:
        stat = dict(
            line.split() for line in (self.path / "cpu.stat").read_text().splitlines() if line
        )
        if self.version == 1:
            held = int(stat.get("throttled_time", 0)) / 1e9
        else:
            held = int(stat.get("throttled_usec", 0)) / 1e6
        return Throttling(int(stat.get("nr_periods", 0)), int(stat.get("nr_throttled", 0)), held)


class CpuQuotas:
    """Groups with fixed CPU quotas under one parent group ``name`` (made here, so nothing
    else's groups are touched; with :data:`PRIORITY_SHARES`, so that the machine's other
    processes cannot take the CPU the quotas allow); a context manager that removes them all.

    Raises:
        RuntimeError: :func:`unavailable` gives a reason.
    """

    def __init__(self, name: str) -> None:
        why = unavailable()
        if why:
            raise RuntimeError(why)
        self.version = _version() or 1
        base = V1_ROOT if self.version == 1 else V2_ROOT
        self.parent = base / name
        self.groups: list[Group] = []
        self.parent.mkdir(exist_ok=True)
        if self.version == 2:
            (self.parent / "cgroup.subtree_control").write_text("+cpu\n")
            (self.parent / "cpu.weight").write_text("10000\n")
        else:
            (self.parent / "cpu.shares").write_text(f"{PRIORITY_SHARES}\n")

    def group(self, name: str, cores: float | None) -> Group:
        """A new group held to ``cores`` of CPU (e.g. 0.3: 30 ms of every 100 ms); ``None``:
        no quota (the group only shares the parent's priority: the load generator).

        Raises:
            ValueError: ``cores`` is not positive.
        """
        if cores is not None and cores <= 0:
            raise ValueError(f"a CPU quota must be positive, not {cores}")
        path = self.parent / name
        path.mkdir(exist_ok=True)
        quota = -1 if cores is None else max(1000, round(cores * PERIOD_US))
        if self.version == 1:
            (path / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        else:
            (path / "cpu.max").write_text(f"{'max' if quota < 0 else quota} {PERIOD_US}\n")
        group = Group(name, path, cores or 0.0, self.version)
        self.groups.append(group)
        return group

    def release(self, pid: int) -> None:
        """Move a process out of every group made here (to the parent's parent), e.g. the
        load generator before it starts the next stack: a process starts in its parent's
        group."""
        with contextlib.suppress(OSError):
            (self.parent.parent / "cgroup.procs").write_text(f"{pid}\n")

    def close(self) -> None:
        """Remove every group made here and the parent: a process still inside one is
        moved to the parent's parent first (it keeps running, without a quota)."""
        outside = self.parent.parent / "cgroup.procs"
        for group in [*self.groups, None]:
            path = self.parent if group is None else group.path
            if not path.exists():
                continue
            for _ in range(50):  # a process may be forking while it is moved out
                with contextlib.suppress(OSError):
                    pids = (path / "cgroup.procs").read_text().split()
                    if not pids:
                        break
                    for pid in pids:
                        with contextlib.suppress(OSError):
                            outside.write_text(f"{pid}\n")
            with contextlib.suppress(OSError):
                path.rmdir()
        self.groups.clear()

    def __enter__(self) -> CpuQuotas:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def leftover(name: str) -> list[Path]:
    """Groups named ``name`` (a :class:`CpuQuotas` parent) still on this machine."""
    return [p for p in (V1_ROOT / name, V2_ROOT / name) if p.is_dir()]


@contextlib.contextmanager
def removed_on_signal() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`KeyboardInterrupt` as SIGINT does, so the
    ``with`` blocks around it (the :class:`CpuQuotas`, the stacks) unwind and clean up."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
