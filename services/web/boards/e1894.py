"""The 1894 board (``e1894``) as SVG, drawn from a view.

``render(view) -> str``: a pure function of the engine's view and the static board the engine
reads from its data files (:func:`services.e1894.engine.reading.board_geometry`: the printed
hexes, tiles, corporations and stock market). No game logic.

Map geometry (``map_hexes.json``: ``layout: pointy``, ``x`` the doubled column from the
number, ``y`` the row from the letter): centre per :func:`.svg.pointy_center`. Edge ``e``
(0..5, from ``direction_offsets``: 0 = south-west, 1 = west, 2 = north-west, 3 = north-east,
4 = east, 5 = south-east) has its midpoint at the angle ``120 + 60 e`` degrees (SVG angles,
y down). A laid tile with ``rotation`` r moves its edge ``e`` to ``(e + r) mod 6``.

Drawn per hex: its colour (the laid tile's, else the printed category), the track from the
tile's (or the preprinted hex's) parsed definition -- edge-to-edge curves, edge-to-city and
edge-to-town lines -- city circles with one slot per token space, town bars, offboard
revenues, labels, names; station markers (corporation tokens) in the slots, reserved homes
as dashed rings. Beside the map: the stock market grid with a price marker per corporation,
each corporation's charter (president, share price, treasury, trains, stations), the
players' cash and the train depot.

Element classes tests rely on: ``tile`` (``data-hex``, ``data-tile``), ``city``
(``data-hex``, ``data-city``), ``token`` (``data-corporation``, ``data-hex``), ``market-cell``,
``price-marker`` (``data-corporation``), ``charter`` (``data-corporation``).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from services.e1894.engine.reading import board_geometry
from services.web.boards.svg import (
    SEAT_COLOURS,
    Canvas,
    fmt,
    ink_on,
    pointy_center,
    pointy_corners,
    short,
)

HEX = 36.0
"""Hex circumradius in SVG units."""

HEX_FILL = {
    "white": "#f4efe1",
    "yellow": "#f7e37a",
    "green": "#8fcf7e",
    "brown": "#c99a6b",
    "gray": "#c8c8c8",
    "red": "#e06666",
    "blue": "#8ec1e6",
}

CITY_R = 8.5
"""Radius of one token slot."""


@cache
def board_data() -> dict[str, Any]:
    """``{"hexes": {coord: hex}, "tiles": {name: tile}, "corporations": {sym: corp},
    "market": [[cell]]}``: the engine's :func:`~services.e1894.engine.reading.board_geometry`,
    read once."""
    return board_geometry()


def tile_name(tile_id: str) -> str:
    """``"57-3"`` (copy 3 of tile 57) -> ``"57"``."""
    return tile_id.rsplit("-", 1)[0]


def _edge_point(cx: float, cy: float, e: int, k: float = 1.0) -> tuple[float, float]:
    a = math.radians(120 + 60 * e)
    d = HEX * math.sqrt(3) / 2 * k
    return cx + d * math.cos(a), cy + d * math.sin(a)


def _corp_fill(corps: dict[str, Any], sym: str) -> str:
    return corps.get(sym, {}).get("color") or "#888888"


def _corp_ink(corps: dict[str, Any], sym: str) -> str:
    c = corps.get(sym, {})
    if c.get("text_color") == "black":
        return "#000"
    return ink_on(c.get("color") or "#888888")


def _node_positions(
    parsed: dict[str, Any], rot: int, cx: float, cy: float
) -> dict[tuple[str, int], tuple[float, float]]:
    """Where each city/town/offboard of a tile sits: the centre when it is alone, else pulled
    towards the mean direction of its edges (split cities), else spread left to right."""
    nodes = [("city", i) for i in range(len(parsed["cities"]))]
    nodes += [("town", i) for i in range(len(parsed["towns"]))]
    nodes += [("offboard", i) for i in range(len(parsed["offboards"]))]
    edges: dict[tuple[str, int], list[int]] = {n: [] for n in nodes}
    for p in parsed["paths"]:
        a, b = p["a"], p["b"]
        for end, other in ((a, b), (b, a)):
            kind = next(iter(end))
            if kind != "edge" and "edge" in other:
                edges.setdefault((kind, end[kind]), []).append((other["edge"] + rot) % 6)
    pos: dict[tuple[str, int], tuple[float, float]] = {}
    if len(nodes) == 1:
        pos[nodes[0]] = (cx, cy)
        return pos
    free = []
    for n in nodes:
        es = edges.get(n, [])
        if es:
            x = sum(math.cos(math.radians(120 + 60 * e)) for e in es)
            y = sum(math.sin(math.radians(120 + 60 * e)) for e in es)
            norm = math.hypot(x, y)
            if norm < 1e-6:  # a straight through-town: stays on its line, at the centre
                pos[n] = (cx, cy)
            else:
                pos[n] = (cx + HEX * 0.45 * x / norm, cy + HEX * 0.45 * y / norm)
        else:
            free.append(n)
    for i, n in enumerate(free):
        pos[n] = (cx + HEX * 0.42 * (i - (len(free) - 1) / 2) * 1.2, cy)
    return pos


def _wrap(name: str, width: int = 12) -> list[str]:
    """A place name in at most two lines of ``width`` characters (cut with an ellipsis)."""
    words, lines, cur = name.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    lines.append(cur)
    if len(lines) > 2:
        lines = [lines[0], " ".join(lines[1:])]
    return [ln if len(ln) <= width else ln[: width - 1] + "…" for ln in lines]


def _draw_hex(
    cv: Canvas,
    coord: str,
    h: dict[str, Any],
    view: dict[str, Any],
    data: dict[str, Any],
    places: list[tuple[float, float, str]],
) -> None:
    """One hex (``places`` collects its place-name lines, drawn over the whole map later)."""
    board = view.get("board", {})
    laid = board.get("tiles", {}).get(coord)
    corps = data["corporations"]
    cx, cy = pointy_center(h["x"], h["y"], HEX)
    if laid:
        tile = data["tiles"].get(tile_name(laid["tile"]))
        parsed = tile["parsed"] if tile else h["parsed"]
        rot = int(laid.get("rotation", 0))
        fill = HEX_FILL.get(tile["color"] if tile else "", "#eee")
        cv.open("g", class_="tile", data_hex=coord, data_tile=laid["tile"], data_rotation=rot)
    else:
        parsed, rot = h["parsed"], 0
        fill = HEX_FILL.get(h["category"], "#eee")
        cv.open("g", class_="hex", data_hex=coord)
    cv.polygon(pointy_corners(cx, cy, HEX), fill=fill, stroke="#777", stroke_width=1)
    pos = _node_positions(parsed, rot, cx, cy)
    # track
    for p in parsed["paths"]:
        ends = []
        for end in (p["a"], p["b"]):
            kind = next(iter(end))
            if kind == "edge":
                ends.append(("edge", (end["edge"] + rot) % 6))
            else:
                ends.append((kind, end[kind]))
        pts = [
            _edge_point(cx, cy, v) if k == "edge" else pos.get((k, v), (cx, cy)) for k, v in ends
        ]
        (x1, y1), (x2, y2) = pts
        if ends[0][0] == "edge" and ends[1][0] == "edge":
            d = f"M{fmt(x1)},{fmt(y1)} Q{fmt(cx)},{fmt(cy)} {fmt(x2)},{fmt(y2)}"
        else:
            d = f"M{fmt(x1)},{fmt(y1)} L{fmt(x2)},{fmt(y2)}"
        cv.path(
            d,
            (x1, y1, x2, y2),
            class_="track",
            fill="none",
            stroke="#222",
            stroke_width=4.5,
            stroke_linecap="butt",
        )
    # offboards
    for i, off in enumerate(parsed["offboards"]):
        x, y = pos[("offboard", i)]
        rev = off.get("revenue", {})
        phase = str(view.get("phase", "yellow")).lower()
        val = rev.get(phase, next(iter(rev.values()), 0)) if rev else 0
        cv.rect(x - 13, y - 8, 26, 14, rx=3, fill="#fff", stroke="#900")
        cv.text(x, y + 3, val, size=9, anchor="middle", font_weight="bold")
    # towns
    for i, _t in enumerate(parsed["towns"]):
        x, y = pos[("town", i)]
        cv.rect(x - 7, y - 2.5, 14, 5, class_="town", fill="#000")
    # cities and tokens
    tokens = board.get("tokens", {}).get(coord, {}).get("cities", [])
    reserved = board.get("reserved", {}).get(coord, {}).get("cities", [])
    for i, city in enumerate(parsed["cities"]):
        x, y = pos[("city", i)]
        slots = max(int(city.get("slots", 1)), 1)
        w = 2 * CITY_R * slots
        if slots > 1:
            cv.rect(
                x - w / 2,
                y - CITY_R,
                w,
                2 * CITY_R,
                rx=CITY_R,
                fill="#fff",
                stroke="#000",
                stroke_width=1.2,
                class_="city",
                data_hex=coord,
                data_city=i,
                data_slots=slots,
            )
        else:
            cv.circle(
                x,
                y,
                CITY_R,
                fill="#fff",
                stroke="#000",
                stroke_width=1.2,
                class_="city",
                data_hex=coord,
                data_city=i,
                data_slots=1,
            )
        placed = tokens[i]["slots"] if i < len(tokens) else []
        res = reserved[i] if i < len(reserved) else ""
        for s in range(slots):
            sx = x - w / 2 + CITY_R + 2 * CITY_R * s
            sym = placed[s] if s < len(placed) else ""
            if sym:
                f = _corp_fill(corps, sym)
                cv.circle(
                    sx,
                    y,
                    CITY_R - 1.2,
                    class_="token",
                    data_corporation=sym,
                    data_hex=coord,
                    fill=f,
                    stroke="#000",
                    stroke_width=0.6,
                )
                cv.text(
                    sx,
                    y + 2.3,
                    sym[:4],
                    size=6.5 if len(sym) < 4 else 5.2,
                    anchor="middle",
                    fill=_corp_ink(corps, sym),
                    font_weight="bold",
                )
            elif res and s == 0:
                cv.circle(
                    sx,
                    y,
                    CITY_R - 2,
                    class_="reserved",
                    data_corporation=res,
                    fill="none",
                    stroke=_corp_fill(corps, res),
                    stroke_width=1.8,
                    stroke_dasharray="2,1.5",
                )
                cv.text(sx, y + 2.3, res[:4], size=5.2, anchor="middle", fill="#333")
    # labels, names, costs
    for lab in parsed.get("labels", []):
        cv.text(cx - HEX * 0.55, cy - HEX * 0.3, lab, size=10, anchor="middle", font_weight="bold")
    if h.get("location_name"):  # drawn after every hex, so no neighbour covers it
        for k, line in enumerate(_wrap(h["location_name"])):
            places.append((cx, cy + HEX * 0.6 + 7.5 * k, line))
    if not laid:
        for up in parsed.get("upgrades", []):
            if up.get("cost"):
                cv.text(
                    cx + HEX * 0.5,
                    cy - HEX * 0.3,
                    f"${up['cost']}",
                    size=7,
                    anchor="middle",
                    fill="#1a4f8a" if "water" in up.get("terrains", []) else "#6b4423",
                )
    cv.text(cx, cy - HEX * 0.68, coord, size=6, anchor="middle", fill="#666")
    cv.close("g")


def _draw_market(
    cv: Canvas, view: dict[str, Any], data: dict[str, Any], x0: float, y0: float
) -> float:
    cv.text(x0, y0, "Stock market", size=14, font_weight="bold")
    cw, ch = 34.0, 30.0
    y0 += 8
    corps = data["corporations"]
    on: dict[tuple[int, int], list[str]] = {}
    for sym, c in sorted(
        view.get("corporations", {}).items(), key=lambda kv: -kv[1].get("stamp", 0)
    ):
        if c.get("row", -1) >= 0 and c.get("col", -1) >= 0:
            on.setdefault((c["row"], c["col"]), []).append(sym)
    for row in data["market"]:
        for cell in row:
            if cell is None:
                continue
            r, c = cell["row"], cell["col"]
            types = cell.get("types", [])
            fill = (
                "#ffe08a"
                if "par" in types
                else "#ff9a8a"
                if "endgame" in types
                else ("#d9d9d9" if "unlimited" in types else "#fbfbfb")
            )
            x, y = x0 + c * cw, y0 + r * ch
            cv.rect(
                x,
                y,
                cw,
                ch,
                class_="market-cell",
                data_price=cell["price"],
                fill=fill,
                stroke="#888",
                stroke_width=0.6,
            )
            cv.text(x + 3, y + 10, cell["price"], size=8.5, fill="#333")
            for k, sym in enumerate(on.get((r, c), [])):
                mx = x + 7 + (k % 4) * 6.5
                my = y + 19 + (k // 4) * 7
                cv.circle(
                    mx,
                    my,
                    4.3,
                    class_="price-marker",
                    data_corporation=sym,
                    fill=_corp_fill(corps, sym),
                    stroke="#000",
                    stroke_width=0.7,
                )
    rows = len(data["market"])
    # a key to the marker colours
    y = y0 + rows * ch + 16
    x = x0
    for sym in corps:
        cv.circle(x + 5, y - 4, 5, fill=_corp_fill(corps, sym), stroke="#000", stroke_width=0.7)
        cv.text(x + 13, y, sym, size=10)
        x += 16 + 6.5 * len(sym) + 10
    return y + 8


def _draw_charters(
    cv: Canvas,
    view: dict[str, Any],
    data: dict[str, Any],
    x0: float,
    y0: float,
    names: list[str] | None,
) -> float:
    cv.text(x0, y0, "Corporations", size=14, font_weight="bold")
    corps = data["corporations"]
    tokens_on_map: dict[str, int] = {}
    for cell in view.get("board", {}).get("tokens", {}).values():
        for city in cell.get("cities", []):
            for sym in city.get("slots", []):
                if sym:
                    tokens_on_map[sym] = tokens_on_map.get(sym, 0) + 1
    w, h, per_row = 150.0, 70.0, 3
    shown = [s for s in view.get("corporations", {}) if s in corps]
    for i, sym in enumerate(shown):
        c = view["corporations"][sym]
        col, row = i % per_row, i // per_row
        x, y = x0 + col * (w + 8), y0 + 10 + row * (h + 8)
        f = _corp_fill(corps, sym)
        cv.open("g", class_="charter", data_corporation=sym)
        cv.rect(x, y, w, h, rx=4, fill="#fff", stroke=f, stroke_width=2)
        cv.rect(x, y, w, 16, rx=4, fill=f)
        pres = c.get("president", -1)
        pname = (
            (names[pres] if names and 0 <= pres < len(names) else f"seat {pres}")
            if pres >= 0
            else "—"
        )
        cv.text(x + 5, y + 12, sym, size=10, fill=_corp_ink(corps, sym), font_weight="bold")
        cv.text(
            x + w - 5,
            y + 12,
            f"pres. {short(pname, 12)}",
            size=8.5,
            anchor="end",
            fill=_corp_ink(corps, sym),
        )
        state = "floated" if c.get("floated") else "not floated"
        price = f"${c['price']}" if c.get("price") else "no par"
        cv.text(x + 5, y + 29, f"{price} · {state}", size=9)
        cv.text(x + 5, y + 43, f"treasury ${c.get('cash', 0)}", size=9)
        total = corps[sym].get("token_count", 0)
        cv.text(
            x + w - 5, y + 43, f"stations {tokens_on_map.get(sym, 0)}/{total}", size=9, anchor="end"
        )
        trains = [t.rsplit("-", 1)[0] for t in c.get("trains", [])]
        for k, t in enumerate(trains[:6]):
            tx = x + 5 + k * 24
            cv.rect(tx, y + 50, 21, 14, rx=2, class_="train", fill="#333")
            cv.text(tx + 10.5, y + 61, t, size=8.5, anchor="middle", fill="#fff")
        if not trains:
            cv.text(x + 5, y + 61, "no trains", size=8.5, fill="#888")
        cv.close("g")
    rows = (len(shown) + per_row - 1) // per_row
    return y0 + 10 + rows * (h + 8)


def _draw_players(
    cv: Canvas, view: dict[str, Any], x0: float, y0: float, names: list[str] | None
) -> float:
    cv.text(x0, y0, "Players", size=14, font_weight="bold")
    active = set(view.get("active_seats", []))
    scores = view.get("scores") or []
    y = y0
    for s, cash in enumerate(view.get("cash", [])):
        y += 16
        name = short(names[s], 28) if names and s < len(names) else f"Seat {s}"
        line = ("▶ " if s in active else "") + f"{name}: ${cash}"
        if view.get("round") == "over" and s < len(scores):
            line += f" · score {scores[s]}"
        cv.circle(x0 + 5, y - 4, 5, fill=SEAT_COLOURS[s % len(SEAT_COLOURS)])
        cv.text(x0 + 14, y, line, size=10, class_="player", data_seat=s)
    depot = view.get("depot", {})
    y += 18
    cv.text(
        x0,
        y,
        f"Phase {view.get('phase', '?')} · round {view.get('round', '?')}"
        f" · next train {depot.get('next_train', '—')}",
        size=10,
    )
    return y + 6


def render(view: dict[str, Any], names: list[str] | None = None) -> str:
    """The board of a 1894 view as a standalone SVG document.

    Args:
        view: an e1894 view (``GAME.new_state(...).view(seat)``).
        names: optional display names per seat (escaped); default ``"Seat N"``.

    Returns:
        SVG markup, deterministic for equal inputs.
    """
    data = board_data()
    cv = Canvas()
    cv.open("g", class_="map")
    places: list[tuple[float, float, str]] = []
    for coord, h in data["hexes"].items():
        _draw_hex(cv, coord, h, view, data, places)
    cv.place_labels(places)
    cv.close("g")
    map_right = cv.maxx
    x0 = map_right + 30
    y = _draw_players(cv, view, x0, 14, names)
    y = _draw_market(cv, view, data, x0, y + 22)
    _draw_charters(cv, view, data, x0, y + 18, names)
    return cv.svg("1894 board")
