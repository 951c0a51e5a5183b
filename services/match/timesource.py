"""The one injectable clock: every service that reads the time for clocks (the
rules services stamping log entries, the clock keeper firing deadlines) takes a
:class:`TimeSource`; tests pass a :class:`FakeTime` and move it by hand, so no
test sleeps to make time pass."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class TimeSource(Protocol):
    """Milliseconds since the Unix epoch (wall time: deadlines are shared
    between processes), and a way to wait until such a time."""

    def now_ms(self) -> int: ...

    async def sleep_until(self, at_ms: int, wake: asyncio.Event | None = None) -> None: ...


class WallTime:
    """The real clock (``time.time``)."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep_until(self, at_ms: int, wake: asyncio.Event | None = None) -> None:
        """Sleep until ``at_ms`` or until ``wake`` is set, whichever is first."""
        delay = max(0.0, (at_ms - self.now_ms()) / 1000)
        if wake is None:
            await asyncio.sleep(delay)
            return
        try:
            await asyncio.wait_for(wake.wait(), delay)
        except TimeoutError:
            pass


class FakeTime:
    """A clock that moves only when told (:meth:`advance`); sleepers wake when
    the time they wait for is reached."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self._now = start_ms
        self._changed = asyncio.Condition()

    def now_ms(self) -> int:
        return self._now

    async def advance(self, ms: int) -> None:
        """Move the time forward ``ms`` and wake the sleepers that are due."""
        self._now += ms
        async with self._changed:
            self._changed.notify_all()
        for _ in range(5):  # let woken tasks run
            await asyncio.sleep(0)

    def set(self, at_ms: int) -> None:
        self._now = at_ms

    async def sleep_until(self, at_ms: int, wake: asyncio.Event | None = None) -> None:
        async with self._changed:
            while self._now < at_ms and not (wake is not None and wake.is_set()):
                try:
                    await asyncio.wait_for(self._changed.wait(), 0.05)
                except TimeoutError:
                    pass


WALL = WallTime()
