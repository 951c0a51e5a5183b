"""The fuzz suite, bounded (issue 13, item 9): hypothesis-driven hostile
requests to the lobby, a rules service and the HTTP gateway (random bytes, wrong types, huge
and deep values, unicode edge cases with lone surrogates, unknown ids, wrong
tokens). No INTERNAL or UNKNOWN answer; a refusal changes nothing. The full
run is ``benchmarks/bench_fuzz.py`` (100,000 requests)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from services.common.db import upgrade
from tests.fuzz import gateway, runner
from tests.fuzz.strategies import requests
from tests.fuzz.targets import LOBBY_SERVICE, RULES_SERVICE, LobbyAndRules, request_classes

EXAMPLES = int(os.environ.get("ROUNDHOUSE_TEST_FUZZ_EXAMPLES", "150"))
"""Requests per service in ``make test`` (``make bench`` sends 100,000:
``benchmarks/bench_fuzz.py``)."""


@pytest.fixture(scope="module")
def target(tmp_path_factory, redis_url):
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('fuzz') / 'roundhouse.db'}"
    upgrade(url)
    with LobbyAndRules(url, redis_url, "fuzz-test") as t:
        yield t


def _fuzz(target, service, credentials, examples: int) -> runner.Tally:
    tally, state = runner.Tally(), [target.snapshot()]
    strategy = requests(service, request_classes(service), target.known, credentials)

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def one(request):
        runner.check(target, request, tally, state)

    one()
    return tally


def test_fuzzed_lobby_requests_get_no_internal_answer_and_refusals_change_nothing(target):
    tally = _fuzz(target, LOBBY_SERVICE, target.lobby_credentials, EXAMPLES)
    assert tally.broken == []
    assert tally.total >= EXAMPLES
    assert len(tally.by_code) > 2  # the requests reached more than one kind of answer


def test_fuzzed_rules_requests_get_no_internal_answer_and_refusals_change_nothing(target):
    tally = _fuzz(target, RULES_SERVICE, target.rules_credentials, EXAMPLES)
    assert tally.broken == []
    assert tally.total >= EXAMPLES


@pytest.fixture(scope="module")
def http_target(tmp_path_factory, redis_url):
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('fuzz-http') / 'roundhouse.db'}"
    upgrade(url)
    with gateway.Gateway(url, redis_url, "fuzz-http-test") as g:
        yield g


def test_fuzzed_http_requests_get_no_5xx_and_refusals_change_nothing(http_target):
    tally, state = runner.Tally(), [http_target.snapshot()]

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(gateway.http_requests(http_target))
    def one(request):
        gateway.check(http_target, request, tally, state)

    one()
    assert tally.broken == []
    assert tally.total >= EXAMPLES // 2  # (a few the HTTP client would not send)
    assert len(tally.by_code) > 2
