"""Supervised asyncio background tasks: a death is never silent.

Every server runs its long-lived loops (the lobby's result consumer, the
dispatcher's consumer and sweeper) through a :class:`Supervisor`:

* a task that raises is logged at ERROR with its traceback, counted
  (``roundhouse_background_task_deaths_total{task}``) and marked down
  (``roundhouse_background_task_up{task}`` = 0), and :attr:`Supervisor.healthy`
  turns False, which :class:`services.platform.server.GrpcServer` reports as
  NOT_SERVING on the health service;
* a task with ``restart=True`` is started again after a back-off (tenacity's
  exponential wait, from ``backoff_s`` up to ``max_backoff_s``; a run that
  lasted ``reset_after_s`` starts the back-off afresh); it is up again once
  restarted;
* a task that returns normally is done (marked down only if ``restart`` is
  False and the supervisor is not stopping: a loop that should run forever
  ended).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from prometheus_client import Counter, Gauge
from tenacity import AsyncRetrying, retry_if_exception, wait_exponential

from services.platform.logging import get_logger

log = get_logger("supervise")

UP = Gauge("roundhouse_background_task_up", "1 while a background task runs", ["task"])
DEATHS = Counter(
    "roundhouse_background_task_deaths_total", "Background tasks that raised", ["task"]
)

Factory = Callable[[], Awaitable[object]]


class _RanLong(Exception):
    """A failure after a long healthy run: restart with a fresh back-off."""


class Supervisor:
    """Runs named background tasks (see the module docstring).

    Args:
        owner: the process's short name, for logs.
        backoff_s: first wait before a restart (seconds).
        max_backoff_s: longest wait between restarts (seconds).
        reset_after_s: a run at least this long resets the back-off (seconds). 10 s by
            default: a run that long found what it needed (Redis, the database), so the next
            failure is a new outage, and it is retried after ``backoff_s`` again, not after the
            longest wait that a string of earlier, separate outages had built up (at 60 s,
            four Redis restarts 20 s apart left the lobby's consumers 30 s away from their next
            try, and the lobby NOT_SERVING that long after Redis was back).
    """

    def __init__(
        self,
        owner: str,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        reset_after_s: float = 10.0,
    ) -> None:
        self.owner = owner
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.reset_after_s = reset_after_s
        self._tasks: dict[str, asyncio.Task] = {}
        self._up: dict[str, bool] = {}
        self._stopping = False

    @property
    def healthy(self) -> bool:
        """True while every supervised task that should run is running."""
        return all(self._up.values())

    def down(self) -> list[str]:
        """Names of the tasks that are not running now."""
        return [name for name, up in self._up.items() if not up]

    def start(self, name: str, factory: Factory, restart: bool = True) -> asyncio.Task:
        """Run ``await factory()`` as the task ``name`` (see the module docstring)."""
        self._set(name, True)
        task = asyncio.create_task(self._run(name, factory, restart), name=f"{self.owner}:{name}")
        self._tasks[name] = task
        return task

    async def stop(self, timeout_s: float = 5.0) -> None:
        """Cancel the tasks that have not finished and wait for them (at most
        ``timeout_s``)."""
        self._stopping = True
        tasks = [t for t in self._tasks.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    async def wait(self, name: str, timeout_s: float) -> None:
        """Wait for task ``name`` to end by itself (e.g. after its stop event),
        cancelling it after ``timeout_s``."""
        task = self._tasks[name]
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except TimeoutError:
            task.cancel()

    def _set(self, name: str, up: bool) -> None:
        self._up[name] = up
        UP.labels(name).set(1 if up else 0)

    async def _once(self, name: str, factory: Factory) -> None:
        started = time.monotonic()
        try:
            await factory()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._set(name, False)
            DEATHS.labels(name).inc()
            log.exception("background task died", owner=self.owner, task=name)
            if time.monotonic() - started >= self.reset_after_s:
                raise _RanLong() from exc
            raise

    async def _run(self, name: str, factory: Factory, restart: bool) -> None:
        if not restart:
            try:
                await self._once(name, factory)
            except _RanLong:
                pass
            except Exception:  # noqa: BLE001 - logged and marked down by _once
                pass
            else:
                if not self._stopping:
                    self._set(name, False)
                    log.error("background task ended", owner=self.owner, task=name)
            return
        while not self._stopping:
            retrying = AsyncRetrying(
                retry=retry_if_exception(_restartable),
                wait=wait_exponential(multiplier=self.backoff_s, max=self.max_backoff_s),
                before_sleep=lambda state: log.warning(
                    "restarting background task",
                    owner=self.owner,
                    task=name,
                    attempt=state.attempt_number,
                    wait_s=round(state.upcoming_sleep, 2),
                ),
            )
            try:
                async for attempt in retrying:
                    with attempt:
                        self._set(name, True)
                        await self._once(name, factory)
                return  # ended normally
            except _RanLong:
                continue  # restart at once, with a fresh back-off


def _restartable(exc: BaseException) -> bool:
    """Restart after a failure, never after a cancellation (stop)."""
    return isinstance(exc, Exception) and not isinstance(exc, _RanLong)
