"""The mutable board: initial state, ids, supply order, clone and JSON round trips.

Spec: ``e1894.md`` "Map, track and tokens" (homes and reservations, PLM on Paris city 0,
split tiles), "Action JSON format" (tile, city and preprinted-tile ids).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.e1894.engine.board import Board
from services.e1894.engine.hexmap import MAP
from services.e1894.engine.tests import tracekit as tk
from services.e1894.engine.tiles import TILES
from services.e1894.engine.track import lay_tile, legal_tile_lays
from services.kernel.engine import MalformedAction


def test_initial_board() -> None:
    """Printed tiles everywhere, full supply, 4 ferry markers, every fixed home reserved
    (PLM on Paris city 0, two homes for Ouest, Nord and CFOR), no token."""
    b = Board.from_data()
    assert all(b.tile_name(h.id) == h.id for h in MAP.hexes)
    assert sum(b.supply_left(n) for n in TILES) == 124 and b.ferries_left() == 4
    homes = {
        "G6": ["PLM"],
        "B3": ["Ouest"],
        "E6": ["Ouest"],
        "D9": ["Nord"],
        "G14": ["Nord"],
        "D3": ["CFOR"],
        "H3": ["CFOR"],
        "I10": ["Est"],
        "E16": ["Belge"],
        "D15": ["AG"],
    }
    for hex_id, corps in homes.items():
        assert b.reservations(hex_id) == corps, hex_id
    assert b.reserved[MAP.index("G6")] == ["PLM", None]
    assert not any(b.city_tokens(h.id) != [[] for _ in b.city_tokens(h.id)] for h in MAP.hexes)
    assert Board.new().to_json() == b.to_json()


def test_ids() -> None:
    """Printed tile ids (``D9-3``), laid tile ids (``57-0``) and city ids (``X16-0-1``)."""
    b = Board.from_data()
    assert b.tile_id("D9") == "D9-3" and b.city_id("D9", 0) == "D9-3-0"
    assert b.parse_city_id("D9-3-0") == ("D9", 0)
    assert b.parse_city_id("A12-0-0") == ("A12", 0)
    b.put_tile("D9", "57", 0)
    assert b.tile_id("D9") == "57-0" and b.parse_city_id("57-0-0") == ("D9", 0)
    for bad in ("57-1-0", "D9-3-0", "57-0-1", "nonsense"):
        with pytest.raises(MalformedAction):
            b.parse_city_id(bad)
    with pytest.raises(MalformedAction):
        b.supply_left("99")


def test_supply_order_returns_copies_last() -> None:
    """An upgraded tile's copy goes back at the end of the supply; the next lay takes the
    first copy in order (what 18xx.games' tile ids show: 57-6 before a returned 57-0)."""
    b = Board.from_data()
    for i, h in enumerate(["E16", "G10", "G14", "D15", "C14", "E10"]):
        b.put_tile(h, "57", 0)
        assert b.tile_id(h) == f"57-{i}"
    b.put_tile("E16", "15", 0)
    assert b.free_copies["57"] == [6, 7, 8, 9, 0]
    b.put_tile("D9", "57", 0)
    assert b.tile_id("D9") == "57-6"
    b.put_tile("B9", "57", 0, copy=0)
    assert b.tile_id("B9") == "57-0"


def test_clone_is_independent() -> None:
    """Changing a clone never changes the original."""
    b = Board.from_data()
    b.put_token("Belge", "E16", 0)
    before = b.to_json()
    c = b.clone()
    c.put_tile("E16", "57", 2)
    c.put_token("AG", "D15", 0)
    c.give_ferry("AG")
    c.waiting.append(("Est", 3))
    assert b.to_json() == before
    assert c.to_json() != before


def test_paris_keeps_plm_reservation_and_late_reservation() -> None:
    """Every Paris tile carries PLM's reservation on city 0; LF's on city 1 survives."""
    b = Board.from_data()
    b.reserve("LF", "G6", 1)
    b.put_tile("G6", "X1", 0)
    assert b.reserved[MAP.index("G6")] == ["PLM", "LF"]
    b.put_token("PLM", "G6", 0)
    b.put_tile("G6", "X4", 0)
    assert b.city_tokens("G6") == [["PLM"], []]
    assert b.reserved[MAP.index("G6")] == [None, "LF"]


def test_settle_hex_reservation_on_open_city() -> None:
    """A hex-level reservation settles on the split tile's city still open."""
    b = Board.from_data()
    b.put_tile("D9", "57", 0)
    b.put_tile("D9", "14", 1)
    b.put_tile("D9", "X16", 1)
    assert b.reservations("D9") == ["Nord"] and b.hex_reserved
    b.put_token("Est", "D9", 1)
    b.settle_hex_reservations("D9")
    assert b.reserved[MAP.index("D9")][0] == "Nord" and not b.hex_reserved[MAP.index("D9")]


LINES = [c for g in tk.GAMES for c in list(tk.boards(g))[::40]]


@pytest.mark.parametrize("case", LINES, ids=lambda c: f"{c[0]['id']}")
def test_json_round_trip_on_recorded_positions(case) -> None:
    """``Board.from_json(b.to_json())`` reproduces the board exactly, clone equals original."""
    _line, _prev, b = case
    assert Board.from_json(b.to_json()).to_json() == b.to_json()
    assert b.clone().to_json() == b.to_json()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=25))
def test_round_trip_after_random_lays(choices) -> None:
    """Random legal lays (splits and waiting tokens included) keep clone and JSON exact."""
    b = Board.from_data()
    for corp, (h, k) in (
        ("Belge", ("E16", 0)),
        ("Nord", ("D9", 0)),
        ("Est", ("I10", 0)),
        ("PLM", ("G6", 0)),
    ):
        b.put_token(corp, h, k)
    phases = ["Yellow", "Green", "Brown"]
    for n, pick in enumerate(choices):
        corp = ["Belge", "Nord", "Est", "PLM"][pick % 4]
        phase = phases[min(2, n // 8)]
        lays = legal_tile_lays(b, corp, phase)
        if lays:
            lay = lays[pick % len(lays)]
            lay_tile(b, corp, phase, lay.hex, lay.tile, lay.rotation)
        j = b.to_json()
        assert Board.from_json(j).to_json() == j
        assert b.clone().to_json() == j
        assert sum(b.supply_left(t) for t in TILES) + sum(1 for x in b.copies if x >= 0) == 124
