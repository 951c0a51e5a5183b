"""The replay page's review (issue 31): a server-drawn SVG line chart of each seat's win
chance over the game (the search's estimate after each move played, ``win_chance_after``),
whose points link to the replay at that move, and each seat's costliest moves in words.
Pure functions of the review's entries; every text passes through
:func:`services.web.boards.svg.esc`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.web.boards.svg import SEAT_COLOURS, esc

WIDTH, HEIGHT = 720, 240
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 40, 12, 26, 28
LEGEND_Y = 6
"""The legend's row, above the plot (whose top, the 100 % line, is at ``PAD_TOP``)."""
LEGEND_BOX = 10
"""The legend's colour squares (px); the row is ``LEGEND_BOX`` high, ``PAD_TOP - LEGEND_Y -
LEGEND_BOX`` (10 px) above the 100 % line and the points on it (radius 2.5)."""
LEGEND_CHAR = 6.5
"""Width allowed per character of a legend name at font size 10 (px; wider than the mean
glyph of the page's sans-serif, so names never run into the next entry)."""
LEGEND_NAME_MAX = 28
"""Longer names are cut (with an ellipsis) in the legend; the line's tooltip has the whole."""
MAX_POINTS = 200
"""Clickable points per seat at most (every k-th move of a long game; the line has them all)."""


def _x(version: int, total: int) -> float:
    return PAD_LEFT + (WIDTH - PAD_LEFT - PAD_RIGHT) * version / max(1, total)


def _y(chance: float) -> float:
    return PAD_TOP + (HEIGHT - PAD_TOP - PAD_BOTTOM) * (1.0 - chance)


def legend_layout(names: Sequence[str], seats: int) -> list[tuple[float, int, str]]:
    """``(x, y, shown name)`` of each seat's legend entry (box at ``x, y``, the name after it):
    one row at :data:`LEGEND_Y`, each entry as wide as its name (:data:`LEGEND_CHAR` per
    character, cut at :data:`LEGEND_NAME_MAX`) plus a gap, so long names do not overlap; a
    row that would run past the plot's right edge is squeezed to equal shares of the width
    (names cut to fit)."""
    shown = []
    for seat in range(seats):
        name = names[seat] if seat < len(names) else f"Seat {seat}"
        if len(name) > LEGEND_NAME_MAX:
            name = name[: LEGEND_NAME_MAX - 1] + "\u2026"
        shown.append(name)
    gap = 16
    widths = [LEGEND_BOX + 4 + LEGEND_CHAR * len(n) + gap for n in shown]
    room = WIDTH - PAD_RIGHT - (PAD_LEFT + 8)
    if sum(widths) > room:  # equal shares, names cut to their share
        share = room / max(1, seats)
        chars = max(1, int((share - LEGEND_BOX - 4 - gap) / LEGEND_CHAR))
        shown = [n if len(n) <= chars else n[: max(1, chars - 1)] + "\u2026" for n in shown]
        widths = [share] * seats
    out, x = [], float(PAD_LEFT + 8)
    for name, w in zip(shown, widths, strict=True):
        out.append((x, LEGEND_Y, name))
        x += w
    return out


def win_chance_svg(entries: Sequence[dict[str, Any]], names: Sequence[str], table_id: str) -> str:
    """The chart as an ``<svg>`` element: x = the move (0 .. len(entries)), y = the win chance
    (0 .. 100%); one line per seat; point ``N`` links to ``/tables/{table_id}/replay?at=N``
    (the replay with the slider at move ``N``). Empty string without entries."""
    if not entries:
        return ""
    total = len(entries)
    seats = len(entries[0]["win_chance_after"])
    out = [
        f'<svg id="review-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}"'
        ' role="img" aria-label="win chance per seat over the game">'
    ]
    for pct in (0, 25, 50, 75, 100):
        y = _y(pct / 100)
        out.append(
            f'<line x1="{PAD_LEFT}" y1="{y:.1f}" x2="{WIDTH - PAD_RIGHT}" y2="{y:.1f}" '
            'stroke="#ccc" stroke-width="0.5"/>'
            f'<text x="{PAD_LEFT - 4}" y="{y + 3:.1f}" font-size="9" '
            f'text-anchor="end">{pct}%</text>'
        )
    out.append(
        f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 6}" font-size="10" text-anchor="middle">'
        f"move (1 - {total})</text>"
    )
    step = max(1, total // MAX_POINTS)
    for seat in range(seats):
        colour = SEAT_COLOURS[seat % len(SEAT_COLOURS)]
        name = names[seat] if seat < len(names) else f"Seat {seat}"
        first = entries[0]["win_chance_before"][seat]
        points = [f"{_x(0, total):.1f},{_y(first):.1f}"] + [
            f"{_x(e['version'], total):.1f},{_y(e['win_chance_after'][seat]):.1f}" for e in entries
        ]
        out.append(
            f'<polyline class="seat-line" data-seat="{seat}" fill="none" stroke="{esc(colour)}" '
            f'stroke-width="1.5" points="{" ".join(points)}"><title>{esc(name)}</title></polyline>'
        )
        for e in entries[step - 1 :: step]:
            v, chance = e["version"], e["win_chance_after"][seat]
            out.append(
                f'<a class="review-point" href="/tables/{esc(table_id)}/replay?at={v}" '
                f'data-at="{v}" data-seat="{seat}"><circle cx="{_x(v, total):.1f}" '
                f'cy="{_y(chance):.1f}" r="2.5" fill="{esc(colour)}"><title>'
                f"{esc(name)}, move {v}: {chance:.0%}</title></circle></a>"
            )
    for seat, (x, y, name) in enumerate(legend_layout(names, seats)):
        out.append(
            f'<rect class="legend" x="{x:.0f}" y="{y}" width="{LEGEND_BOX}" '
            f'height="{LEGEND_BOX}" fill="{esc(SEAT_COLOURS[seat % len(SEAT_COLOURS)])}"/>'
            f'<text x="{x + LEGEND_BOX + 4:.0f}" y="{y + 9}" font-size="10">{esc(name)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def costliest_moves(
    entries: Sequence[dict[str, Any]], names: Sequence[str], n: int = 3
) -> list[dict[str, Any]]:
    """Per seat (in seat order) its ``n`` moves of largest loss, largest first:
    ``{"seat", "name", "moves": [{"version", "text"}]}``, ``text`` as in "move 143, Ouest:
    Buy a 4-train: the search preferred 'Pass', -12% win chance" (moves without loss are left
    out)."""
    seats = len(entries[0]["win_chance_after"]) if entries else 0
    out = []
    for seat in range(seats):
        name = names[seat] if seat < len(names) else f"Seat {seat}"
        mine = sorted(
            (e for e in entries if e["seat"] == seat and e["loss"] > 0),
            key=lambda e: (-e["loss"], e["version"]),
        )[:n]
        out.append(
            {
                "seat": seat,
                "name": name,
                "moves": [
                    {
                        "version": e["version"],
                        "text": f"move {e['version']}, {name}: {e['label']}: the search "
                        f"preferred '{e['best_label']}', "
                        f"\u2212{round(100 * e['loss'])}% win chance",
                    }
                    for e in mine
                ],
            }
        )
    return out
