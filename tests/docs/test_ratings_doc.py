"""docs/ratings.md's example: its numbers are what ``rate_game`` computes."""

from __future__ import annotations

import re
from pathlib import Path

from services.tournaments.ratings import RatedGame, RatedSeat, leaderboard, rate_game

DOC = (Path(__file__).resolve().parents[2] / "docs" / "ratings.md").read_text()


def _rows(heading: str) -> dict[str, list[str]]:
    block = DOC[DOC.index(f"| {heading} |") :].split("\n\n")[0]
    rows = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].split(" ")[0]] = cells[1:]
    return rows


def test_the_example_tables_are_the_codes_figures():
    g1 = RatedGame(
        "railbarons",
        "game-1",
        (
            RatedSeat("alice", 1),
            RatedSeat("bob", 2),
            RatedSeat("carol", 2),
            RatedSeat("greedy-bot", 4, is_bot=True),
        ),
    )
    first = rate_game(g1, {})
    doc = _rows("after game-1")
    for r in first.ratings:
        assert doc[r.account] == [
            f"{r.mu:.3f}",
            f"{r.sigma:.3f}",
            f"{r.ordinal:.3f}",
            "yes" if r.provisional() else "no",
        ]
    current = {r.account: r for r in first.ratings}
    g2 = RatedGame(
        "railbarons",
        "game-2",
        (
            RatedSeat("greedy-bot", 1, is_bot=True),
            RatedSeat("alice", 2),
            RatedSeat("bob", 3, weight=0.5),
            RatedSeat("carol", 4),
        ),
    )
    second = rate_game(g2, current)
    doc = _rows("after game-2")
    for r in second.ratings:
        assert doc[r.account] == [f"{r.mu:.3f}", f"{r.sigma:.3f}", f"{r.ordinal:.3f}"]
    current.update({r.account: r for r in second.ratings})
    board = ", ".join(
        f"{row.position} {row.rating.account} ({row.rating.ordinal:.3f})"
        for row in leaderboard(current.values(), "railbarons")
    )
    assert board in re.sub(r"\s+", " ", DOC)
