"""Compare our state with the reference engine's trace lines (tests/fixtures/e1894/traces).

Used by ``test_conformance_traces.py`` and handy when debugging a divergence::

    .venv/bin/python -m services.e1894.engine.tests.trace_compare 1894_game_end_final_phase
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from ..data import CORPS, PHASES, PRIVATES
from ..hexmap import MAP
from ..interchange.importer import import_game
from ..market import price
from ..privates import CLOSED, CORP_OWNER, UNSOLD
from ..routes import train_name
from ..state import E1894State
from ..tokens import tokens_left

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "tests" / "fixtures" / "e1894"
GAMES = ("1894_game_end_final_phase", "1894_game_end_stock_market")


@cache
def fixture(game: str) -> dict[str, Any]:
    with open(FIXTURES / f"{game}.json", encoding="utf-8") as fh:
        return json.load(fh)


@cache
def trace(game: str) -> tuple[dict[str, Any], ...]:
    with open(FIXTURES / "traces" / f"{game}.jsonl", encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh)


def snapshot(st: E1894State, player_ids: list[int]) -> dict[str, Any]:
    """Our state in the trace's terms (the compared fields only)."""
    pid = [str(p) for p in player_ids]
    corps = {}
    for ci, info in enumerate(CORPS):
        sym = info.sym
        parred = st.row[ci] >= 0
        waiting = len(st.board.waiting_tokens(sym))
        corps[sym] = {
            "cash": st.corp_cash[ci],
            "price": price(st, ci) if parred else None,
            "cell": [st.row[ci], st.col[ci]] if parred else None,
            "par": st.par[ci] or None,
            "trains": [train_name(t) for t in st.trains[ci]],
            "tokens": sorted(h for h, _ in st.board.corporation_tokens(sym)),
            "tokens_left": tokens_left(st.board, sym) + waiting,
            "floated": st.floated[ci],
            "president": player_ids[st.president[ci]] if st.president[ci] >= 0 else None,
            "ipo_shares_pct": st.ipo[ci],
            "treasury_shares_pct": st.redeemed[ci],
            "ferry": st.board.has_ferry(sym),
        }
    privates = {}
    for pi, info in enumerate(PRIVATES):
        o = st.private_owner[pi]
        privates[info.sym] = (
            None
            if o == UNSOLD
            else "closed"
            if o == CLOSED
            else CORPS[o - CORP_OWNER].sym
            if o >= CORP_OWNER
            else player_ids[o]
        )
    holdings = {
        pid[s]: {
            CORPS[ci].sym: st.holdings[ci][s] for ci in range(len(CORPS)) if st.holdings[ci][s]
        }
        for s in range(st.num_players)
    }
    city_tokens = {}
    for h in MAP.hexes:
        cities = st.board.city_tokens(h.id)
        if len(cities) >= 2 and any(cities):
            city_tokens[h.id] = [sorted(c) for c in cities]
    return {
        "players": {pid[s]: st.cash[s] for s in range(st.num_players)},
        "holdings": holdings,
        "corps": corps,
        "pool": {CORPS[ci].sym: st.pool[ci] for ci in range(len(CORPS)) if st.pool[ci]},
        "privates": privates,
        "phase": PHASES[st.phase].name,
        "order": [player_ids[s] for s in st.order],
        "city_tokens": city_tokens,
    }


def expected(line: dict[str, Any]) -> dict[str, Any]:
    """The same fields from a trace line."""
    corps = {}
    for sym, c in line["corps"].items():
        corps[sym] = {
            "cash": c["cash"],
            "price": c["price"],
            "cell": c["cell"],
            "par": c["par"],
            "trains": c["trains"],
            "tokens": sorted(c["tokens"]),
            "tokens_left": c["tokens_left"],
            "floated": c["floated"],
            "president": c["president"],
            "ipo_shares_pct": c["ipo_shares_pct"],
            "treasury_shares_pct": c["treasury_shares_pct"],
            "ferry": bool(c.get("ferry")),
        }
    return {
        "players": line["players"],
        "holdings": line["holdings"],
        "corps": corps,
        "pool": line["pool"],
        "privates": line["privates"],
        "phase": line["phase"],
        "order": line["order"],
        "city_tokens": {h: [sorted(c) for c in v] for h, v in line.get("city_tokens", {}).items()},
    }


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            out += diff(a.get(k), b.get(k), f"{path}.{k}")
        return out
    return [] if a == b else [f"{path}: ours {a!r}, reference {b!r}"]


def tile_diffs(st: E1894State, tiles: dict[str, tuple[str, int]]) -> list[str]:
    out = []
    for h, (name, rot) in tiles.items():
        ours = (st.board.tile_name(h), st.board.rotation(h))
        if ours[0] != name or (name != h and ours[1] != rot):
            out.append(f".tiles.{h}: ours {ours}, reference {(name, rot)}")
    return out


def compare(game: str) -> Iterator[tuple[dict[str, Any], list[str]]]:
    """Import the fixture and yield ``(trace line, differences)`` after every action."""
    lines = trace(game)
    by_id = {line["id"]: line for line in lines[1:]}
    tiles: dict[str, tuple[str, int]] = {}
    results: list[tuple[dict[str, Any], list[str]]] = []
    player_ids = [int(p["id"]) for p in fixture(game)["players"]]

    def on_step(act: dict[str, Any], st: E1894State) -> None:
        line = by_id[act["id"]]
        for h, (name, rot) in line.get("tiles_changed", {}).items():
            tiles[h] = (name, int(rot))
        d = diff(snapshot(st, player_ids), expected(line)) + tile_diffs(st, tiles)
        results.append((line, d))

    try:
        import_game(fixture(game), on_step=on_step)
    finally:
        yield from results


def first_divergence(game: str) -> str | None:
    """Text naming the first action after which our state differs, or None."""
    try:
        for line, d in compare(game):
            if d:
                return f"after action id {line['id']} ({line['type']} {line['entity']}): " + (
                    "; ".join(d[:12])
                )
    except Exception as exc:  # the importer's divergence names the action itself
        return f"{type(exc).__name__}: {exc}"
    return None


if __name__ == "__main__":  # pragma: no cover
    for g in sys.argv[1:] or GAMES:
        print(g, first_divergence(g) or "identical on every line")
