"""Tile lays: legality with the rule's reason, enumeration, costs, the effect on the board.

Spec: ``e1894.md`` "Hexes and the tile DSL" (upgrade legality) and "Map, track and tokens"
(two lays per OR, water and X-tile costs, Paris, Bruxelles, Lille, the green-city split, no
split after the D train); privates LRC / GLG / SAC (``privates.json``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.e1894.engine.board import Board
from services.e1894.engine.graph import reach
from services.e1894.engine.hexmap import MAP
from services.e1894.engine.tests import tracekit as tk
from services.e1894.engine.tests.board_helpers import belge_home, refused
from services.e1894.engine.tiles import parse_tile_id
from services.e1894.engine.track import (
    check_tile_lay,
    lay_tile,
    legal_tile_lays,
    upgrade_rotations,
)
from services.kernel.engine import MalformedAction

# ------------------------------------------------------------------ fixture conformance


def _lay_cases():
    out = []
    for game in tk.GAMES:
        acts = tk.fixture_actions(game)
        laid: list = []
        last = None
        for line, prev, board in tk.boards(game):
            if line.get("type") != "lay_tile":
                continue
            a = acts[line["id"]]
            corp, special = a["entity"], ""
            if a["entity_type"] == "company":
                special, corp = a["entity"], prev["privates"][a["entity"]]
            key = (line["round"], corp)
            if key != last:
                laid = []
            last = key
            out.append((game, line, prev, board, corp, special, tuple(laid)))
            name, _ = parse_tile_id(a["tile"])
            laid.append((a["hex"], board.tile(a["hex"]).color != "white"))
    return out


LAYS = _lay_cases()


def _blocked(prev) -> list[str]:
    owners = prev["privates"]
    return [
        h
        for sym, h in (("LRC", "I14"), ("GLG", "H17"), ("SAC", "D17"))
        if isinstance(owners.get(sym), int)
    ]


@pytest.mark.parametrize(
    "case", LAYS, ids=[f"{c[0].removeprefix('1894_game_end_')}-{c[1]['id']}" for c in LAYS]
)
def test_every_recorded_lay_is_legal_listed_and_costed(case) -> None:
    """Each lay of the recorded games passes our check, is in our enumeration, costs what the
    corporation paid, and gives the tile id the action names (supply order)."""
    game, line, prev, board, corp, special, laid = case
    a = tk.fixture_actions(game)[line["id"]]
    name, _copy = parse_tile_id(a["tile"])
    cash = prev["corps"][corp]["cash"]
    kw = dict(laid=laid, cash=cash, blocked_hexes=_blocked(prev), special=special)
    lay = check_tile_lay(board, corp, prev["phase"], a["hex"], name, a["rotation"], **kw)
    assert lay.cost == cash - line["corps"][corp]["cash"]
    legal = legal_tile_lays(board, corp, prev["phase"], all_rotations=True, **kw)
    assert (a["hex"], name, a["rotation"]) in {(x.hex, x.tile, x.rotation) for x in legal}
    b = board.clone()
    result = lay_tile(b, corp, prev["phase"], a["hex"], name, a["rotation"], **kw)
    assert result.tile_id == a["tile"]
    assert {h: [b.tile_name(h), b.rotation(h)] for h in line["tiles_changed"]} == line[
        "tiles_changed"
    ]


def test_recorded_lays_cover_many_kinds() -> None:
    """The conformance set includes upgrades, splits, Paris, Bruxelles and Lille lays."""
    tiles = {tk.fixture_actions(c[0])[c[1]["id"]]["tile"].rsplit("-", 1)[0] for c in LAYS}
    assert {
        "57",
        "14",
        "15",
        "619",
        "X1",
        "X4",
        "X9",
        "X2",
        "X6",
        "X13",
        "X3",
        "X8",
        "X15",
        "X16",
    } <= tiles
    assert len(LAYS) == 180


# ------------------------------------------------------------------ rules, one by one


def test_home_hex_takes_any_rotation_and_neighbour_needs_connection() -> None:
    """A corporation with a token in an untiled city may lay there in any rotation; a hex its
    track does not reach is refused (``not_connected``)."""
    b = belge_home()
    for r in range(6):
        assert check_tile_lay(b, "Belge", "Yellow", "E16", "57", r).cost == 0
    refused("not_connected", check_tile_lay, b, "Belge", "Yellow", "D15", "57", 0)
    lay_tile(b, "Belge", "Yellow", "E16", "57", 2)  # exits NW (D15) and SE (F17)
    check_tile_lay(b, "Belge", "Yellow", "D15", "57", 2, laid=[("E16", False)])
    refused(
        "not_connected", check_tile_lay, b, "Belge", "Yellow", "D15", "57", 0, laid=[("E16", False)]
    )
    refused("not_connected", check_tile_lay, b, "Nord", "Yellow", "D15", "57", 2)


def test_wrong_colour_and_phase() -> None:
    """§"Hexes and the tile DSL": the new colour must be the next one; green needs the Green
    phase."""
    b = belge_home()
    refused("wrong_color", check_tile_lay, b, "Belge", "Green", "E16", "14", 0)
    b.put_tile("E16", "57", 2)
    refused("wrong_color", check_tile_lay, b, "Belge", "Green", "E16", "57", 2)
    refused("phase_color", check_tile_lay, b, "Belge", "Yellow", "E16", "14", 1)
    assert check_tile_lay(b, "Belge", "Green", "E16", "14", 1).upgrade


def test_lost_path_and_matching_stops() -> None:
    """Old paths must be kept; towns and cities must match; labels must match."""
    b = belge_home()
    b.put_tile("E16", "57", 2)
    assert 1 in upgrade_rotations(b, "E16", "14") and 0 not in upgrade_rotations(b, "E16", "14")
    refused("lost_path", check_tile_lay, b, "Belge", "Green", "E16", "14", 0)
    refused("wrong_stops", check_tile_lay, belge_home(), "Belge", "Yellow", "E16", "7", 0)
    b2 = belge_home()
    b2.put_tile("E16", "57", 5)  # exits 2 (D15) and 5 (F17)
    refused("wrong_stops", check_tile_lay, b2, "Belge", "Yellow", "F17", "57", 2)
    refused("wrong_label", check_tile_lay, b2, "Belge", "Yellow", "D15", "X2", 2)
    b3 = Board.from_data()
    b3.put_token("Nord", "G14", 0)
    b3.put_tile("G14", "57", 0)  # exit 3 towards F15
    refused("wrong_label", check_tile_lay, b3, "Nord", "Yellow", "F15", "57", 0)
    check_tile_lay(b3, "Nord", "Yellow", "F15", "X2", 4)


def test_exits_may_not_leave_the_map_or_hit_a_gray_side() -> None:
    """Track may not point off the map (Évreux's west side) or into the side of a gray or blue
    hex without track there (B11 towards A12)."""
    b = Board.from_data()
    b.put_token("LF", "E2", 0)
    refused("exit_blocked", check_tile_lay, b, "LF", "Yellow", "E2", "57", 1)  # edge 1: off map
    legal = legal_tile_lays(b, "LF", "Yellow", all_rotations=True)
    assert legal and all(1 not in (x.rotation % 3, (x.rotation + 3) % 6) for x in legal)
    b.put_token("Nord", "B11", 0)
    refused("exit_blocked", check_tile_lay, b, "Nord", "Yellow", "B11", "57", 0)  # edge 3: A12
    assert {x.rotation for x in legal_tile_lays(b, "Nord", "Yellow") if x.hex == "B11"} == {1, 2}


def test_no_tile_left_and_cash() -> None:
    """The supply limits lays (``no_tile_left``); terrain must be paid (``insufficient_cash``)."""
    b = belge_home()
    for copy in list(b.free_copies["57"]):
        b.take_copy("57", copy)
    refused("no_tile_left", check_tile_lay, b, "Belge", "Yellow", "E16", "57", 2)
    assert not [x for x in legal_tile_lays(b, "Belge", "Yellow") if x.tile == "57"]
    b = belge_home()
    b.put_tile("E16", "57", 1)  # exits 1 (W, E14 water 60) and 4
    assert check_tile_lay(b, "Belge", "Yellow", "E14", "9", 1, cash=60).cost == 60
    refused("insufficient_cash", check_tile_lay, b, "Belge", "Yellow", "E14", "9", 1, cash=59)
    assert not [x for x in legal_tile_lays(b, "Belge", "Yellow", cash=59) if x.hex == "E14"]


def test_two_lays_per_or() -> None:
    """§"Map, track and tokens": two lays; the second never on the same hex, and an upgrade
    only if the first was not."""
    b = belge_home()
    b.put_tile("E16", "57", 2)
    b.put_tile("D15", "57", 2)
    refused(
        "no_lays_left",
        check_tile_lay,
        b,
        "Belge",
        "Green",
        "E16",
        "14",
        1,
        laid=[("F17", False), ("C14", False)],
    )
    refused("same_hex", check_tile_lay, b, "Belge", "Green", "E16", "14", 1, laid=[("E16", False)])
    refused(
        "second_upgrade", check_tile_lay, b, "Belge", "Green", "E16", "14", 1, laid=[("D15", True)]
    )
    assert check_tile_lay(b, "Belge", "Green", "E16", "14", 1, laid=[("F17", False)]).upgrade
    assert legal_tile_lays(b, "Belge", "Green", laid=[("F17", False), ("C14", False)]) == []
    second = legal_tile_lays(b, "Belge", "Green", laid=[("D15", True)])
    assert second and not any(x.upgrade for x in second)


def test_green_city_splits_only_into_its_brown_tiles() -> None:
    """14 -> X16/X17/X18 only, with exactly the old exits; not from the Purple phase on."""
    b = belge_home()
    b.put_tile("E16", "57", 2)
    b.put_tile("E16", "14", 1)
    assert check_tile_lay(b, "Belge", "Brown", "E16", "X16", 1).upgrade
    refused("split_only", check_tile_lay, b, "Belge", "Brown", "E16", "X19", 1)
    refused("split_exits", check_tile_lay, b, "Belge", "Brown", "E16", "X16", 0)
    refused("no_split_after_d", check_tile_lay, b, "Belge", "Purple", "E16", "X16", 1)
    assert not [x for x in legal_tile_lays(b, "Belge", "Purple") if x.hex == "E16"]
    names = {x.tile for x in legal_tile_lays(b, "Belge", "Brown") if x.hex == "E16"}
    assert names == {"X16", "X17", "X18"}


def test_split_removes_tokens_and_moves_reservations() -> None:
    """§"Green cities split": every token in the city is removed and waits to be re-placed; a
    reservation (Nord's unplaced home in Lens) moves to the whole hex."""
    b = Board.from_data()
    b.put_token("Est", "D9", 0)
    b.put_tile("D9", "57", 0)
    b.put_tile("D9", "14", 1)
    b.put_token("AG", "D9", 0)
    assert b.reservations("D9") == ["Nord"]
    res = lay_tile(b, "Est", "Brown", "D9", "X16", 1)
    assert sorted(res.removed) == [("AG", 0), ("Est", 0)]
    assert res.tile_id == "X16-0" and res.old_tile == "14"
    assert b.city_tokens("D9") == [[], []]
    assert sorted(b.waiting_tokens()) == [("AG", "D9"), ("Est", "D9")]
    assert b.hex_reserved and b.reservations("D9") == ["Nord"]
    assert b.supply_left("14") == 4 and b.supply_left("X16") == 1


def test_paris_rotation_rule() -> None:
    """Green Paris -> brown keeps PLM's city: same rotation with PLM in city 0, else + 3."""
    b = Board.from_data()
    b.put_token("PLM", "G6", 0)
    b.put_tile("G6", "X1", 0)
    b.put_tile("G6", "X5", 0)
    assert b.city_tokens("G6") == [["PLM"], []]
    check_tile_lay(b, "PLM", "Brown", "G6", "X10", 0)
    refused("paris_rotation", check_tile_lay, b, "PLM", "Brown", "G6", "X10", 3)
    assert {(x.tile, x.rotation) for x in legal_tile_lays(b, "PLM", "Brown") if x.hex == "G6"} == {
        ("X10", 0),
        ("X12", 0),
    }
    b2 = Board.from_data()
    b2.put_token("PLM", "G6", 0)
    b2.put_tile("G6", "X1", 0)
    b2.put_tile("G6", "X5", 3)  # X1's city 0 (edges 0, 1) becomes X5's city 1
    assert b2.city_tokens("G6") == [[], ["PLM"]]
    check_tile_lay(b2, "PLM", "Brown", "G6", "X10", 0)
    refused("paris_rotation", check_tile_lay, b2, "PLM", "Brown", "G6", "X10", 3)


def test_special_city_chains_and_costs() -> None:
    """Bruxelles X2 -> X6 -> X13 and Lille X3 -> X7/X8 -> X14/X15; the X tiles cost 40 to
    upgrade from yellow and 60 from green."""
    b = Board.from_data()
    b.put_token("Belge", "F15", 0)
    b.put_tile("F15", "X2", 0)
    assert {x.tile for x in legal_tile_lays(b, "Belge", "Green") if x.hex == "F15"} == {"X6"}
    assert check_tile_lay(b, "Belge", "Green", "F15", "X6", 0).cost == 40
    b.put_tile("F15", "X6", 0)
    assert check_tile_lay(b, "Belge", "Brown", "F15", "X13", 0).cost == 60
    b.put_token("Est", "D11", 0)
    b.put_tile("D11", "X3", 0)
    assert {x.tile for x in legal_tile_lays(b, "Est", "Green") if x.hex == "D11"} == {"X7", "X8"}
    b.put_tile("D11", "X7", 0)
    assert {x.tile for x in legal_tile_lays(b, "Est", "Brown") if x.hex == "D11"} == {"X14", "X15"}


def test_private_powers() -> None:
    """GLG lays in Liège without connection; LRC lays an extra yellow tile for 60 (+ terrain);
    player-owned privates block their hex."""
    b = belge_home()
    assert check_tile_lay(b, "Belge", "Yellow", "H17", "57", 0, special="GLG").cost == 0
    refused("not_connected", check_tile_lay, b, "Belge", "Yellow", "H17", "57", 0)
    refused("special_hex", check_tile_lay, b, "Belge", "Yellow", "D17", "57", 0, special="GLG")
    refused("special_tile", check_tile_lay, b, "Belge", "Yellow", "H17", "X2", 0, special="GLG")
    assert {x.hex for x in legal_tile_lays(b, "Belge", "Yellow", special="SAC")} == {"D17"}
    refused(
        "hex_blocked",
        check_tile_lay,
        b,
        "Belge",
        "Yellow",
        "H17",
        "57",
        0,
        special="GLG",
        blocked_hexes=["H17"],
    )
    lay = check_tile_lay(
        b, "Belge", "Yellow", "E16", "57", 2, special="LRC", laid=[("F17", False), ("D15", False)]
    )
    assert lay.cost == 60 and lay.special == "LRC"
    b.put_tile("E16", "57", 2)
    refused("lrc_yellow_only", check_tile_lay, b, "Belge", "Green", "E16", "14", 1, special="LRC")
    refused("special_tile", check_tile_lay, b, "Belge", "Green", "F17", "23", 0, special="LRC")


@pytest.mark.parametrize(
    ("hex_id", "tile", "rot", "code"),
    [
        ("Z1", "57", 0, "unknown_hex"),
        ("E16", "58", 0, "unknown_tile"),
        ("E16", "57", 6, "bad_rotation"),
        ("E16", "57", -1, "bad_rotation"),
        ("E16", "57", True, "bad_rotation"),
    ],
)
def test_malformed_lays(hex_id, tile, rot, code) -> None:
    """Unknown hexes, tiles and rotations are MalformedAction with a clear code."""
    with pytest.raises(MalformedAction) as err:
        check_tile_lay(belge_home(), "Belge", "Yellow", hex_id, tile, rot)
    assert err.value.code == code
    with pytest.raises(MalformedAction):
        check_tile_lay(belge_home(), "Belge", "Yellow", "E16", "57", 0, special="XYZ")


def test_refused_lay_changes_nothing_and_red_hexes_take_no_tile() -> None:
    """apply validates before mutating: a refused lay_tile leaves the board as it was."""
    b = belge_home()
    before = b.to_json()
    refused("not_connected", lay_tile, b, "Belge", "Yellow", "D15", "57", 0)
    refused("hex_not_upgradable", lay_tile, b, "Belge", "Yellow", "C18", "57", 0)
    assert b.to_json() == before


SAMPLE = [c for c in tk.boards("1894_game_end_stock_market")][::25]


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(SAMPLE), st.sampled_from(["PLM", "Ouest", "Nord", "Est", "CFOR", "Belge", "AG"])
)
def test_enumeration_agrees_with_check(case, corp) -> None:
    """Every enumerated lay passes check_tile_lay with the same cost, and applying it keeps
    every old exit of the hex (invariant over recorded positions)."""
    _line, prev, board = case
    for lay in legal_tile_lays(board, corp, prev["phase"], all_rotations=True):
        again = check_tile_lay(board, corp, prev["phase"], lay.hex, lay.tile, lay.rotation)
        assert again == lay
        b = board.clone()
        old = b.tile(lay.hex).rotated(b.rotation(lay.hex)).exits
        lay_tile(b, corp, prev["phase"], lay.hex, lay.tile, lay.rotation)
        assert old <= b.tile(lay.hex).rotated(b.rotation(lay.hex)).exits


def test_no_reversing_through_a_city() -> None:
    """Errata A7: the network for lays and tokens never reuses a track segment: a walk that
    reaches a city may not leave it along the track it came in on. Belge (E16) runs through
    the junction 24 in F17 to the city in G18; F17's other branch, towards Bruxelles (F15),
    is reached only by turning back in G18, so F15 is not connected."""
    b = belge_home()
    b.put_tile("E16", "57", 2)
    b.put_tile("F17", "24", 5)
    b.put_tile("G18", "57", 2)
    net = reach(b, "Belge")
    assert (MAP.index("G18"), 0) in net.nodes
    f15 = MAP.index("F15")
    towards_f17 = next(e for e, n in enumerate(MAP.hexes[f15].neighbors) if n == MAP.index("F17"))
    assert not net.edges[f15] & (1 << towards_f17)
    assert "F15" not in {lay.hex for lay in legal_tile_lays(b, "Belge", "Green")}
    b.put_token("Belge", "G18", 0)  # from a token in G18 the branch is a plain walk
    assert reach(b, "Belge").edges[f15] & (1 << towards_f17)
