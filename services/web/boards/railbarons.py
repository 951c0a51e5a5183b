"""The Chicago Express board (``railbarons``) as SVG, drawn from a view.

``render(view) -> str``: a pure function of the engine's view (shape in
``services/railbarons/engine/view.py``) and the static board the engine reads from its data
file (:func:`services.railbarons.engine.reading.board_geometry`: map, companies, income
track). No game logic: every number drawn is read from the view.

Map geometry: the data's ``map.coordinate_system`` -- flat-topped hexes in vertical columns
A..S (``col_index`` 0..18), rows 0..10, odd columns half a hex lower ("odd-q"); see
:func:`.svg.flat_center`.

Drawn: terrain per hex (plain, forest, mountain, city, start, industrial city) with the
city names; each company's locomotives (one disc per company on a hex, company colour);
houses on developed hexes; the three action dials with their red zones and needles; the
income track 0..50 with a marker per company; treasuries and shares; the industrial track
(Detroit, Wheeling, Pittsburgh).

Element classes tests rely on: ``hex`` (with ``data-hex``), ``loco`` (``data-company``,
``data-hex``), ``house`` (``data-hex``), ``dial`` (``data-dial``), ``income-marker``
(``data-company``), ``industry`` (``data-city``).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from services.railbarons.engine.phases import PHASE_TITLES
from services.railbarons.engine.reading import board_geometry
from services.web.boards.svg import (
    SEAT_COLOURS,
    Canvas,
    colour,
    flat_center,
    flat_corners,
    ink_on,
    short,
)

HEX = 26.0
"""Hex circumradius in SVG units."""

TERRAIN_FILL = {
    "plain": "#efe8c8",
    "forest": "#9cc58a",
    "mountain": "#b9a38f",
    "city": "#fdfdfd",
    "start": "#fdfdfd",
    "industrial_city": "#d9d9e8",
}


@cache
def board_data() -> dict[str, Any]:
    """The static data: ``{"hexes": [...], "companies": {id: {...}}, "income_max": int}``,
    the engine's :func:`~services.railbarons.engine.reading.board_geometry`, read once."""
    return board_geometry()


def _label(name: str | None) -> str:
    """A short map label: the first of alternative names, without the data's doubt marks."""
    if not name:
        return ""
    short = name.split("(")[0].split("/")[0].replace("?", "").strip()
    return short


def _draw_map(cv: Canvas, view: dict[str, Any], data: dict[str, Any]) -> None:
    occupied = view.get("hexes", {})
    comp_colour = {cid: colour(c.get("colour")) for cid, c in data["companies"].items()}
    order = list(data["companies"])
    industrial = {v.get("hex"): k for k, v in view.get("industrial", {}).items()}
    cv.open("g", class_="map")
    names: list[tuple[float, float, str]] = []
    for h in data["hexes"]:
        cx, cy = flat_center(h["col_index"], h["row"], HEX)
        terrain = h["terrain"]
        cv.polygon(
            flat_corners(cx, cy, HEX),
            class_="hex",
            data_hex=h["id"],
            data_terrain=terrain,
            fill=TERRAIN_FILL.get(terrain, "#eeeeee"),
            stroke="#8a8470",
            stroke_width=0.8,
        )
        if terrain == "mountain":
            cv.polygon(
                [(cx - 9, cy + 6), (cx - 2, cy - 6), (cx + 5, cy + 6)],
                fill="#8d7764",
                opacity=0.7,
            )
        elif terrain == "forest":
            for dx in (-7, 5):
                cv.polygon(
                    [(cx + dx - 4, cy + 7), (cx + dx, cy - 3), (cx + dx + 4, cy + 7)],
                    fill="#4f8a3c",
                    opacity=0.7,
                )
        if terrain in ("city", "start", "industrial_city"):
            cv.circle(
                cx,
                cy - 3,
                7,
                fill="none",
                stroke="#555",
                stroke_width=1.5,
                stroke_dasharray="2,1.5",
            )
        cv.text(cx, cy - HEX * 0.62, h["id"], size=6, anchor="middle", fill="#777")
        label = _label(h.get("name"))
        if label:  # drawn after every hex, so no neighbour covers it
            names.append((cx, cy + HEX * 0.58, label))
        if h["id"] in industrial:
            ind = view["industrial"][industrial[h["id"]]]
            cv.text(
                cx + HEX * 0.55,
                cy - 1,
                f"{ind['value']}",
                size=9,
                anchor="middle",
                fill="#5a2d82",
                font_weight="bold",
            )
        cell = occupied.get(h["id"])
        if not cell:
            continue
        comps = sorted(
            cell.get("companies", []), key=lambda c: order.index(c) if c in order else 99
        )
        n = len(comps)
        for i, cid in enumerate(comps):
            ang = math.radians(90 + 360 * i / max(n, 1)) if n > 1 else 0.0
            rad = 8.0 if n > 1 else 0.0
            x, y = cx + rad * math.cos(ang), cy + 3 + rad * math.sin(ang)
            fill = comp_colour.get(cid, "#888")
            cv.circle(
                x,
                y,
                6.5,
                class_="loco",
                data_company=cid,
                data_hex=h["id"],
                fill=fill,
                stroke="#fff" if fill == "#222222" else "#000",
                stroke_width=1.2,
            )
        if cell.get("developed"):
            hx, hy = cx - HEX * 0.55, cy + 1
            cv.polygon(
                [
                    (hx - 5, hy + 4),
                    (hx - 5, hy - 1),
                    (hx, hy - 6),
                    (hx + 5, hy - 1),
                    (hx + 5, hy + 4),
                ],
                class_="house",
                data_hex=h["id"],
                fill="#f39c12",
                stroke="#000",
                stroke_width=0.9,
            )
    cv.place_labels(names)
    cv.close("g")


