"""Rebuild boards from the reference traces (``tests/fixtures/e1894/traces``) for tests and
benchmarks.

A trace line holds the reference engine's state after one action. The board is rebuilt from
``tiles_changed`` accumulated from the setup line, tokens from ``corps.*.tokens`` (hex ids;
``city_tokens`` names the city in hexes with several cities) and ``corps.*.ferry``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from services.e1894.engine.board import Board
from services.e1894.engine.hexmap import MAP

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "tests" / "fixtures" / "e1894"
TRACES = FIXTURES / "traces"
GAMES = ("1894_game_end_final_phase", "1894_game_end_stock_market")


@cache
def trace_lines(game: str) -> tuple[dict[str, Any], ...]:
    """All lines of a trace (parsed JSON), setup line first."""
    with open(TRACES / f"{game}.jsonl", encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh)


@cache
def fixture_actions(game: str) -> dict[int, dict[str, Any]]:
    """The fixture's raw actions by id."""
    with open(FIXTURES / f"{game}.json", encoding="utf-8") as fh:
        data = json.load(fh)
    return {a["id"]: a for a in data["actions"]}


def apply_tiles(board: Board, changed: dict[str, list]) -> None:
    """Put each changed hex's tile on the board (lowest free copy), no legality check."""
    for coord, (name, rot) in changed.items():
        if name == coord:
            continue
        board.put_tile(coord, name, int(rot))


def set_tokens(board: Board, line: dict[str, Any]) -> None:
    """Replace every token on ``board`` with the line's tokens, and set the ferry holders."""
    for cities in board.tokens.values():
        for s in cities:
            for i in range(len(s)):
                s[i] = None
    multi = line.get("city_tokens", {})
    for coord, cities in multi.items():
        for k, corps in enumerate(cities):
            for c in corps:
                board.put_token(c, coord, k)
    for sym, corp in line["corps"].items():
        for coord in corp.get("tokens", []):
            if coord in multi:
                continue
            h = MAP.index(coord)
            tile = board.tiles[h]
            city = tile.city_indices[0]
            board.put_token(sym, coord, city)
    board.waiting = []
    board.ferries = [sym for sym, corp in line["corps"].items() if corp.get("ferry")]


def boards(game: str) -> Iterator[tuple[dict[str, Any], dict[str, Any], Board]]:
    """Yield ``(line, previous line, board before the line's action)`` for every action line.

    The board is rebuilt incrementally; the yielded board is a clone the caller may keep.
    """
    lines = trace_lines(game)
    board = Board.from_data()
    prev = lines[0]
    for line in lines[1:]:
        b = board.clone()
        set_tokens(b, prev)
        yield line, prev, b
        apply_tiles(board, line.get("tiles_changed", {}))
        prev = line


@cache
def run_routes_cases(game: str) -> tuple[tuple[dict[str, Any], dict[str, Any], Board], ...]:
    """``(line, previous line, board)`` for every ``run_routes`` line of a trace."""
    return tuple(x for x in boards(game) if x[0].get("type") == "run_routes")


def corp_trains(prev: dict[str, Any], corp: str) -> list[str]:
    """Train names the corporation owned before the action."""
    return list(prev["corps"][corp]["trains"])
