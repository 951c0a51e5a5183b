"""Station tokens: placement legality and costs, homes, reservations, split re-placement,
the LS token on A12, ferry purchase reachability, late corporations' homes.

Spec: ``e1894.md`` "Map, track and tokens", "London, ferries and bonuses" and "Trains and
phases" (late corporations); token prices: ``corporations.json``.
"""

from __future__ import annotations

import pytest

from services.e1894.engine.board import Board
from services.e1894.engine.tests import tracekit as tk
from services.e1894.engine.tests.board_helpers import belge_line, refused
from services.e1894.engine.tiles import SPLIT_TILES, parse_tile_id
from services.e1894.engine.tokens import (
    can_reach_london,
    check_ferry_purchase,
    check_ls_token,
    check_teleport_token,
    check_token_placement,
    home_token_options,
    late_home_candidates,
    legal_token_placements,
    next_token_cost,
    place_home_token,
    place_ls_token,
    place_token,
    replace_token,
    replacement_options,
    reserve_late_home,
    token_step_open,
    tokens_left,
)
from services.e1894.engine.track import lay_tile
from services.kernel.engine import MalformedAction

# ------------------------------------------------------------------ fixture conformance


def _token_cases():
    out = []
    for game in tk.GAMES:
        acts = tk.fixture_actions(game)
        for line, prev, board in tk.boards(game):
            if line.get("type") == "place_token" and prev["step"] == "Token":
                a = acts[line["id"]]
                if a["entity_type"] == "corporation":
                    out.append((game, line, prev, board))
    return out


TOKENS = _token_cases()


@pytest.mark.parametrize(
    "case", TOKENS, ids=[f"{c[0].removeprefix('1894_game_end_')}-{c[1]['id']}" for c in TOKENS]
)
def test_every_recorded_token_is_legal_listed_and_costed(case) -> None:
    """Each token step placement of the recorded games is legal, enumerated, and costs what
    the corporation paid."""
    game, line, prev, board = case
    a = tk.fixture_actions(game)[line["id"]]
    corp = a["entity"]
    hex_id, city = board.parse_city_id(a["city"])
    cash = prev["corps"][corp]["cash"]
    p = check_token_placement(board, corp, hex_id, city, cash=cash)
    assert p.cost == cash - line["corps"][corp]["cash"]
    assert p in legal_token_placements(board, corp, cash=cash)
    place_token(board, corp, hex_id, city, slot=a["slot"])
    assert sorted(board.corporation_tokens(corp)) == sorted(
        (h, k) for h, k in board.corporation_tokens(corp)
    )
    assert sorted(h for h, _ in board.corporation_tokens(corp)) == sorted(
        line["corps"][corp]["tokens"]
    )


def _split_cases():
    out = []
    for game in tk.GAMES:
        acts = tk.fixture_actions(game)
        cases = list(tk.boards(game))
        for n, (line, prev, board) in enumerate(cases):
            if line.get("type") != "lay_tile":
                continue
            name, _ = parse_tile_id(acts[line["id"]]["tile"])
            if name in SPLIT_TILES and board.city_tokens(acts[line["id"]]["hex"]) != [[]]:
                follow = [c[0] for c in cases[n + 1 : n + 12]]
                out.append((game, line, prev, board, follow))
    return out


SPLITS = _split_cases()


