"""Map model: coordinates, neighbours per edge, passable sides, hexside ids.

Spec: ``e1894.md`` "Hexes and the tile DSL" (doubled coordinates, edge offsets, a gray, red
or blue neighbour is entered only where its printed track points back at the hex).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.e1894.engine.data import DATA
from services.e1894.engine.hexmap import EDGE_OFFSETS, HEXSIDE_COUNT, MAP, hexside, opposite
from services.e1894.engine.track import passable_edges
from services.kernel.engine import MalformedAction

RAW = {h["coord"]: h for h in json.loads((DATA / "map_hexes.json").read_text())["hexes"]}


def test_map_has_all_76_hexes_with_doubled_coordinates() -> None:
    """§"Hexes and the tile DSL": x = number - 1, y = row index (A = 0)."""
    assert MAP.size == 76
    assert (MAP.get("G6").x, MAP.get("G6").y) == (5, 6)
    assert (MAP.get("A2").x, MAP.get("A2").y) == (1, 0)
    for h in MAP.hexes:
        assert (h.x, h.y) == (RAW[h.id]["x"], RAW[h.id]["y"])


def test_edge_offsets_are_the_spec_ones() -> None:
    """§"Hexes and the tile DSL": 0 (-1,+1) SW, 1 (-2,0) W, 2 (-1,-1) NW, 3 (+1,-1) NE,
    4 (+2,0) E, 5 (+1,+1) SE."""
    assert EDGE_OFFSETS == ((-1, 1), (-2, 0), (-1, -1), (1, -1), (2, 0), (1, 1))


def test_neighbours_match_the_data_for_every_hex() -> None:
    """Every hex's neighbour per edge equals ``map_hexes.json`` ``neighbors``."""
    for h in MAP.hexes:
        got = {str(e): MAP.hexes[n].id for e, n in enumerate(h.neighbors) if n >= 0}
        assert got == RAW[h.id]["neighbors"], h.id


def test_passable_sides_match_the_engine_neighbors() -> None:
    """A gray/red/blue neighbour counts only where its printed track points back
    (``passable_neighbors`` in the data)."""
    for h in MAP.hexes:
        assert sorted(passable_edges(h.id)) == sorted(
            int(e) for e in RAW[h.id]["passable_neighbors"]
        ), h.id


@given(st.sampled_from([h.id for h in MAP.hexes]), st.integers(0, 5))
def test_neighbour_relation_is_symmetric(hex_id: str, edge: int) -> None:
    """Edge e of a hex faces edge (e + 3) % 6 of its neighbour, and both share one hexside id."""
    nb = MAP.neighbor_id(hex_id, edge)
    if nb is None:
        return
    assert MAP.neighbor_id(nb, opposite(edge)) == hex_id
    assert hexside(MAP.index(hex_id), edge) == hexside(MAP.index(nb), opposite(edge))


def test_hexside_ids_are_distinct_per_side() -> None:
    """Distinct hexsides get distinct ids (used as route bitsets)."""
    seen = {}
    for h in MAP.hexes:
        for e in range(6):
            key = (
                frozenset({(h.index, e), (h.neighbors[e], opposite(e))})
                if h.neighbors[e] >= 0
                else (h.index, e)
            )
            seen.setdefault(hexside(h.index, e), set()).add(key)
    assert all(len(v) == 1 for v in seen.values())
    assert len(seen) == HEXSIDE_COUNT


@pytest.mark.parametrize("bad", ["Z9", "G7", "", "g6", 6])
def test_unknown_hex_is_malformed(bad) -> None:
    """Unknown hexes are refused with MalformedAction ``unknown_hex``."""
    with pytest.raises(MalformedAction) as err:
        MAP.index(bad)
    assert err.value.code == "unknown_hex"


def test_homes_and_blocks_from_data() -> None:
    """Homes (Ouest B3 + E6, PLM Paris city 0), private blocks (I14 LRC) and late candidates."""
    assert MAP.get("G6").homes == (("PLM", 0),)
    assert MAP.get("B3").homes == (("Ouest", 0),) and MAP.get("E6").homes == (("Ouest", 0),)
    assert MAP.get("I14").blocked_by == ("LRC",)
    assert MAP.get("H17").late_candidate == "LB" and MAP.get("G6").late_candidate == "LF"
