"""Memory the services keep from a fuzz run (issue 13, item 9: "memory that
returns to its baseline").

The fuzz target runs the services in the fuzzer's own process
(``tests/fuzz/targets.py``), so the resident size cannot tell the services'
memory from hypothesis's own record of what it generated (drawing 20,000
requests without sending any grows the process by about 190 MB). This measure
uses :mod:`tracemalloc` instead:

* tracing starts after a warm-up, so what it reports at the end is only what
  was allocated during the measured requests and is *still alive* after a
  garbage collection: memory that did not return to the baseline;
* allocations whose innermost :data:`FRAMES` frames pass through hypothesis or
  the fuzz suite's client side (drawing, sending, tallying) are left
  out; what remains is the services' (the lobby's and rules service's
  handlers, SQLAlchemy, redis-py, gRPC's server).

What is legitimately kept is bounded: SQLAlchemy's compiled-statement cache
(an LRU of 500 per engine) fills with the statement shapes the requests reach,
and work still in flight (asyncio's timer handles, aiosqlite's queue). A leak of the
requests themselves (the fuzzer sends values up to 256 KiB) shows at once;
``test_fuzz.py`` checks that the measure sees a deliberate one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import time
import tracemalloc
from collections.abc import Iterator

FRAMES = 12
"""Frames kept per allocation: enough to see the fuzz client's frames
(``runner.py``) above a client-side allocation in gRPC's channel or protobuf;
each frame kept makes tracing dearer (traced, the fuzz ran about 11
requests a second here)."""

CLIENT_SIDE = tuple(
    tracemalloc.Filter(False, pattern, all_frames=True)
    for pattern in (
        "*/hypothesis/*",
        "*/tests/fuzz/runner.py",  # sending and tallying
        "*/tests/fuzz/strategies.py",  # drawing
        "*/benchmarks/bench_fuzz.py",
        "*/rich/*",  # the benchmark's progress bar
        tracemalloc.__file__,
    )
)
"""Left out: an allocation with one of these files among its frames. Not the
target's own module (``targets.py``): the services' thread starts there, so
it is at the bottom of every server-side stack too."""


@dataclasses.dataclass
class Retained:
    """Memory allocated while measuring and still alive at the end.

    Attributes:
        bytes: the total, in bytes, of the services' allocations only.
        top: the largest sources, as ``(bytes, blocks, "file:line")`` of the
            innermost frame, largest first (at most 10).
    """

    bytes: int = 0
    top: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)

    @property
    def mb(self) -> float:
        return self.bytes / 1e6

    def describe(self) -> str:
        lines = [f"{self.mb:.2f} MB retained; largest sources:"]
        lines += [
            f"  {size / 1e3:9.1f} kB in {count:5} blocks at {where}"
            for size, count, where in self.top
        ]
        return "\n".join(lines)


@contextlib.contextmanager
def retained(settle_s: float = 0.5) -> Iterator[Retained]:
    """Measure what the services keep of the calls made inside the block.

    Yields a :class:`Retained` filled in when the block ends (after a garbage
    collection and ``settle_s`` seconds for the services' late work: a
    consumer writing a result, a closing stream). Raises ``RuntimeError`` if
    tracemalloc is already tracing (the measure would include older memory).
    """
    if tracemalloc.is_tracing():
        raise RuntimeError("tracemalloc is already tracing")
    out = Retained()
    gc.collect()
    tracemalloc.start(FRAMES)
    try:
        yield out
        gc.collect()
        time.sleep(settle_s)
        gc.collect()
        snapshot = tracemalloc.take_snapshot().filter_traces(CLIENT_SIDE)
    finally:
        tracemalloc.stop()
    stats = snapshot.statistics("lineno")
    out.bytes = sum(s.size for s in stats)
    out.top = [(s.size, s.count, str(s.traceback[0])) for s in stats[:10]]
