"""The fuzz suite's checks, shared by ``tests/fuzz/test_fuzz.py`` (bounded)
and ``benchmarks/bench_fuzz.py`` (100,000 requests):

* no answer is INTERNAL or UNKNOWN (a bug or an unmapped exception);
* a refused call (any status but OK) leaves the state as it was: tables,
  seats, each game's stream length and meta (:meth:`Target.snapshot`).
  DEADLINE_EXCEEDED is not a refusal: it is the client giving up waiting (2 s),
  and the server may still do the call after it; it is counted, not checked.
  After an accepted or abandoned call the next check starts from the state once
  it has settled: their late effects (most likely a game ended by an internal
  Resign, whose result the lobby's consumer writes on the table a moment later)
  were blamed on the next refusal (a GetView refused ``bad_game_id``, twice in
  30,000 requests).
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable

import grpc
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

from tests.fuzz.strategies import Request

FAILURES = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)


@dataclasses.dataclass
class Tally:
    """Answers by status and reason; the requests that broke a check."""

    by_code: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    by_reason: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    broken: list = dataclasses.field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.by_code.values())


def examples(strategy: SearchStrategy, count: int, each: Callable[[object], None]) -> None:
    """Draw ``count`` values of ``strategy`` and call ``each`` on every one
    (hypothesis with no deadline, no example database and no health checks:
    a fuzz run is not a property test to shrink)."""

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def one(value):
        each(value)

    one()


def check(target, request: Request, tally: Tally, state: list) -> None:
    """Send ``request`` and apply the checks; ``state`` holds the last
    snapshot (a one-item list, settled after each accepted call)."""
    outcome = target.send(request)
    tally.by_code[outcome.code.name] += 1
    tally.by_reason[outcome.reason] += 1
    if outcome.code in FAILURES:
        tally.broken.append((request, outcome, "internal or unknown"))
        return
    if outcome.code in (grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED):
        # an accepted call may have effects that land later by design (a move that ends a
        # game: the lobby's lifecycle consumer records the result on the table a moment
        # after), and an abandoned one may still land: the next check starts from the
        # state once it has settled
        state[0] = _settled(target)
        return
    now = target.snapshot()
    if now != state[0]:
        tally.broken.append((request, outcome, "a refusal changed the state"))
        state[0] = now


def _settled(target, every_s: float = 0.25, limit_s: float = 10.0):
    """The state once two snapshots ``every_s`` apart agree (at most ``limit_s``)."""
    last = target.snapshot()
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        time.sleep(every_s)
        now = target.snapshot()
        if now == last:
            return now
        last = now
    return last
