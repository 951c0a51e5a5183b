"""Routes: the rules of a single route, trains' reach, bonuses, and the optimiser.

Spec: ``e1894.md`` "London, ferries and bonuses" (London needs a ferry, LS London bonus,
Luxembourg, Netherlands +100, Paris once) and "Trains and phases" (2..7, 5+1, D).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.e1894.engine.board import Board
from services.e1894.engine.hexmap import MAP
from services.e1894.engine.routes import (
    best_routes,
    build_graph,
    has_route,
    parse_route_string,
    route_hexsides,
    route_to_string,
    value_route,
    value_route_strings,
    value_routes,
)
from services.e1894.engine.tests import tracekit as tk
from services.e1894.engine.tests.board_helpers import belge_home, belge_line, refused
from services.kernel.engine import MalformedAction


def case(game: str, action_id: int):
    for line, prev, board in tk.run_routes_cases(game):
        if line["id"] == action_id:
            return line, prev, board.clone(), tk.fixture_actions(game)[action_id]["routes"]
    raise KeyError(action_id)


FINAL, STOCK = tk.GAMES


def belge_board() -> Board:
    """Belge in Mechelen; Gent (AG's token), Brugge and Bruxelles by yellow track."""
    b = belge_line()  # Mechelen - Gent - Brugge, and Mechelen SE to F17
    b.put_tile("F17", "7", 1)  # E16 - F17 - Bruxelles
    b.put_tile("F15", "X2", 4)
    return b


def paris_board() -> Board:
    """PLM in Paris (X4: city 0 SW/W, city 1 NW/NE) with Versailles joined to both cities."""
    b = Board.from_data()
    b.put_token("PLM", "G6", 0)
    b.put_tile("G6", "X4", 0)
    b.put_tile("H5", "7", 2)  # G4 - H5 - G6 city 0 (and G4 - G6 city 0 directly)
    b.put_tile("F3", "7", 4)  # G4 - F3 - F5 - G6 city 1
    b.put_tile("F5", "8", 5)
    return b


def test_simple_routes_and_values() -> None:
    """Two 2-trains from Mechelen: to Bruxelles (20 + 30) and to Gent (20 + 20)."""
    b = belge_board()
    r = value_route(b, "Belge", "2-0", "Yellow", [["E16", "F17", "F15"]])
    assert (r.revenue, r.nodes, r.hexes) == (50, ("E16-0", "F15-0"), ("E16", "F15"))
    best = best_routes(b, "Belge", ["2-0", "2-1"], "Yellow")
    assert best.total == 90 and sorted(x.revenue for x in best.routes) == [40, 50]
    assert best_routes(b, "Belge", ["3"], "Yellow").total == 70  # F15-E16-D15
    assert best_routes(b, "Belge", [], "Yellow").total == 0


def test_trains_may_not_share_track_but_may_share_cities() -> None:
    """Two trains may both start in Mechelen but not use the same hexside."""
    b = belge_board()
    ok = value_routes(
        b,
        "Belge",
        "Yellow",
        [
            {"train": "2-0", "connections": [["E16", "D15"]]},
            {"train": "2-1", "connections": [["E16", "F17", "F15"]]},
        ],
    )
    assert ok.total == 90
    refused(
        "track_shared",
        value_routes,
        b,
        "Belge",
        "Yellow",
        [
            {"train": "2-0", "connections": [["E16", "D15"]]},
            {"train": "2-1", "connections": [["D15", "E16"]]},
        ],
    )
    refused(
        "train_twice",
        value_routes,
        b,
        "Belge",
        "Yellow",
        [
            {"train": "2-0", "connections": [["E16", "D15"]]},
            {"train": "2-0", "connections": [["E16", "F17", "F15"]]},
        ],
    )


def test_single_route_rules() -> None:
    """No track twice, no stop twice, a token city on the route, distance limits."""
    b = belge_board()
    refused(
        "track_reused", value_route, b, "Belge", "4", "Yellow", [["E16", "D15"], ["D15", "E16"]]
    )
    refused("no_token", value_route, b, "Belge", "2", "Yellow", [["D15", "C14"]])
    refused(
        "too_long", value_route, b, "Belge", "2", "Yellow", [["F15", "F17", "E16"], ["E16", "D15"]]
    )
    refused("no_track", value_route, b, "Belge", "2", "Yellow", [["E16", "F15"]])
    refused("no_track", value_route, b, "Belge", "3", "Yellow", [["E16", "D15"], ["C14", "B13"]])
    refused(
        "nodes_mismatch",
        value_route,
        b,
        "Belge",
        "2",
        "Yellow",
        [["E16", "D15"]],
        nodes=["E16-0", "C14-0"],
    )


def test_blocked_city_may_end_but_not_be_passed() -> None:
    """A city full of other corporations' tokens ends a route; it cannot be run through."""
    b = belge_board()
    b.put_token("AG", "D15", 0)
    assert value_route(b, "Belge", "2", "Yellow", [["E16", "D15"]]).revenue == 40
    refused(
        "blocked_city", value_route, b, "Belge", "3", "Yellow", [["E16", "D15"], ["D15", "C14"]]
    )
    assert best_routes(b, "Belge", ["3"], "Yellow").total == 70  # D15 - E16 - F15 instead


def test_paris_at_most_once() -> None:
    """§"Map, track and tokens": a route may visit Paris only once, even its two cities."""
    b = paris_board()
    chains = [["G6", "F5", "F3", "G4"], ["G4", "H5", "G6"]]
    refused("paris_twice", value_route, b, "PLM", "3", "Green", chains)
    best = best_routes(b, "PLM", ["3"], "Green")
    assert best.total == 60 and len(best.routes[0].nodes) == 2
    g = build_graph(b, "PLM", "Green")
    paris = [g.visit_bit[i] for i, (h, _k) in enumerate(g.hexnode) if h == MAP.index("G6")]
    assert len(paris) == 2 and paris[0] == paris[1]


def test_node_revisit_is_refused() -> None:
    """A route visiting Versailles twice (through both Paris approaches) is refused."""
    b = paris_board()
    refused(
        "node_revisited", value_route, b, "PLM", "4", "Green", [["G4", "H5", "G6"], ["G6", "G4"]]
    )


def test_london_needs_a_ferry() -> None:
    """§"London, ferries and bonuses": only a corporation with a ferry marker runs to London."""
    line, prev, b, routes = case(FINAL, 361)  # Est: D11-D9-B9-A10 = 170
    assert value_routes(b, "Est", prev["phase"], routes).total == 170
    b.ferries.remove("Est")
    refused("london_needs_ferry", value_routes, b, "Est", prev["phase"], routes)
    best = best_routes(b, "Est", ["4"], prev["phase"])
    assert best.total < 170 and all("A10-0" not in r.nodes for r in best.routes)


def test_ls_london_bonus() -> None:
    """LS's corporation (token on A12) adds the route's largest other stop to London."""
    line, prev, b, routes = case(STOCK, 417)  # AG: E16-F15-D11-B11-A10-A8 with london 70
    r = value_routes(b, "AG", prev["phase"], routes).routes[0]
    assert dict(r.bonus) == {"london": 70}
    b.remove_token("AG", "A12", 0)
    r2 = value_routes(b, "AG", prev["phase"], routes).routes[0]
    assert r2.bonus == () and r2.revenue == r.revenue - 70


def test_luxembourg_and_netherlands_bonuses() -> None:
    """Luxembourg is worth the largest stop; Netherlands +100 with I2, I18 or A4."""
    line, prev, b, routes = case(FINAL, 904)  # LB 6: I18 ... F15 (70): lux 70
    r = value_routes(b, "LB", prev["phase"], routes).routes[0]
    assert dict(r.bonus) == {"lux": 70} and ("I18-0", 0) in r.stops
    line, prev, b, routes = case(FINAL, 843)  # Belge D: I2 ... C18: nl 100
    r = value_routes(b, "Belge", prev["phase"], routes).routes[0]
    assert dict(r.bonus) == {"nl": 100} and r.revenue == 570


def test_distance_of_5_plus_1_and_d() -> None:
    """5+1: five stops of any kind plus one extra town; D: any number of stops."""
    line, prev, b, routes = case(FINAL, 843)  # a 13-stop D route
    assert value_routes(b, "Belge", prev["phase"], routes).total == 570
    conns = routes[0]["connections"]
    refused("too_long", value_route, b, "Belge", "7", prev["phase"], conns)
    line, prev, b, routes = case(FINAL, 406)  # PLM 5+1: I2 H1(town) H3 G6 G4 G2(town)
    r = value_routes(b, "PLM", prev["phase"], routes).routes[0]
    assert len(r.nodes) == 6 and r.revenue == 240
    refused("too_long", value_route, b, "PLM", "4", prev["phase"], routes[0]["connections"])
    g = build_graph(b, "PLM", prev["phase"])
    towns = {g.hexnode[i] for i in range(len(g.hexnode)) if g.town[i]}
    assert towns


def test_malformed_routes() -> None:
    """Unknown trains and hexes, empty chains are MalformedAction."""
    b = belge_board()
    for kwargs in (
        dict(train="9", connections=[["E16", "D15"]]),
        dict(train="2", connections=[]),
        dict(train="2", connections=[["E16"]]),
        dict(train="2", connections=[["E16", "ZZ1"]]),
    ):
        with pytest.raises(MalformedAction):
            value_route(b, "Belge", kwargs["train"], "Yellow", kwargs["connections"])
    with pytest.raises(MalformedAction):
        best_routes(b, "Belge", ["2"], "Orange")
    with pytest.raises(MalformedAction):
        parse_route_string("2-0")


def test_string_form_and_has_route() -> None:
    """Routes round-trip through ``"<train>:<chain>;<chain>"``; has_route is the must-buy
    condition."""
    b = belge_board()
    best = best_routes(b, "Belge", ["3-0", "2-1"], "Yellow")
    texts = [route_to_string(r) for r in best.routes]
    assert parse_route_string(texts[0])[0] in ("3-0", "2-1")
    assert value_route_strings(b, "Belge", "Yellow", texts).total == best.total
    assert has_route(b, "Belge")
    assert not has_route(Board.from_data(), "Belge")
    assert not has_route(belge_home(), "Belge")


RUNS = [c for g in tk.GAMES for c in tk.run_routes_cases(g)]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(RUNS),
    st.sampled_from([["2", "2"], ["3", "4"], ["5+1"], ["6", "7"], ["D"], ["4", "D"]]),
)
def test_optimum_is_legal_disjoint_and_dominates(run, trains) -> None:
    """For any recorded position and any train set, the optimum's routes validate, use
    disjoint track, and no single valid route of one of the trains is worth more than the
    optimum (invariant)."""
    line, prev, board = run
    corp = line["entity"]
    phase = prev["phase"]
    best = best_routes(board, corp, [f"{t}-{i}" for i, t in enumerate(trains)], phase)
    again = value_routes(board, corp, phase, [r.to_json() for r in best.routes])
    assert again.total == best.total
    masks = [route_hexsides(r) for r in best.routes]
    for i, m in enumerate(masks):
        for m2 in masks[i + 1 :]:
            assert not m & m2
    for t in trains:
        assert best_routes(board, corp, [t], phase).total <= best.total