@pytest.mark.parametrize(
    "case", SPLITS, ids=[f"{c[0].removeprefix('1894_game_end_')}-{c[1]['id']}" for c in SPLITS]
)
def test_recorded_split_upgrades_and_replacements(case) -> None:
    """§"Green cities split": the recorded split lays remove every token; each recorded
    re-placement (HomeToken / UpdateTokens steps) is one of our options, and the hex's tokens
    then equal the reference's ``city_tokens``, extra slots included."""
    game, line, prev, board, follow = case
    acts = tk.fixture_actions(game)
    a = acts[line["id"]]
    name, _ = parse_tile_id(a["tile"])
    before = [c for s in board.city_tokens(a["hex"]) for c in s]
    res = lay_tile(board, a["entity"], prev["phase"], a["hex"], name, a["rotation"])
    assert sorted(c for c, _ in res.removed) == sorted(before)
    replaced = 0
    for nxt in follow:
        act = acts[nxt["id"]]
        if nxt["type"] == "lay_tile" and nxt["entity"] != a["entity"]:
            break
        if nxt["type"] != "place_token":
            continue
        h, city = board.parse_city_id(act["city"])
        if h != a["hex"]:
            continue
        corp = act["entity"]
        assert any(o.hex == h and o.city == city for o in replacement_options(board, corp))
        replace_token(board, corp, h, city, act["slot"])
        replaced += 1
        assert board.city_tokens(h) == nxt["city_tokens"][h]
    assert replaced == len(before)
    assert board.waiting_tokens() == []


def test_split_cases_exist() -> None:
    """Both games hold split upgrades of tokened cities (D9, E16, B3, D3, D15, E6, G4, B9...)."""
    assert len(SPLITS) >= 8


# ------------------------------------------------------------------ rules


def test_ordinary_token_cost_reach_and_slots() -> None:
    """Second token of Belge costs 40; it needs a reachable city with a free slot."""
    b = belge_line()
    assert next_token_cost(b, "Belge") == 40 and tokens_left(b, "Belge") == 2
    assert [(p.hex, p.city, p.cost) for p in legal_token_placements(b, "Belge")] == [("C14", 0, 40)]
    refused("reserved_slot", check_token_placement, b, "Belge", "D15", 0)  # AG's home
    b.put_token("Nord", "C14", 0)
    refused("city_full", check_token_placement, b, "Belge", "C14", 0)
    refused("unreachable", check_token_placement, b, "Belge", "B9", 0)
    refused("already_tokened", check_token_placement, b, "Belge", "E16", 0)
    refused("insufficient_cash", check_token_placement, belge_line(), "Belge", "C14", 0, cash=39)
    assert legal_token_placements(belge_line(), "Belge", cash=39) == []


def test_no_tokens_left() -> None:
    """Belge has 3 tokens; with all on the map none can be placed."""
    b = belge_line()
    b.put_token("Belge", "G14", 0)
    b.put_token("Belge", "B3", 0)
    assert tokens_left(b, "Belge") == 0 and next_token_cost(b, "Belge") is None
    refused("no_tokens_left", check_token_placement, b, "Belge", "C14", 0)
    assert legal_token_placements(b, "Belge") == []


def test_no_tokens_in_london_and_a12() -> None:
    """§"London, ferries and bonuses": nobody may place a token in London; A12 is LS only."""
    b = Board.from_data()
    refused("no_token_in_london", check_token_placement, b, "Est", "A10", 0)
    refused("ls_only", check_token_placement, b, "Est", "A12", 0)


def test_malformed_token_targets() -> None:
    """Unknown hexes, cities and corporations are MalformedAction."""
    b = belge_line()
    for args, code in (
        (("Belge", "Z9", 0), "unknown_hex"),
        (("Belge", "C14", 1), "unknown_city"),
        (("Belge", "F17", 0), "unknown_city"),
        (("XYZ", "C14", 0), "unknown_corporation"),
    ):
        with pytest.raises(MalformedAction) as err:
            check_token_placement(b, *args)
        assert err.value.code == code
    with pytest.raises(MalformedAction):
        b.parse_city_id("99-0-0")


def test_refused_placement_changes_nothing() -> None:
    """A refused place_token leaves the board unchanged."""
    b = belge_line()
    before = b.to_json()
    refused("unreachable", place_token, b, "Belge", "B9", 0)
    assert b.to_json() == before


