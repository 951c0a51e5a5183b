"""The Russian Railroads board (``transsib``) as SVG, drawn from a view.

``render(view) -> str``: a pure function of the engine's view (``services/transsib/engine/
view.py``) and the static board the engine reads from its data file
(:func:`services.transsib.engine.reading.board_geometry`: lines, track colours, action
spaces, engineers, industry track). No game logic.

Drawn: the action spaces (grouped by area), each by its name and effect (the data file's
``name`` and ``text``; an engineer space shows its engineer, ``"Engineer 7: ..."``, from the
view), with the workers on them in the seat's colour and the coins paid; then one board per
player: the three lines (Trans-Siberian, St Petersburg, Kiev) as rows of spaces, each space
filled with the best track colour that reached it and the colour markers' positions, the
locomotives on each line, the industry track (board fields ``B`` and factory fields ``F``
with the factories built) with the industry marker(s), and score, coins, workers and
doublers.

Element classes tests rely on: ``space`` (``data-space``), ``worker`` (``data-seat``,
``data-space``), ``player-board`` (``data-seat``), ``line`` (``data-line``), ``track-cell``
(``data-colour``), ``loco`` (``data-number``), ``factory`` (``data-number``),
``industry-marker``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from services.transsib.engine.frames import PHASE_TITLES
from services.transsib.engine.reading import board_geometry
from services.web.boards.svg import SEAT_COLOURS, Canvas, ink_on

TRACK_FILL = {
    "black": "#2b2b2b",
    "grey": "#9a9a9a",
    "brown": "#8b5a2b",
    "natural": "#d8b98a",
    "white": "#ffffff",
}

AREA_TITLES = {
    "track": "Track",
    "loco": "Locomotives & factories",
    "industry": "Industry",
    "aux": "Auxiliary",
    "turn_order": "Turn order",
    "engineer": "Engineers",
}


@cache
def board_data() -> dict[str, Any]:
    """``{"lines": [...], "colours": [...], "spaces": {id: space}, "industry": [B|F...]}``,
    the engine's :func:`~services.transsib.engine.reading.board_geometry`, read once."""
    return board_geometry()


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters (an ellipsis marks a cut)."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _wrap(text: str, width: int, lines: int) -> list[str]:
    """``text`` in at most ``lines`` lines of ``width`` characters (the last one cut)."""
    out: list[str] = []
    rest = text
    while rest and len(out) < lines - 1 and len(rest) > width:
        cut = rest.rfind(" ", 0, width + 1)
        cut = cut if cut > 0 else width
        out.append(rest[:cut])
        rest = rest[cut:].lstrip()
    if rest:
        out.append(_fit(rest, width))
    return out


def _engineer_on(view: dict[str, Any], sid: str) -> str:
    """The engineer on an engineer space (``"Engineer 7: ..."``), from the view's strip."""
    strip = view.get("strip", [])
    if sid == "E-HIRE":
        slots = [e for e in strip if e.get("kind") == "hire"]
    else:
        slots = [e for e in strip if e.get("kind") == "variable"]
        k = {"E-VAR-1": 0, "E-VAR-2": 1}.get(sid, -1)
        slots = slots[k : k + 1] if 0 <= k < len(slots) else []
    eid = slots[0].get("engineer", "") if slots else ""
    info = view.get("engineers", {}).get(eid)
    if not info:
        return ""
    return str(info.get("effect", ""))


def _effect_text(space: dict[str, Any] | None) -> str:
    """The space's effect in words, from the data file's ``text``."""
    if not space:
        return ""
    return str(space.get("text", ""))


def _area(sid: str, data: dict[str, Any]) -> str:
    sp = data["spaces"].get(sid)
    if sp:
        return str(sp.get("area", "other"))
    return "other"


