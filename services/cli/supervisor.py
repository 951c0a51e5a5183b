"""Keep a :class:`~services.cli.launcher.Stack`'s processes running: a process that exits
by itself (a crash, ``kill -9``, the Celery worker losing its broker) is started again
with the same command and settings, as Kubernetes restarts a pod's container.

Restarts back off exponentially (tenacity's :class:`~tenacity.wait_exponential`: 0.5 s,
1 s, 2 s ... up to 30 s) while a process keeps crashing, so a process that cannot start
costs one start per backoff, not a hot loop; a process that ran :attr:`Supervisor.stable_s`
seconds before it exited starts over at the first delay. Each exit and restart is logged
with structlog (``process_exited`` / ``process_restarted``, with the process name, exit
status, restart count and backoff in seconds).

:meth:`Supervisor.status` reports each process (name, pid, state, restarts, start time):
``roundhouse status`` shows it from the state file ``roundhouse up`` keeps.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import psutil
from tenacity import RetryCallState, wait_exponential
from tenacity.wait import wait_base

from services.platform.logging import get_logger

if TYPE_CHECKING:
    from services.cli.launcher import Proc, Stack

RUNNING, BACKOFF, STOPPED = "running", "backoff", "stopped"

log = get_logger("roundhouse.supervisor")


def default_wait() -> wait_base:
    """The restart backoff: 0.5 s after the first crash in a row, doubling up to 30 s."""
    return wait_exponential(multiplier=0.5, min=0.5, max=30)


def backoff_s(wait: wait_base, crashes_in_row: int) -> float:
    """The delay ``wait`` gives before restart number ``crashes_in_row`` (1 = the first
    crash after a stable run), in seconds."""
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = crashes_in_row
    return float(wait(state))


@dataclasses.dataclass
class Child:
    """What the supervisor knows about one named process."""

    name: str
    proc: Proc
    started: float
    """Its start time (seconds since the epoch, as psutil's ``create_time``)."""
    restarts: int = 0
    crashes_in_row: int = 0
    state: str = RUNNING
    last_exit: int | None = None
    restart_at: float = 0.0
    """When to start it again (``time.monotonic``), in state ``backoff``."""
    backoff_s: float = 0.0
    starts: list[float] = dataclasses.field(default_factory=list)
    """``time.monotonic`` of every start this supervisor made (restarts only)."""


def _create_time(pid: int) -> float:
    try:
        return psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return time.time()


class Supervisor:
    """Restart the processes of ``stack`` that exit by themselves.

    Args:
        stack: a started stack (its :attr:`~Stack.procs` are watched; restarts go
            through :meth:`Stack.respawn`, which replaces the process in ``procs``).
        watch: which process names to restart (default: all).
        wait: the backoff strategy (a tenacity wait; attempt n = the n-th crash in a row).
        stable_s: a process that ran this long before exiting starts over at the first delay.
        every_s: how often the processes are looked at, in seconds.
        on_restart: called with ``(name, exit status)`` after each restart.
    """

    def __init__(
        self,
        stack: Stack,
        watch: Callable[[str], bool] = lambda name: True,
        wait: wait_base | None = None,
        stable_s: float = 30.0,
        every_s: float = 0.2,
        on_restart: Callable[[str, int], None] | None = None,
    ) -> None:
        self.stack = stack
        self.watch = watch
        self.wait = wait or default_wait()
        self.stable_s = stable_s
        self.every_s = every_s
        self.on_restart = on_restart
        self.children: dict[str, Child] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._adopt()

    def _adopt(self) -> None:
        for proc in self.stack.procs:
            if proc.name not in self.children:
                self.children[proc.name] = Child(
                    proc.name, proc, _create_time(proc.popen.pid), last_exit=None
                )

    def start(self) -> None:
        """Watch in a daemon thread until :meth:`stop`."""
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (before the stack stops its processes: none is restarted then)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def _run(self) -> None:
        while not self._stopping.wait(self.every_s):
            self.tick()

    def tick(self) -> None:
        """One look: note the watched processes that exited, restart those whose backoff ran out."""
        now = time.monotonic()
        with self._lock:
            self._adopt()
            for child in self.children.values():
                if self._stopping.is_set():
                    return
                if not self.watch(child.name):
                    continue
                if child.state == RUNNING:
                    code = child.proc.popen.poll()
                    if code is None:
                        continue
                    ran_s = time.time() - child.started
                    child.crashes_in_row = 1 if ran_s >= self.stable_s else child.crashes_in_row + 1
                    child.backoff_s = backoff_s(self.wait, child.crashes_in_row)
                    child.state, child.last_exit = BACKOFF, code
                    child.restart_at = now + child.backoff_s
                    log.warning(
                        "process_exited",
                        process=child.name,
                        exit_status=code,
                        ran_s=round(ran_s, 1),
                        crashes_in_row=child.crashes_in_row,
                        backoff_s=child.backoff_s,
                    )
                if child.state == BACKOFF and now >= child.restart_at:
                    proc = self.stack.respawn(child.proc)
                    child.proc, child.state = proc, RUNNING
                    child.started = _create_time(proc.popen.pid)
                    child.restarts += 1
                    child.starts.append(time.monotonic())
                    log.warning(
                        "process_restarted",
                        process=child.name,
                        pid=proc.popen.pid,
                        restarts=child.restarts,
                        last_exit=child.last_exit,
                    )
                    if self.on_restart is not None:
                        self.on_restart(child.name, child.last_exit or 0)

    def status(self) -> list[dict]:
        """One dict per process: ``name``, ``pid``, ``state`` (``running``, ``backoff``:
        exited, waiting to start again; ``stopped``: exited and not watched), ``restarts``,
        ``started`` (seconds since the epoch), ``last_exit`` (exit status or None) and
        ``backoff_s`` (the current or last restart delay, seconds)."""
        with self._lock:
            self._adopt()
            rows = []
            for c in self.children.values():
                state = c.state
                if state == RUNNING and c.proc.popen.poll() is not None:
                    state = BACKOFF if self.watch(c.name) else STOPPED
                rows.append(
                    {
                        "name": c.name,
                        "pid": c.proc.popen.pid,
                        "state": state,
                        "restarts": c.restarts,
                        "started": c.started,
                        "last_exit": c.last_exit,
                        "backoff_s": c.backoff_s,
                    }
                )
            return rows
