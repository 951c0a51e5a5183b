"""The one conversion of a game result to its message."""

from __future__ import annotations

from typing import Any

from roundhouse.v1 import game_pb2


def result_proto(result: dict[str, Any]) -> game_pb2.GameResult:
    """``{"scores", "ranks", "end_reason"}`` (``Result.to_json()``) as a
    ``GameResult``. Scores are whole units of the title (dollars, points,
    francs); every title scores in integers."""
    return game_pb2.GameResult(
        scores=[int(s) for s in result["scores"]],
        ranks=list(result["ranks"]),
        end_reason=result["end_reason"],
    )