def _draw_space(
    cv: Canvas,
    sp: dict[str, Any],
    data: dict[str, Any],
    view: dict[str, Any],
    x: float,
    yy: float,
    w: float,
    h: float,
) -> None:
    """One action space, by its name and effect (never its internal id, which only the
    ``data-space`` attribute carries), with the workers (seat colours) and coins on it."""
    cv.open("g", class_="space", data_space=sp["id"])
    cv.rect(x, yy, w, h, rx=4, fill="#f3efe6", stroke="#8a7f6a", stroke_width=0.8)
    info = data["spaces"].get(sp["id"]) or {}
    need = ""
    if "workers" in info:
        need = f"{info.get('workers', 0)}w" + (f"+{info['coins']}r" if info.get("coins") else "")
    cv.text(
        x + 4,
        yy + 11,
        _fit(str(info.get("name", "")), 17 if need else 21),
        size=8.5,
        font_weight="bold",
    )
    if need:
        cv.text(x + w - 4, yy + 11, need, size=7.5, anchor="end", fill="#777")
    effect = _engineer_on(view, sp["id"]) if info.get("area") == "engineer" else ""
    for k, line in enumerate(_wrap(effect or _effect_text(info), 30, 2)):
        cv.text(x + 4, yy + 20 + 7 * k, line, size=6.5, fill="#555")
    seats = [sp["seat"]] if sp.get("seat", -1) >= 0 else []
    seats += [s for s in sp.get("seats", []) if s not in seats]
    k = 0
    for s in seats:
        n = int(sp.get("workers", 1)) if s == sp.get("seat") else 1
        for _ in range(max(n, 1)):
            cv.circle(
                x + 9 + 12 * k,
                yy + 37,
                5,
                class_="worker",
                data_seat=s,
                data_space=sp["id"],
                fill=SEAT_COLOURS[s % len(SEAT_COLOURS)],
                stroke="#000",
                stroke_width=0.6,
            )
            k += 1
    if sp.get("coins"):
        cv.circle(x + w - 12, yy + 37, 6, fill="#e6b422", stroke="#8a6d00")
        cv.text(x + w - 12, yy + 40, sp["coins"], size=8, anchor="middle")
    cv.close("g")


def _draw_spaces(
    cv: Canvas, view: dict[str, Any], data: dict[str, Any], x0: float, y0: float
) -> float:
    cv.text(x0, y0, "Action spaces", size=15, font_weight="bold")
    groups: dict[str, list[dict[str, Any]]] = {}
    for sp in view.get("spaces", []):
        if sp.get("on_board", True):
            groups.setdefault(_area(sp["id"], data), []).append(sp)
    w, h, per_row = 104.0, 46.0, 11
    y = y0 + 10
    slot = per_row  # slots used in the current band (a full band forces a new one)
    band_rows = 0
    for area, spaces in groups.items():
        n = len(spaces)
        if slot + min(n, per_row) > per_row:  # start a new band of groups
            y += band_rows * (h + 6) + (18 if band_rows else 0)
            slot, band_rows = 0, 0
        gx = x0 + slot * (w + 6)
        cv.text(
            gx,
            y + 14,
            AREA_TITLES.get(area, area.replace("_", " ").title()),
            size=11,
            fill="#444",
            font_weight="bold",
        )
        for i, sp in enumerate(spaces):
            col, row = i % per_row, i // per_row
            x, yy = gx + col * (w + 6), y + 18 + row * (h + 6)
            _draw_space(cv, sp, data, view, x, yy, w, h)
        rows = (n + per_row - 1) // per_row
        band_rows = max(band_rows, rows)
        slot += min(n, per_row) + (0 if n >= per_row else 0)
    y += band_rows * (h + 6) + 18
    return y


def _cell_colour(markers: list[int], i: int, colours: list[str]) -> str | None:
    """The best colour whose marker reached space ``i`` (1-based), else None."""
    best = None
    for c, pos in enumerate(markers):
        if pos >= i and c < len(colours):
            best = colours[c]
    return best