def _draw_dials(cv: Canvas, view: dict[str, Any], x0: float, y0: float) -> float:
    """The three action dials; a segment per use up to the limit, the last in red."""
    cv.text(x0, y0, "Action dials", size=13, font_weight="bold")
    r = 30.0
    for i, (name, d) in enumerate(sorted(view.get("dials", {}).items())):
        cx, cy = x0 + r + 8 + i * (2 * r + 34), y0 + 18 + r
        limit = max(int(d.get("limit", 1)), 1)
        used = int(d.get("used", 0))
        cv.open("g", class_="dial", data_dial=name, data_used=used, data_limit=limit)
        segs = limit + 1  # positions 0..limit; the last one is the red zone
        for k in range(segs):
            a0 = math.radians(-210 + 240 * k / segs)
            a1 = math.radians(-210 + 240 * (k + 1) / segs)
            p = [(cx, cy)] + [
                (
                    cx + r * math.cos(a0 + (a1 - a0) * t / 6),
                    cy + r * math.sin(a0 + (a1 - a0) * t / 6),
                )
                for t in range(7)
            ]
            red = k == segs - 1
            cv.polygon(
                p,
                class_="red-zone" if red else "dial-step",
                fill="#e74c3c" if red else ("#bfc9d9" if k < used else "#eef1f6"),
                stroke="#555",
                stroke_width=0.8,
            )
        a = math.radians(-210 + 240 * (min(used, limit) + 0.5) / segs)
        cv.line(
            cx,
            cy,
            cx + (r - 4) * math.cos(a),
            cy + (r - 4) * math.sin(a),
            class_="needle",
            stroke="#111",
            stroke_width=3,
            stroke_linecap="round",
        )
        cv.circle(cx, cy, 3.5, fill="#111")
        cv.text(cx, cy + r * 0.75 + 12, name, size=11, anchor="middle")
        cv.text(
            cx,
            cy + r * 0.75 + 25,
            f"{used}/{limit}" + (" red" if d.get("red") else ""),
            size=10,
            anchor="middle",
            fill="#c0392b" if d.get("red") else "#333",
        )
        cv.close("g")
    return y0 + 18 + 2 * r + 30


def _draw_companies(
    cv: Canvas, view: dict[str, Any], data: dict[str, Any], x0: float, y0: float
) -> float:
    cv.text(x0, y0, "Companies", size=13, font_weight="bold")
    cols = [("", 0), ("income", 185), ("treasury", 240), ("shares", 290), ("locos", 335)]
    y = y0 + 18
    for label, dx in cols[1:]:
        cv.text(x0 + dx, y, label, size=10, anchor="end", fill="#555")
    for cid, c in view.get("companies", {}).items():
        y += 18
        fill = colour(data["companies"].get(cid, {}).get("colour"))
        cv.rect(x0, y - 11, 34, 14, fill=fill, rx=3, class_="company", data_company=cid)
        cv.text(x0 + 17, y, cid, size=10, anchor="middle", fill=ink_on(fill), font_weight="bold")
        name = c.get("name", cid) + ("" if c.get("open") else " (closed)")
        cv.text(x0 + 40, y, short(name, 22), size=10)
        cv.text(x0 + 185, y, f"${c.get('income', 0)}", size=10, anchor="end")
        cv.text(x0 + 240, y, f"${c.get('treasury', 0)}", size=10, anchor="end")
        cv.text(
            x0 + 290,
            y,
            f"{c.get('shares_sold', 0)}/{c.get('shares_total', 0)}",
            size=10,
            anchor="end",
        )
        cv.text(x0 + 335, y, c.get("locomotives_left", 0), size=10, anchor="end")
    return y + 14


