"""Shared helpers for the board pictures: escaped SVG elements, hex geometry, a viewBox
taken from what was drawn.

Everything here is a pure function of its arguments. Every text and attribute value passes
through :func:`esc` (XML escaping, quotes included), so a company name, a player name or an
option value can never break out of the markup.

Hex geometry (used by the Chicago Express and 1894 maps):

* ``flat`` hexes (Chicago Express, "odd-q" offset columns): a column index ``q`` and a row
  ``r``; centre ``x = 1.5 * size * q``, ``y = sqrt(3) * size * (r + 0.5 * (q & 1))``.
  Corners at 0, 60, ..., 300 degrees.
* ``pointy`` hexes (1894, 18xx letter-row / number-column ids on a doubled grid): a doubled
  column ``c`` and a row ``r`` with ``c + r`` even; centre ``x = sqrt(3)/2 * size * c``,
  ``y = 1.5 * size * r``. Corners at 30, 90, ..., 330 degrees
  (the 1894 module documents its edge numbering).

Sizes are in SVG user units; the caller picks ``size`` (hex circumradius).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from xml.sax.saxutils import escape as _escape

SQRT3 = math.sqrt(3.0)
_ENT = {'"': "&quot;", "'": "&apos;"}


_SPECIAL = frozenset("&<>\"'")


def esc(value: object) -> str:
    """``value`` as text safe inside an element or a double- or single-quoted attribute
    (``& < > " '`` become entities)."""
    s = str(value)
    if _SPECIAL.isdisjoint(s):
        return s
    return _escape(s, _ENT)


def fmt(v: float) -> str:
    """A coordinate with at most one decimal (compact, deterministic)."""
    r = round(v, 1)
    if r == int(r):
        return str(int(r))
    return f"{r:.1f}"


def attrs(**kw: object) -> str:
    """`` key="value"`` pairs, escaped; ``_`` in a key becomes ``-``; ``None`` values dropped;
    a trailing ``_`` is stripped (``class_`` -> ``class``)."""
    out = []
    for k, v in kw.items():
        if v is None:
            continue
        name = k.rstrip("_").replace("_", "-")
        if isinstance(v, float):
            v = fmt(v)
        out.append(f' {name}="{esc(v)}"')
    return "".join(out)


def short(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut shown by an
    ellipsis (``"search-eas…"``), so a long name never pushes the figures after
    it out of a fixed-width line."""
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"


class Canvas:
    """Collects SVG elements and tracks the drawn extent (so the viewBox never clips).

    ``extent`` grows with every element's bounding box as given by the caller.
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.minx = math.inf
        self.miny = math.inf
        self.maxx = -math.inf
        self.maxy = -math.inf

    def grow(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.minx = min(self.minx, x0, x1)
        self.miny = min(self.miny, y0, y1)
        self.maxx = max(self.maxx, x0, x1)
        self.maxy = max(self.maxy, y0, y1)

    def raw(self, markup: str) -> None:
        """Append markup the caller built with :func:`esc`/:func:`attrs`."""
        self.parts.append(markup)

    def open(self, tag: str, **kw: object) -> None:
        self.parts.append(f"<{tag}{attrs(**kw)}>")

    def close(self, tag: str) -> None:
        self.parts.append(f"</{tag}>")

    def rect(self, x: float, y: float, w: float, h: float, **kw: object) -> None:
        self.grow(x, y, x + w, y + h)
        self.parts.append(
            f"<rect{attrs(x=float(x), y=float(y), width=float(w), height=float(h), **kw)}/>"
        )

    def circle(self, cx: float, cy: float, r: float, **kw: object) -> None:
        self.grow(cx - r, cy - r, cx + r, cy + r)
        self.parts.append(f"<circle{attrs(cx=float(cx), cy=float(cy), r=float(r), **kw)}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, **kw: object) -> None:
        self.grow(x1, y1, x2, y2)
        self.parts.append(
            f"<line{attrs(x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2), **kw)}/>"
        )

    def polygon(self, points: Iterable[tuple[float, float]], **kw: object) -> None:
        pts = list(points)
        for x, y in pts:
            self.grow(x, y, x, y)
        p = " ".join(f"{fmt(x)},{fmt(y)}" for x, y in pts)
        self.parts.append(f"<polygon{attrs(points=p, **kw)}/>")

    def path(self, d: str, bbox: tuple[float, float, float, float], **kw: object) -> None:
        self.grow(*bbox)
        self.parts.append(f"<path{attrs(d=d, **kw)}/>")

    def text(
        self,
        x: float,
        y: float,
        s: object,
        size: float = 12,
        anchor: str = "start",
        **kw: object,
    ) -> None:
        """Text with its baseline at ``y``; the extent assumes ~0.6 em per character."""
        s = str(s)
        w = 0.6 * size * len(s)
        x0 = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        self.grow(x0, y - size, x0 + w, y + 0.3 * size)
        self.parts.append(
            f"<text{attrs(x=float(x), y=float(y), font_size=float(size), text_anchor=anchor, **kw)}"
            ">"
            f"{esc(s)}</text>"
        )

    def place_labels(self, labels: Iterable[tuple[float, float, str]]) -> None:
        """Map place names at ``(x, y, text)``, centred, 6.5 px, dark on a white halo
        (``paint-order: stroke``), so they stay legible over track and tiles; drawn last
        by the caller, on top of the map."""
        for x, y, line in labels:
            self.text(
                x,
                y,
                line,
                size=6.5,
                anchor="middle",
                fill="#222",
                stroke="#fff",
                stroke_width=2,
                paint_order="stroke",
                class_="place",
            )

    def svg(self, title: str, margin: float = 8, **root: object) -> str:
        """The whole document, its viewBox the drawn extent plus ``margin``."""
        if self.minx == math.inf:
            self.grow(0, 0, 1, 1)
        x0, y0 = self.minx - margin, self.miny - margin
        w, h = self.maxx - self.minx + 2 * margin, self.maxy - self.miny + 2 * margin
        vb = f"{fmt(x0)} {fmt(y0)} {fmt(w)} {fmt(h)}"
        head = (
            '<svg xmlns="http://www.w3.org/2000/svg"'
            f"{attrs(viewBox=vb, width=fmt(w), height=fmt(h), **root)}"
            ' font-family="DejaVu Sans, Arial, sans-serif">'
        )
        return head + f"<title>{esc(title)}</title>" + "".join(self.parts) + "</svg>"


# ---------------------------------------------------------------------------- hex geometry


def flat_center(q: int, r: int, size: float) -> tuple[float, float]:
    """Centre of flat-topped hex in odd-q offset column ``q``, row ``r``."""
    return 1.5 * size * q, SQRT3 * size * (r + 0.5 * (q & 1))


def flat_corners(cx: float, cy: float, size: float) -> list[tuple[float, float]]:
    return [
        (cx + size * math.cos(math.radians(60 * i)), cy + size * math.sin(math.radians(60 * i)))
        for i in range(6)
    ]


def pointy_center(c: int, r: int, size: float) -> tuple[float, float]:
    """Centre of pointy-topped hex at doubled column ``c`` and row ``r``."""
    return SQRT3 / 2 * size * c, 1.5 * size * r


def pointy_corners(cx: float, cy: float, size: float) -> list[tuple[float, float]]:
    return [
        (
            cx + size * math.cos(math.radians(60 * i - 30)),
            cy + size * math.sin(math.radians(60 * i - 30)),
        )
        for i in range(6)
    ]


COLOURS = {
    "red": "#d62728",
    "blue": "#1f77b4",
    "yellow": "#f2c200",
    "green": "#2ca02c",
    "black": "#222222",
    "orange": "#ff7f0e",
    "purple": "#9467bd",
    "brown": "#8c564b",
    "grey": "#7f7f7f",
    "gray": "#7f7f7f",
    "white": "#ffffff",
    "pink": "#e377c2",
    "cyan": "#17becf",
}
"""Named colours of the data files -> readable fills."""

SEAT_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
"""One colour per seat 0..5."""


def colour(name: str | None, default: str = "#888888") -> str:
    """A fill for a data colour name, or a ``#rrggbb`` value passed through."""
    if not name:
        return default
    if name.startswith("#") and len(name) in (4, 7):
        return name
    return COLOURS.get(name.lower(), default)


def ink_on(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (``#rrggbb``)."""
    try:
        r, g, b = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    except ValueError:
        return "#000"
    return "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#fff"
