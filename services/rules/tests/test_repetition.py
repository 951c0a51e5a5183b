"""The repetition guard (services/rules/repetition.py): a game whose position repeats the
limit of times is reported once, with its game id, by a metric and a log line."""

from __future__ import annotations

import pytest
import structlog
from prometheus_client import REGISTRY

from services.rules.repetition import RepetitionGuard, limit_from_env
from services.rules.titles import get_game


def _reported(title: str) -> float:
    value = REGISTRY.get_sample_value("roundhouse_rules_repeated_positions_total", {"title": title})
    return value or 0.0


def _pass_move(state, seat):
    return next(a for a in state.legal_actions(seat) if getattr(a, "TYPE", "") == "pass")


def test_the_guard_fires_on_a_game_that_repeats_a_position():
    game = get_game("e1894")
    state = game.new_state(3, 7, {})
    guard = RepetitionGuard("e1894", limit=3)
    before = _reported("e1894")
    with structlog.testing.capture_logs() as logs:
        fired = [guard.observe("g-1", state) for _ in range(5)]
    assert fired == [False, False, True, False, False]  # once, at the third time
    assert _reported("e1894") == before + 1
    (line,) = [x for x in logs if x["event"] == "position_repeated"]
    assert line["game_id"] == "g-1" and line["repeats"] == 3 and line["title"] == "e1894"


def test_a_game_that_moves_on_is_not_reported():
    game = get_game("e1894")
    state = game.new_state(3, 7, {})
    guard = RepetitionGuard("e1894", limit=2)
    seen = []
    for _ in range(3):  # three bids or passes in the auction, each a new position
        seen.append(guard.observe("g-2", state))
        seat = state.active_seats()[0]
        state.apply(seat, _pass_move(state, seat))
    assert seen == [False, False, False]


def test_the_limit_is_a_setting(monkeypatch):
    monkeypatch.delenv("ROUNDHOUSE_RULES_REPEAT_LIMIT", raising=False)
    assert limit_from_env() == 50
    monkeypatch.setenv("ROUNDHOUSE_RULES_REPEAT_LIMIT", "7")
    assert limit_from_env() == 7
    monkeypatch.setenv("ROUNDHOUSE_RULES_REPEAT_LIMIT", "one")
    with pytest.raises(ValueError, match="integer >= 2"):
        limit_from_env()
    with pytest.raises(ValueError, match="at least 2"):
        RepetitionGuard("e1894", limit=1)
