"""The fuzz suite, bounded (issue 13, item 9): hypothesis-driven hostile
requests to the lobby, a rules service and the HTTP gateway (random bytes, wrong types, huge
and deep values, unicode edge cases with lone surrogates, unknown ids, wrong
tokens). No INTERNAL or UNKNOWN answer; a refusal changes nothing; the
services' memory returns to its baseline (what they keep of the fuzzed calls,
measured by ``tests/fuzz/memory.py``, stays under :data:`RETAINED_MB`). The
full run is ``benchmarks/bench_fuzz.py`` (100,000 requests)."""

from __future__ import annotations

import os

import pytest

from services.platform import grpc_errors
from services.platform.db import upgrade
from tests.fuzz import gateway, runner
from tests.fuzz.memory import Retained, retained
from tests.fuzz.strategies import requests
from tests.fuzz.targets import LOBBY_SERVICE, RULES_SERVICE, LobbyAndRules, request_classes

EXAMPLES = int(os.environ.get("ROUNDHOUSE_TEST_FUZZ_EXAMPLES", "150"))
"""Requests per service in ``make test`` (``make bench`` sends 100,000:
``benchmarks/bench_fuzz.py``)."""

WARM_UP = 40
"""Requests per service before the memory baseline: the first calls fill
caches (SQLAlchemy's compiled statements, gRPC's method handlers) once."""

RETAINED_MB = 1.0
"""At most this much of the memory allocated during a service's measured
fuzz requests may still be alive after them (measured: about 0.1 MB after 150
to 300 requests; an upper bound on growth, since a bounded cache replacing its
entries counts its new ones)."""


@pytest.fixture(scope="module")
def target(tmp_path_factory, redis_url):
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('fuzz') / 'roundhouse.db'}"
    upgrade(url)
    with LobbyAndRules(url, redis_url, "fuzz-test") as t:
        yield t


def _fuzz(target, service, credentials, examples: int) -> tuple[runner.Tally, Retained]:
    """Fuzz ``service``: :data:`WARM_UP` requests, then ``examples`` more with
    the memory they leave behind measured."""
    tally, state = runner.Tally(), [target.snapshot()]
    strategy = requests(service, request_classes(service), target.known, credentials)

    def run(n: int) -> None:
        runner.examples(strategy, n, lambda request: runner.check(target, request, tally, state))

    run(WARM_UP)
    with retained() as memory:
        run(examples)
    return tally, memory


def test_fuzzed_lobby_requests_get_no_internal_answer_and_refusals_change_nothing(target):
    tally, memory = _fuzz(target, LOBBY_SERVICE, target.lobby_credentials, EXAMPLES)
    assert tally.broken == []
    assert tally.total >= WARM_UP + EXAMPLES
    assert len(tally.by_code) > 2  # the requests reached more than one kind of answer
    assert memory.mb <= RETAINED_MB, memory.describe()


def test_fuzzed_rules_requests_get_no_internal_answer_and_refusals_change_nothing(target):
    tally, memory = _fuzz(target, RULES_SERVICE, target.rules_credentials, EXAMPLES)
    assert tally.broken == []
    assert tally.total >= WARM_UP + EXAMPLES
    assert memory.mb <= RETAINED_MB, memory.describe()


def test_the_memory_check_sees_a_service_that_keeps_what_it_refuses(target, monkeypatch):
    """The measure is not blind: a lobby that keeps 32 kB of every refusal's
    message (a leak planted in the error path every refusal takes) fails it."""
    kept: list[str] = []
    real = grpc_errors.bounded

    def leaky(text: str, *args, **kwargs) -> str:
        kept.append(text + " " * 32_000)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(grpc_errors, "bounded", leaky)
    tally, memory = _fuzz(target, LOBBY_SERVICE, target.lobby_credentials, 60)
    refused = tally.total - tally.by_code["OK"]
    assert refused >= 30 and len(kept) >= 30
    assert memory.mb > RETAINED_MB, memory.describe()
    leak_line = f"test_fuzz.py:{leaky.__code__.co_firstlineno + 1}"
    assert memory.top[0][2].endswith(leak_line), memory.describe()


@pytest.fixture(scope="module")
def http_target(tmp_path_factory, redis_url):
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('fuzz-http') / 'roundhouse.db'}"
    upgrade(url)
    with gateway.Gateway(url, redis_url, "fuzz-http-test") as g:
        yield g


def test_fuzzed_http_requests_get_no_5xx_and_refusals_change_nothing(http_target):
    tally, state = runner.Tally(), [http_target.snapshot()]
    runner.examples(
        gateway.http_requests(http_target),
        EXAMPLES,
        lambda request: gateway.check(http_target, request, tally, state),
    )
    assert tally.broken == []
    assert tally.total >= EXAMPLES // 2  # (a few the HTTP client would not send)
    assert len(tally.by_code) > 2
