"""The board pictures as functions: views of seeded random games at several stages and player
counts in, SVG out -- parses, holds one element per thing in the view, escapes hostile names,
is deterministic, and its viewBox encloses everything drawn."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from services.web.boards import render
from services.web.boards.e1894 import tile_name
from services.web.boards.play import random_view

NS = "{http://www.w3.org/2000/svg}"
STAGES = (0, 70, 450)
"""Moves played: start, mid game, late game (or the end, whichever comes first)."""

HOSTILE = ['<script>alert("x")</script>', '" onload="alert(1)', "Zoë & <b>Co</b>'s"]


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _cls(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def _check_viewbox(root: ET.Element) -> None:
    x0, y0, w, h = (float(v) for v in root.get("viewBox").split())
    for e in root.iter(NS + "circle"):
        cx, cy, r = float(e.get("cx")), float(e.get("cy")), float(e.get("r"))
        assert x0 <= cx - r and cx + r <= x0 + w and y0 <= cy - r and cy + r <= y0 + h
    for e in root.iter(NS + "rect"):
        x, y = float(e.get("x")), float(e.get("y"))
        assert x0 <= x <= x0 + w and y0 <= y <= y0 + h


def _hostile(title: str, players: int) -> None:
    names = (HOSTILE * 2)[:players]
    svg = render(title, random_view(title, players, 9, 30), names)
    root = _parse(svg)
    assert "<script" not in svg and "<b>" not in svg
    texts = "".join(e.text or "" for e in root.iter(NS + "text"))
    assert HOSTILE[0] in texts  # shown as text, not markup
    assert not any(k.startswith("onload") for e in root.iter() for k in e.attrib)


@pytest.mark.parametrize("players", [2, 4, 6])
@pytest.mark.parametrize("moves", STAGES)
def test_railbarons_board(players: int, moves: int) -> None:
    view = random_view("railbarons", players, 100 + players, moves)
    svg = render("railbarons", view)
    root = _parse(svg)
    assert len(_cls(root, "hex")) == 160
    locos = sorted((e.get("data-company"), e.get("data-hex")) for e in _cls(root, "loco"))
    want = sorted((c, h) for h, cell in view["hexes"].items() for c in cell["companies"])
    assert locos == want
    assert sorted(c for c, info in view["companies"].items() for _ in info["hexes"]) == sorted(
        c for c, _ in want
    )
    houses = sorted(e.get("data-hex") for e in _cls(root, "house"))
    assert houses == sorted(h for h, cell in view["hexes"].items() if cell["developed"])
    dials = {e.get("data-dial"): e for e in _cls(root, "dial")}
    assert set(dials) == set(view["dials"])
    for name, d in view["dials"].items():
        assert dials[name].get("data-used") == str(d["used"])
        assert len(_cls(dials[name], "red-zone")) == 1
    markers = {e.get("data-company"): e.get("data-income") for e in _cls(root, "income-marker")}
    assert markers == {c: str(i["income"]) for c, i in view["companies"].items() if i["open"]}
    assert {e.get("data-city") for e in _cls(root, "industry")} == set(view["industrial"])
    _check_viewbox(root)
    assert render("railbarons", view) == svg


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("moves", STAGES)
def test_e1894_board(players: int, moves: int) -> None:
    view = random_view("e1894", players, 200 + players, moves)
    svg = render("e1894", view)
    root = _parse(svg)
    board = view["board"]
    tiles = {e.get("data-hex"): e.get("data-tile") for e in _cls(root, "tile")}
    assert tiles == {h: t["tile"] for h, t in board["tiles"].items()}
    tokens = sorted((e.get("data-corporation"), e.get("data-hex")) for e in _cls(root, "token"))
    want = sorted(
        (sym, h)
        for h, cell in board["tokens"].items()
        for c in cell["cities"]
        for sym in c["slots"]
        if sym
    )
    assert tokens == want
    markers = sorted(e.get("data-corporation") for e in _cls(root, "price-marker"))
    assert markers == sorted(
        s for s, c in view["corporations"].items() if c["row"] >= 0 and c["col"] >= 0
    )
    assert {e.get("data-corporation") for e in _cls(root, "charter")} == set(view["corporations"])
    trains = sum(len(c["trains"]) for c in view["corporations"].values())
    assert len(_cls(root, "train")) == sum(
        min(len(c["trains"]), 6) for c in view["corporations"].values()
    )
    assert trains >= 0
    assert len(_cls(root, "market-cell")) > 100
    _check_viewbox(root)
    assert render("e1894", view) == svg


def test_e1894_split_city_has_two_cities() -> None:
    """Paris (G6) is printed as two cities; both are drawn, apart."""
    root = _parse(render("e1894", random_view("e1894", 4, 1, 0)))
    paris = [e for e in _cls(root, "city") if e.get("data-hex") == "G6"]
    assert [e.get("data-city") for e in paris] == ["0", "1"]
    assert paris[0].get("cx") != paris[1].get("cx")


def test_tile_name() -> None:
    assert tile_name("57-3") == "57" and tile_name("X2-0") == "X2" and tile_name("A2-0") == "A2"


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("moves", STAGES)
def test_transsib_board(players: int, moves: int) -> None:
    view = random_view("transsib", players, 300 + players, moves)
    svg = render("transsib", view)
    root = _parse(svg)
    assert {e.get("data-seat") for e in _cls(root, "player-board")} == {
        str(p["seat"]) for p in view["players"]
    }
    assert len(_cls(root, "line")) == 3 * players
    want = 0
    for sp in view["spaces"]:
        if sp.get("on_board", True) and sp["seat"] >= 0:
            want += max(sp["workers"], 1)
        want += len([s for s in sp.get("seats", []) if s != sp["seat"]])
    assert len(_cls(root, "worker")) == want
    locos = sorted(int(e.get("data-number")) for e in _cls(root, "loco"))
    assert locos == sorted(
        n for p in view["players"] for ln in p["lines"] for n in ln["locos"] if n
    )
    _check_viewbox(root)
    assert render("transsib", view) == svg


@pytest.mark.parametrize(("title", "players"), [("railbarons", 3), ("e1894", 3), ("transsib", 3)])
def test_hostile_names_are_escaped(title: str, players: int) -> None:
    _hostile(title, players)


def test_unknown_title() -> None:
    with pytest.raises(KeyError, match="no board for title"):
        render("nope", {})


def test_same_seed_same_picture() -> None:
    a = render("e1894", random_view("e1894", 4, 7, 120))
    b = render("e1894", random_view("e1894", 4, 7, 120))
    c = render("e1894", random_view("e1894", 4, 8, 120))
    assert a == b and a != c


def test_e1894_track_meets_the_neighbours() -> None:
    """Every edge end of a laid tile's track sits on the edge shared with the neighbour the
    rotated exit points to (the midpoint of the two hex centres), per map_hexes.json."""
    import re

    from services.web.boards.e1894 import HEX, board_data
    from services.web.boards.svg import pointy_center

    view = random_view("e1894", 4, 22, 300)
    root = _parse(render("e1894", view))
    hexes = board_data()["hexes"]
    tiles = board_data()["tiles"]
    checked = 0
    for g in _cls(root, "tile"):
        coord, rot = g.get("data-hex"), int(g.get("data-rotation"))
        h = hexes[coord]
        cx, cy = pointy_center(h["x"], h["y"], HEX)
        exits = {(e + rot) % 6 for e in tiles[tile_name(g.get("data-tile"))]["parsed"]["exits"]}
        mids = []
        for e in exits:
            n = hexes.get(h["neighbors"].get(str(e), ""))
            if n:
                nx, ny = pointy_center(n["x"], n["y"], HEX)
                mids.append(((cx + nx) / 2, (cy + ny) / 2))
        for p in _cls(g, "track"):
            nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", p.get("d"))]
            ends = [(nums[0], nums[1]), (nums[-2], nums[-1])]
            on_edge = [
                m for m in mids for x, y in ends if abs(m[0] - x) < 0.2 and abs(m[1] - y) < 0.2
            ]
            # every path has an edge end; an exit to the map's border has no neighbour to check
            assert on_edge or len(mids) < len(exits), (coord, ends, mids)
            checked += bool(on_edge)
    assert checked > 10


@pytest.mark.parametrize("title", ["railbarons", "e1894"])
def test_a_long_name_is_shortened_and_the_figures_after_it_stay(title: str) -> None:
    """A fresh user saw "… score 67 (#1" on a finished board: the players' line was cut at
    a fixed length, rank and all. Now the name is cut (with an ellipsis), the line is not."""
    long = "search-easy-bot-with-a-very-long-name-indeed"
    view = random_view(title, 3, 5, 20_000)
    root = _parse(render(title, view, [long, "ada", "bob"]))
    lines = ["".join(e.itertext()) for e in root.iter(NS + "text") if e.get("class") == "player"]
    assert len(lines) == 3, lines
    first = lines[0]
    assert long not in first and first.startswith(long[:27] + "…"), first
    assert "$" in first
    if title == "railbarons":
        assert first.rstrip().endswith(")"), first  # the rank, "(#N)", in full
    else:
        assert "score" in first, first


@pytest.mark.parametrize(("title", "players"), [("railbarons", 3), ("transsib", 3)])
@pytest.mark.parametrize("moves", [0, 40, 10_000])
def test_the_status_line_names_the_phase_in_words(title: str, players: int, moves: int) -> None:
    """The board's status line says the phase as a person reads it ("choosing starting
    bonuses"), never the view's code (``start_bonus``, ``choose_dial``, ``game_over``)."""
    from services.railbarons.engine.phases import PHASE_TITLES as RB
    from services.transsib.engine.frames import PHASE_TITLES as TS

    view = random_view(title, players, 11, moves)
    texts = [
        e.text for e in _parse(render(title, view)).iter() if (e.text or "").startswith("Round ")
    ]
    assert len(texts) == 1, texts
    words = (RB if title == "railbarons" else TS)[view["phase"]]
    assert f" · {words} · " in texts[0], texts[0]
    assert "_" not in texts[0] and "phase " not in texts[0], texts[0]