def test_home_tokens_two_homes_and_split_home() -> None:
    """Ouest, Nord and CFOR have two free home tokens; a home already split into a brown
    tile lets the corporation pick the city."""
    b = Board.from_data()
    opts = home_token_options(b, "Ouest")
    assert [[(p.hex, p.city, p.cost) for p in o] for o in opts] == [[("B3", 0, 0)], [("E6", 0, 0)]]
    for o in opts:
        place_home_token(b, "Ouest", o[0].hex, o[0].city)
    assert tokens_left(b, "Ouest") == 3 and next_token_cost(b, "Ouest") == 100
    b.put_token("Est", "D9", 0)
    b.put_tile("D9", "57", 0)
    b.put_tile("D9", "14", 1)
    b.put_tile("D9", "X16", 1)
    replace_token(b, "Est", "D9", 0)
    opts = home_token_options(b, "Nord")
    assert [(p.hex, p.city) for p in opts[0]] == [("D9", 1)]
    assert [(p.hex, p.city) for p in opts[1]] == [("G14", 0)]
    refused("not_home", place_home_token, b, "Nord", "D9", 0)
    place_home_token(b, "Nord", "D9", 1)
    assert b.city_tokens("D9") == [["Est"], ["Nord"]] and b.reservations("D9") == []


def test_waiting_tokens_restrict_new_tokens() -> None:
    """While removed tokens wait: nothing while two wait, nor while one waits and the hex
    carries a reservation; re-placement may go in an occupied city (extra slot)."""
    b = Board.from_data()
    b.put_token("Est", "E10", 0)
    b.put_tile("E10", "57", 0)
    b.put_token("Nord", "D9", 0)
    b.put_tile("D9", "57", 1)  # D9 towards E10
    b.put_tile("E10", "14", 0)
    b.put_token("Nord", "E10", 0)
    lay_tile(b, "Est", "Brown", "E10", "X16", 0)
    assert len(b.waiting_tokens()) == 2
    b.put_token("CFOR", "D3", 0)
    refused("tokens_waiting", check_token_placement, b, "Ouest", "E10", 0)
    replace_token(b, "Est", "E10", 0)
    assert [(p.hex, p.city) for p in replacement_options(b, "Nord")] == [("E10", 0), ("E10", 1)]
    replace_token(b, "Nord", "E10", 0)
    assert b.city_tokens("E10") == [["Est", "Nord"], []]
    assert len(b.slots("E10", 0)) == 2
    refused("nothing_waiting", replace_token, b, "Nord", "E10", 1)


def test_one_waiting_token_with_reservation_blocks() -> None:
    """One token waiting plus a reservation in the hex: no new token there."""
    b = Board.from_data()
    b.put_token("Est", "D9", 0)  # D9 is Nord's home: reserved
    b.put_tile("D9", "57", 0)
    b.put_tile("D9", "14", 1)
    b.put_token("Ouest", "E6", 0)
    lay_tile(b, "Est", "Brown", "D9", "X16", 1)
    refused("tokens_waiting", check_token_placement, b, "Ouest", "D9", 0)


def test_ls_token_on_a12() -> None:
    """LS puts its corporation's cheapest token free on A12, once."""
    b = belge_line()
    p = place_ls_token(b, "Belge")
    assert (p.hex, p.cost, p.kind) == ("A12", 0, "ls")
    assert b.london_bonus_corporation() == "Belge" and tokens_left(b, "Belge") == 1
    refused("ls_used", check_ls_token, b, "AG")


def test_ferry_purchase_needs_london_in_reach() -> None:
    """§"London, ferries and bonuses": a ferry marker needs a network reaching London; four
    markers; one per corporation."""
    b = Board.from_data()
    b.put_token("Est", "B9", 0)
    refused("london_unreachable", check_ferry_purchase, b, "Est")
    b.put_tile("B9", "57", 1)  # B9 exits 1 and 4 (A10 is its NE neighbour: edge 3)
    assert not can_reach_london(b, "Est")
    b2 = Board.from_data()
    b2.put_token("Est", "B9", 0)
    b2.put_tile("B9", "57", 0)  # edges 0 and 3: 3 is A10
    assert can_reach_london(b2, "Est")
    check_ferry_purchase(b2, "Est")
    b2.give_ferry("Est")
    refused("ferry_owned", check_ferry_purchase, b2, "Est")
    for c in ("Nord", "AG", "PLM"):
        b2.give_ferry(c)
    b2.put_token("Ouest", "B11", 0)
    refused("no_ferry_left", check_ferry_purchase, b2, "Ouest")


