"""The platform's repetition guard, per title: a game whose position repeats ``limit`` times is
reported, so an operator sees a table that loops without progress (issue 29), e.g. 1894's
private auction once LRC is sold, where passing for ever is legal (designer's rules v1.0.3
§5.1, errata A1; ``docs/e1894-game.md`` "A game that loops"). The guard reports and never
changes the game: the rules allow the loop.

Report: the counter ``roundhouse_rules_repeated_positions_total{title}`` (once per game and
position, when that position's count reaches ``limit``) and a structlog warning
``position_repeated`` with ``game_id``, ``title``, ``version``, ``repeats`` and ``position``
(the key, :func:`services.kernel.positions.position_key`).
"""

from __future__ import annotations

import os
from collections import Counter

import structlog

from services.kernel.engine import State
from services.kernel.positions import position_key
from services.rules.metrics import REPEATED_POSITIONS

LIMIT_ENV = "ROUNDHOUSE_RULES_REPEAT_LIMIT"
"""The environment variable that sets :data:`DEFAULT_LIMIT` for a rules service."""
DEFAULT_LIMIT = 50
"""Times a position may recur before the game is reported (high: a real game repeats a
position a few times at most, 1894's all-pass auction once a round of passes)."""

log = structlog.get_logger("roundhouse.rules.repetition")


def limit_from_env() -> int:
    """:data:`LIMIT_ENV` as an integer, :data:`DEFAULT_LIMIT` when unset.

    Raises:
        ValueError: the variable is set to something other than an integer >= 2.
    """
    text = os.environ.get(LIMIT_ENV, "").strip()
    if not text:
        return DEFAULT_LIMIT
    if not text.isdigit() or int(text) < 2:
        raise ValueError(f"{LIMIT_ENV} must be an integer >= 2, got {text!r}")
    return int(text)


class RepetitionGuard:
    """Counts each live game's position keys and reports a repeating game (module docstring).

    Args:
        title: the title id (the metric's label).
        limit: the count at which a position is reported (>= 2).

    Raises:
        ValueError: ``limit`` < 2.
    """

    def __init__(self, title: str, limit: int = DEFAULT_LIMIT) -> None:
        if limit < 2:
            raise ValueError(f"the repetition limit must be at least 2, got {limit}")
        self.title = title
        self.limit = limit
        self._seen: dict[str, Counter[str]] = {}

    def observe(self, game_id: str, state: State) -> bool:
        """Count ``state``'s position for ``game_id``; ``True`` when this move made a position
        reach the limit (then reported). A finished game's counts are dropped."""
        if state.is_terminal():
            self._seen.pop(game_id, None)
            return False
        counts = self._seen.setdefault(game_id, Counter())
        key = position_key(state)
        counts[key] += 1
        if counts[key] != self.limit:
            return False
        REPEATED_POSITIONS.labels(self.title).inc()
        log.warning(
            "position_repeated",
            game_id=game_id,
            title=self.title,
            version=state.version,
            repeats=counts[key],
            position=key,
        )
        return True

    def forget(self, game_id: str) -> None:
        """Drop a game's counts (it left the cache)."""
        self._seen.pop(game_id, None)