def _draw_player(
    cv: Canvas,
    p: dict[str, Any],
    data: dict[str, Any],
    x0: float,
    y0: float,
    name: str,
    active: bool,
) -> float:
    seat = p["seat"]
    sc = SEAT_COLOURS[seat % len(SEAT_COLOURS)]
    cell = 26.0
    width = 120 + 15 * cell + 60
    cv.open("g", class_="player-board", data_seat=seat)
    cv.rect(x0, y0, width, 22, rx=4, fill=sc)
    title = (
        "▶ " if active else ""
    ) + f"{name} — {p.get('score', 0)} points · {p.get('coins', 0)} roubles · "
    title += f"workers {p.get('workers_free', 0)}/{p.get('workers_owned', 0)}"
    title += f" · doublers {p.get('doublers', 0)}"
    cv.text(x0 + 8, y0 + 15, title, size=11, fill=ink_on(sc), font_weight="bold")
    y = y0 + 30
    lines_by_id = {ln["id"]: ln for ln in data["lines"]}
    colours = data["colours"]
    for line in p.get("lines", []):
        info = lines_by_id.get(line["line"], {"name": line["line"], "length": 9})
        length = int(info.get("length", 9))
        cv.open("g", class_="line", data_line=line["line"])
        label = info.get("name", line["line"]).split("(")[0].strip()
        cv.text(x0 + 4, y + 17, label[:20], size=9.5)
        for i in range(1, length + 1):
            col = _cell_colour(line.get("markers", []), i, colours)
            fill = TRACK_FILL.get(col, "#f6f6f6") if col else "#f6f6f6"
            cv.rect(
                x0 + 120 + (i - 1) * cell,
                y,
                cell - 2,
                cell - 2,
                class_="track-cell",
                data_colour=col or "none",
                fill=fill,
                stroke="#777",
                stroke_width=0.6,
            )
            cv.text(
                x0 + 120 + (i - 1) * cell + (cell - 2) / 2,
                y + 16,
                i,
                size=8,
                anchor="middle",
                fill=ink_on(fill),
            )
        for c, pos in enumerate(line.get("markers", [])):
            if pos > 0 and c < len(colours):
                mx = x0 + 120 + (pos - 1) * cell + 3 + 4 * c
                cv.rect(
                    mx,
                    y + cell - 8,
                    5,
                    5,
                    class_="marker",
                    data_colour=colours[c],
                    fill=TRACK_FILL[colours[c]],
                    stroke="#e00" if colours[c] == "black" else "#000",
                    stroke_width=0.8,
                )
        lx = x0 + 120 + length * cell + 4
        for k, num in enumerate(line.get("locos", [])):
            if num:
                cv.rect(
                    lx + k * 26,
                    y + 1,
                    23,
                    cell - 4,
                    rx=3,
                    class_="loco",
                    data_number=num,
                    fill="#3b5b92",
                )
                cv.text(
                    lx + k * 26 + 11.5,
                    y + 16,
                    num,
                    size=10,
                    anchor="middle",
                    fill="#fff",
                    font_weight="bold",
                )
            else:
                cv.rect(
                    lx + k * 26,
                    y + 1,
                    23,
                    cell - 4,
                    rx=3,
                    fill="none",
                    stroke="#aaa",
                    stroke_dasharray="3,2",
                )
        if line.get("doubled"):
            cv.text(lx + 56, y + 16, "×2", size=10, fill="#b00", font_weight="bold")
        cv.close("g")
        y += cell + 2
    # industry track
    cv.text(x0 + 4, y + 17, "Industry", size=9.5)
    structure = data["industry"]
    factories = [f for f in p.get("factories", []) if f]
    points = data["industry_points"]
    fi = bi = 0
    markers = [m for m in p.get("industry", []) if m is not None and m >= 0]
    for i, kind in enumerate(structure):
        x = x0 + 120 + i * cell
        if kind == "F":
            num = factories[fi] if fi < len(factories) else 0
            fi += 1
            if num:
                cv.rect(
                    x,
                    y,
                    cell - 2,
                    cell - 2,
                    class_="factory",
                    data_number=num,
                    fill="#6b4f2a",
                    stroke="#000",
                    stroke_width=0.6,
                )
                cv.text(
                    x + 12, y + 16, num, size=9, anchor="middle", fill="#fff", font_weight="bold"
                )
            else:
                cv.rect(
                    x,
                    y,
                    cell - 2,
                    cell - 2,
                    fill="#efe2c9",
                    stroke="#6b4f2a",
                    stroke_dasharray="3,2",
                )
                cv.text(x + 12, y + 16, "F", size=8, anchor="middle", fill="#6b4f2a")
        else:
            pts = points[bi] if bi < len(points) else ""
            bi += 1
            cv.rect(x, y, cell - 2, cell - 2, fill="#dde7f2", stroke="#777", stroke_width=0.6)
            cv.text(x + 12, y + 16, pts, size=8, anchor="middle", fill="#333")
        for m in markers:
            if m == i:
                cv.circle(
                    x + 12,
                    y - 1,
                    4.5,
                    class_="industry-marker",
                    fill=sc,
                    stroke="#000",
                    stroke_width=0.8,
                )
    y += cell + 8
    cv.close("g")
    return y


def render(view: dict[str, Any], names: list[str] | None = None) -> str:
    """The board of a Russian Railroads view as a standalone SVG document.

    Args:
        view: a transsib view (``GAME.new_state(...).view(seat)``).
        names: optional display names per seat (escaped); default ``"Seat N"``.

    Returns:
        SVG markup, deterministic for equal inputs.
    """
    data = board_data()
    cv = Canvas()
    phase = PHASE_TITLES.get(view.get("phase", ""), view.get("phase", "?"))
    status = (
        f"Round {view.get('round', '?')}/{view.get('rounds', '?')} · {phase}"
        f" · turn order {', '.join(str(s) for s in view.get('order', []))}"
    )
    cv.text(0, 14, status, size=13)
    y = _draw_spaces(cv, view, data, 0, 40)
    y += 24
    players = view.get("players", [])
    active = view.get("active_seat")
    for p in players:
        s = p["seat"]
        name = names[s] if names and s < len(names) else f"Seat {s}"
        y = _draw_player(cv, p, data, 0, y, name, s == active) + 6
    return cv.svg("Russian Railroads board")
