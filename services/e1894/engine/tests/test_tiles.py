"""Tile DSL parser, rotation, revenue by phase and the supply.

Spec: ``e1894.md`` "Hexes and the tile DSL"; data: ``tiles.json`` (its ``parsed`` field is the
extractor's own reading of the DSL, checked here against ours).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.e1894.engine.data import DATA
from services.e1894.engine.hexmap import MAP
from services.e1894.engine.tiles import (
    GREEN_CITY_SPLITS,
    NODE_BASE,
    PARIS_TILES_RESERVED_FOR_PLM,
    TILES,
    Tile,
    get_tile,
    parse_tile_id,
    revenue_color,
)
from services.kernel.engine import MalformedAction

RAW_TILES = json.loads((DATA / "tiles.json").read_text())
RAW_HEXES = json.loads((DATA / "map_hexes.json").read_text())["hexes"]


def _as_parsed(tile: Tile) -> dict:
    def end(x: int) -> dict:
        if x < NODE_BASE:
            return {"edge": x}
        nd = tile.nodes[x - NODE_BASE]
        same_kind = [n.index for n in tile.nodes if n.kind == nd.kind]
        return {nd.kind: same_kind.index(nd.index)}

    out: dict = {"cities": [], "towns": [], "offboards": []}
    for nd in tile.nodes:
        entry = {"part_index": nd.index, "revenue": nd.revenue}
        if nd.kind == "city":
            entry["slots"] = nd.slots
        key = {"city": "cities", "town": "towns", "offboard": "offboards"}[nd.kind]
        out[key].append(entry)
    out["paths"] = [{"a": end(a), "b": end(b)} for a, b in tile.base_paths]
    out["exits"] = sorted(tile.rotated(0).exits)
    out["labels"] = sorted(tile.labels)
    return out


def _strip(parsed: dict) -> dict:
    out = {k: parsed[k] for k in ("paths", "labels")}
    out["exits"] = sorted(parsed["exits"])
    for key in ("cities", "towns", "offboards"):
        out[key] = [
            {k: v for k, v in e.items() if k in ("part_index", "revenue", "slots")}
            for e in parsed[key]
        ]
    return out


@pytest.mark.parametrize("raw", RAW_TILES["tiles"], ids=lambda t: t["name"])
def test_parser_reads_every_tile_like_the_extract(raw) -> None:
    """Our DSL parse of each supply tile equals the extract's ``parsed`` (nodes, revenue,
    slots, paths, exits, labels) and its upgrade cost."""
    tile = TILES[raw["name"]]
    ours = _as_parsed(tile)
    ref = _strip(raw["parsed"])
    for e in ref["cities"]:
        e.setdefault("slots", 1)
    assert {k: ours[k] for k in ref} == ref
    assert tile.color == raw["color"] and tile.count == raw["count"]
    ups = raw["parsed"]["upgrades"]
    assert tile.upgrade_cost == (ups[0]["cost"] if ups else 0)


@pytest.mark.parametrize("raw", RAW_HEXES, ids=lambda h: h["coord"])
def test_parser_reads_every_printed_hex(raw) -> None:
    """The printed tile of each hex parses like the extract (e.g. C6's stub path to town 1)."""
    tile = MAP.get(raw["coord"]).tile
    ours = _as_parsed(tile)
    ref = _strip(raw["parsed"])
    for e in ref["cities"]:
        e.setdefault("slots", 1)
    assert {k: ours[k] for k in ref} == ref
    ups = raw["parsed"]["upgrades"]
    assert tile.upgrade_cost == (ups[0]["cost"] if ups else 0)
    assert tile.preprinted and tile.name == raw["coord"]


@given(st.sampled_from(sorted(TILES)), st.integers(0, 5), st.integers(0, 5))
def test_rotation_composes(name: str, r: int, s: int) -> None:
    """Rotating by r adds r (mod 6) to every edge; rotations compose."""
    tile = TILES[name]
    exits_r = tile.rotated(r).exits
    assert exits_r == frozenset((e + r) % 6 for e in tile.rotated(0).exits)
    assert frozenset((e + s) % 6 for e in exits_r) == tile.rotated((r + s) % 6).exits


def test_distinct_rotations_keep_city_identity() -> None:
    """57 has three distinct layouts; X5's rotation by 3 swaps its cities, so all six differ."""
    assert TILES["57"].distinct_rotations() == (0, 1, 2)
    assert TILES["9"].distinct_rotations() == (0, 1, 2)
    assert len(TILES["X5"].distinct_rotations()) == 6
    assert TILES["X13"].distinct_rotations() == (0,)


def test_phase_dependent_revenue() -> None:
    """§"Hexes and the tile DSL": ``yellow_30|brown_80`` is 30 until Brown, then 80 (London);
    fixed revenues are the same in every phase."""
    london = MAP.get("A10").tile.nodes[0]
    assert [london.value(p) for p in ("Yellow", "Green", "Blue", "Brown", "Purple")] == [
        30,
        30,
        30,
        80,
        80,
    ]
    nl = MAP.get("C18").tile.nodes[0]
    assert (nl.value("Blue"), nl.value("Red")) == (30, 40)
    assert TILES["X16"].nodes[1].value("Yellow") == 40
    assert revenue_color("Blue") == "green" and revenue_color("Gray") == "brown"


def test_supply_and_special_tables() -> None:
    """62 tile names, 124 tiles; split table and Paris tiles as in ``tiles.json``."""
    assert len(TILES) == 62 and sum(t.count for t in TILES.values()) == 124
    assert GREEN_CITY_SPLITS["14"] == ("X16", "X17", "X18")
    assert PARIS_TILES_RESERVED_FOR_PLM == frozenset({"X1", "X4", "X5", "X9", "X10", "X11", "X12"})
    assert TILES["X16"].cities == 2 and all(n.slots == 1 for n in TILES["X16"].nodes)


def test_tile_ids_and_unknown_tiles() -> None:
    """``57-3`` -> (57, 3); unknown names are MalformedAction ``unknown_tile``."""
    assert parse_tile_id("57-3") == ("57", 3)
    assert parse_tile_id("X16") == ("X16", None)
    for bad in ("58", "X99-0", "57-x", ""):
        with pytest.raises(MalformedAction) as err:
            parse_tile_id(bad)
        assert err.value.code == "unknown_tile"
    with pytest.raises(MalformedAction):
        get_tile("D9")


def test_dsl_rejects_undefined_node() -> None:
    """A path to a node not yet defined is a data error."""
    with pytest.raises(ValueError):
        Tile("bad", "yellow", "path=a:0,b:_0;city=revenue:20")