def _brute_force(lists, k):
    best = 0

    def rec(i, used, cur):
        nonlocal best
        if i == k:
            best = max(best, cur)
            return
        rec(i + 1, used, cur)
        for r in lists[i]:
            if not r[1] & used:
                rec(i + 1, used | r[1], cur + r[0])

    rec(0, 0, 0)
    return best


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(RUNS), st.sampled_from([["D", "D"], ["7", "D"], ["4", "4", "4"], ["3", "5+1"]])
)
def test_combination_search_is_exact(run, trains) -> None:
    """The scan and the bitset branch-and-bound both find the brute-force optimum over the
    enumerated candidates (capped at 40 per train to keep the brute force small)."""
    from services.e1894.engine.routes import (
        TRAIN_LIMITS,
        _combine_bitset,
        _combine_scan,
        _enumerate,
    )

    line, prev, board = run
    g = build_graph(board, line["entity"], prev["phase"])
    cands = sorted(_enumerate(g, 10_000, 10_000), key=lambda r: -r[0])
    lists = [
        [r for r in cands if r[2] <= TRAIN_LIMITS[t][0] and r[3] <= TRAIN_LIMITS[t][1]][:40]
        for t in trains
    ]
    lists = [lists[0] if t == trains[0] else lst for t, lst in zip(trains, lists, strict=True)]
    expect = _brute_force(lists, len(trains))
    for picks in (
        _combine_scan(lists, list(trains), budget=10**9),
        _combine_bitset(lists, list(trains), g.conn_mask),
    ):
        chosen = [lists[i][j] for i, j in enumerate(picks) if j is not None]
        used = 0
        for r in chosen:
            assert not r[1] & used
            used |= r[1]
        assert sum(r[0] for r in chosen) == expect