def test_teleport_token_and_late_homes() -> None:
    """GLG's free token in Liège ignores reach; LF/LB pick unreserved homes with room,
    preferring hexes without track; Paris reserves city 1."""
    b = Board.from_data()
    b.put_tile("H17", "57", 0)
    assert check_teleport_token(b, "Belge", "GLG", "H17", 0).cost == 0
    refused("special_hex", check_teleport_token, b, "Belge", "GLG", "D17", 0)
    lb = late_home_candidates(b, "LB")
    assert "H17" not in lb and "E16" not in lb and "F15" in lb
    b.put_tile("F15", "X2", 0)
    assert "F15" not in late_home_candidates(b, "LB")
    reserve_late_home(b, "LF", "G6")
    assert b.reservations("G6") == ["PLM", "LF"]
    refused("reserved_slot", check_token_placement, b, "Est", "G6", 1)


def test_recorded_late_home_choices_are_candidates() -> None:
    """The recorded LF/LB home choices (Paris, Liège) are among our candidates; with a track-free
    candidate left (Liège) only such hexes are offered (spec "Trains and phases")."""
    seen = []
    for game in tk.GAMES:
        acts = tk.fixture_actions(game)
        last_par = None
        for line, _prev, board in tk.boards(game):
            a = acts[line["id"]]
            if line["type"] == "par":
                last_par = a["corporation"]
            if line["type"] == "choose":
                hex_id = a["choice"].rsplit("(", 1)[1].rstrip(")")
                cands = late_home_candidates(board, last_par)
                assert hex_id in cands
                seen.append((last_par, hex_id, cands))
    assert ("LB", "H17", ["H17"]) in seen
    assert any(c == "LF" and h == "G6" and len(x) > 1 for c, h, x in seen)


def test_late_corporation_home_token_in_paris() -> None:
    """LF's home in Paris is reserved on city 1 and its free home token goes there."""
    b = Board.from_data()
    b.put_token("PLM", "G6", 0)
    b.put_tile("G6", "X1", 0)
    b.put_tile("G6", "X4", 0)
    b.put_tile("G6", "X9", 0)
    b.put_token("Est", "G6", 1)
    reserve_late_home(b, "LF", "G6")
    opts = home_token_options(b, "LF", ["G6"])
    assert [(p.hex, p.city, p.cost) for p in opts[0]] == [("G6", 1, 0)]
    refused("reserved_slot", check_token_placement, b, "Nord", "G6", 1)
    place_home_token(b, "LF", "G6", 1)
    assert b.city_tokens("G6") == [["PLM"], ["Est", "LF"]]
    assert tokens_left(b, "LF") == 2 and next_token_cost(b, "LF") == 40


def test_token_step_waits_when_only_london_is_in_reach() -> None:
    """Reference engine: the token step waits for the corporation's decision when its network
    reaches London's track, even without a ferry marker and although nobody may token
    London; only ``pass`` is then possible. Without money for a token it does not wait."""
    b = Board.from_data()
    b.put_tile("B11", "57", 2)  # Boulogne, one exit towards London (A10)
    b.put_token("AG", "B11", 0)
    assert legal_token_placements(b, "AG", cash=500) == []
    assert token_step_open(b, "AG", cash=500)
    assert not token_step_open(b, "AG", cash=0)
    b2 = Board.from_data()
    b2.put_tile("B11", "57", 0)  # exits away from London
    b2.put_token("AG", "B11", 0)
    assert not token_step_open(b2, "AG", cash=500)