def _draw_players(
    cv: Canvas, view: dict[str, Any], x0: float, y0: float, names: list[str] | None
) -> float:
    cv.text(x0, y0, "Players", size=13, font_weight="bold")
    y = y0 + 4
    active = view.get("active_seat")
    result = view.get("result") or {}
    for p in view.get("players", []):
        s = p["seat"]
        y += 17
        name = short(names[s], 28) if names and s < len(names) else f"Seat {s}"
        mark = "▶ " if s == active else ""
        cv.circle(x0 + 6, y - 4, 5, fill=SEAT_COLOURS[s % len(SEAT_COLOURS)])
        held = ", ".join(f"{k}×{v}" for k, v in p.get("shares", {}).items() if v)
        line = f"{mark}{name}: ${p.get('cash', 0)}" + (f"  [{held}]" if held else "")
        if result.get("scores"):
            line += f"  score {result['scores'][s]} (#{result['ranks'][s]})"
        cv.text(x0 + 16, y, line, size=10, class_="player", data_seat=s)
    return y + 12


def _draw_income_track(
    cv: Canvas, view: dict[str, Any], data: dict[str, Any], x0: float, y0: float
) -> float:
    """Income track 0..max in two rows; a marker per open company (stacked on ties)."""
    top = int(data["income_max"])
    cv.text(x0, y0, "Income track", size=13, font_weight="bold")
    cell, per_row = 13.0, 26
    stack: dict[int, int] = {}
    for v in range(top + 1):
        row, col = divmod(v, per_row)
        x, y = x0 + col * cell, y0 + 10 + row * 44
        cv.rect(
            x,
            y,
            cell,
            cell,
            fill="#f7f7f7" if v % 5 else "#e2e2e2",
            stroke="#999",
            stroke_width=0.5,
        )
        if v % 5 == 0:
            cv.text(x + cell / 2, y + cell + 9, v, size=7, anchor="middle", fill="#555")
    for cid, c in view.get("companies", {}).items():
        if not c.get("open"):
            continue
        inc = int(c.get("income", 0))
        v = min(inc, top)
        k = stack.get(v, 0)
        stack[v] = k + 1
        row, col = divmod(v, per_row)
        x, y = x0 + col * cell + cell / 2, y0 + 10 + row * 44 - 5 - 7 * k
        fill = colour(data["companies"].get(cid, {}).get("colour"))
        cv.circle(
            x,
            y + 12,
            4.5,
            class_="income-marker",
            data_company=cid,
            data_income=inc,
            fill=fill,
            stroke="#000",
            stroke_width=0.6,
        )
    return y0 + 10 + ((top // per_row) + 1) * 44


def _draw_industry(cv: Canvas, view: dict[str, Any], x0: float, y0: float) -> float:
    cv.text(x0, y0, "Industrial track", size=13, font_weight="bold")
    y = y0
    for city, ind in view.get("industrial", {}).items():
        y += 18
        mx = int(ind.get("max", 0))
        cv.text(
            x0,
            y,
            city.title(),
            size=10,
            class_="industry",
            data_city=city,
            data_value=ind.get("value"),
        )
        for k in range(1, mx + 1):
            on = k <= int(ind.get("value", 0))
            cv.rect(
                x0 + 75 + (k - 1) * 16,
                y - 10,
                14,
                12,
                fill="#5a2d82" if on else "#eee",
                stroke="#777",
                stroke_width=0.5,
            )
            cv.text(
                x0 + 82 + (k - 1) * 16,
                y - 1,
                k,
                size=8,
                anchor="middle",
                fill="#fff" if on else "#777",
            )
    return y + 10


def render(view: dict[str, Any], names: list[str] | None = None) -> str:
    """The board of a Chicago Express view as a standalone SVG document.

    Args:
        view: a railbarons view (``services.railbarons.engine.view.view``).
        names: optional display names per seat (escaped); default ``"Seat N"``.

    Returns:
        SVG markup (UTF-8 text), deterministic for equal inputs.
    """
    data = board_data()
    cv = Canvas()
    _draw_map(cv, view, data)
    x0 = 1.5 * HEX * 18 + HEX + 30
    y = 8.0
    y = _draw_players(cv, view, x0, y, names)
    y = _draw_companies(cv, view, data, x0, y + 14)
    y = _draw_dials(cv, view, x0, y + 16)
    y = _draw_industry(cv, view, x0, y + 8)
    y = _draw_income_track(cv, view, data, x0, y + 14)
    phase = PHASE_TITLES.get(view.get("phase", ""), view.get("phase", "?"))
    status = (
        f"Round {view.get('round', '?')} · {phase} · houses in supply {view.get('houses', '?')}"
    )
    cv.text(x0, y + 14, status, size=12, class_="status")
    return cv.svg("Chicago Express board")
