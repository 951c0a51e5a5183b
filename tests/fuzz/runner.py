"""The fuzz suite's checks, shared by ``tests/fuzz/test_fuzz.py`` (bounded)
and ``benchmarks/bench_fuzz.py`` (100,000 requests):

* no answer is INTERNAL or UNKNOWN (a bug or an unmapped exception);
* a refused call (any status but OK) leaves the state as it was: tables,
  seats, each game's stream length and meta (:meth:`Target.snapshot`).
  DEADLINE_EXCEEDED is not a refusal: it is the client giving up waiting (2 s),
  and the server may still have done the call; it is counted, not checked.
"""

from __future__ import annotations

import collections
import dataclasses

import grpc

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


def check(target, request: Request, tally: Tally, state: list) -> None:
    """Send ``request`` and apply the checks; ``state`` holds the last
    snapshot (a one-item list, updated after each accepted call)."""
    outcome = target.send(request)
    tally.by_code[outcome.code.name] += 1
    tally.by_reason[outcome.reason] += 1
    if outcome.code in FAILURES:
        tally.broken.append((request, outcome, "internal or unknown"))
        return
    now = target.snapshot()
    refused = outcome.code not in (grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED)
    if refused and now != state[0]:
        tally.broken.append((request, outcome, "a refusal changed the state"))
    state[0] = now
