"""Rules found by the differential runs against the reference engine (18xx.games), each
built from setup or a synthetic position (``docs/e1894-game.md``, "Behaviour of the reference
engine"; the 1894 errata A7 for the network)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..actions import LayTile, Pass, PlaceToken, RedeemShare
from ..board import PARIS, Board
from ..data import CORP_INDEX, PRIVATE_INDEX
from ..graph import reach, route_reach
from ..hexmap import MAP
from ..interchange.importer import import_game
from ..market import price
from ..privates import CORP_OWNER
from ..routes import best_routes, value_route
from ..track import legal_tile_lays
from .board_helpers import refused
from .flow_helpers import FINAL, FIXTURES, at, before

C = CORP_INDEX


# --- the network for tile lays: one crossing of each hexside per walk (errata A7) ----------


def _nord_loop() -> Board:
    """Nord's token in Lille (G14, brown X17) and the junction tiles east of Paris, as in a
    bot game (seed 1095) where the reference refused a lay on D13 ("not legally rotated")."""
    b = Board.from_data()
    for hex_id, tile, rotation in [
        ("D15", "14", 1),
        ("E10", "X18", 4),
        ("E12", "632", 0),
        ("E16", "619", 4),
        ("F11", "46", 0),
        ("F13", "43", 4),
        ("F15", "X2", 1),
        ("G14", "X17", 1),
    ]:
        b.put_tile(hex_id, tile, rotation)
    b.put_token("Nord", "G14", 0)
    return b


def test_a_hex_side_reached_only_by_crossing_a_hexside_twice_is_not_in_the_network():
    """Errata A7 / differential runs: the reference walks from each token depth-first and
    never leaves a hex by a side the walk in progress already left it by. D13's east side
    is reached only by a walk that loops back over the same hexside, so Nord may not lay
    there; the looser flood fill (kept for route candidates) does reach it."""
    b = _nord_loop()
    d13 = MAP.index("D13")
    assert route_reach(b, "Nord").edges[d13]
    assert not reach(b, "Nord").edges[d13]
    assert not [lay for lay in legal_tile_lays(b, "Nord", "Blue") if lay.hex == "D13"]
    # what the walk does reach stays layable: Nord's own token hex and its neighbours
    net = reach(b, "Nord")
    assert MAP.index("G14") in net.token_hexes and net.edges[MAP.index("F13")]


def test_network_walk_reaches_the_whole_line_from_a_token():
    """A plain line of yellow track is walked end to end; the walk stops at (but reaches) a
    city full of other corporations' tokens."""
    b = Board.from_data()
    b.put_token("Belge", "E16", 0)
    for hex_id in ("E16", "D15", "C14"):
        b.put_tile(hex_id, "57", 2)
    net = reach(b, "Belge")
    assert {(MAP.index(h), 0) for h in ("E16", "D15", "C14")} <= net.nodes
    b.put_token("AG", "D15", 0)  # D15 (one slot) now full of another corporation
    net = reach(b, "Belge")
    assert (MAP.index("D15"), 0) in net.nodes and (MAP.index("C14"), 0) not in net.nodes


# --- Paris: PLM's reservation follows its city ----------------------------------------------


def test_plm_paris_reservation_follows_its_city_through_upgrades():
    """Reference engine (differential runs): PLM's reservation is the printed G6's, city 0;
    the Paris tiles carry none of their own. X1 keeps it on city 0; X5 laid turned by 3 puts
    the city with X1's city-0 track at index 1, and the reservation goes with it."""
    b = Board.from_data()
    assert b.reserved[PARIS] == ["PLM", None]
    b.put_tile("G6", "X1", 0)
    assert b.reserved[PARIS] == ["PLM", None]
    b.put_tile("G6", "X5", 3)
    assert b.reserved[PARIS] == [None, "PLM"]


def test_green_paris_to_brown_keeps_plm_city_by_its_reservation():
    """Reference engine: green Paris -> brown keeps the rotation when city 0 holds PLM's
    token or reservation, otherwise it turns by 3. With the reservation on X5's city 1
    (X5 at rotation 3), X12 goes at rotation 0, not 3."""
    from ..track import check_tile_lay

    b = Board.from_data()
    b.put_tile("G6", "X1", 0)
    b.put_tile("G6", "X5", 3)
    b.put_token("Ouest", "G6", 0)  # Ouest is in Paris: the hex is in its network
    rotations = {lay.rotation for lay in legal_tile_lays(b, "Ouest", "Brown") if lay.hex == "G6"}
    assert rotations == {0}
    refused("paris_rotation", check_tile_lay, b, "Ouest", "Brown", "G6", "X12", 3)
    b2 = Board.from_data()
    b2.put_tile("G6", "X1", 0)
    b2.put_tile("G6", "X5", 0)  # reservation stays on city 0: same rotation
    b2.put_token("Ouest", "G6", 1)
    assert {lay.rotation for lay in legal_tile_lays(b2, "Ouest", "Brown") if lay.hex == "G6"} == {0}


# --- LRC --------------------------------------------------------------------------------------


def test_player_owned_lrc_holds_the_track_step_only_when_the_corporation_could_buy_it():
    """Reference engine: after the two lays a player-owned LRC keeps the track step open
    only when corporations may buy privates *and* the corporation's cash covers LRC's
    minimum price (10); otherwise the turn goes on to the token or route step."""
    st = before(FINAL, 121)
    ci = C[st.acting_corporation()]
    st.corp_cash[ci] = 9
    st.apply(0, LayTile("B13", "8", 5))
    assert st.step != "track"
    st = before(FINAL, 121)
    st.corp_cash[ci] = 10
    st.apply(0, LayTile("B13", "8", 5))
    assert st.step == "track" and Pass() in st.legal_actions(0)


def test_lrc_lays_in_the_redeem_step_and_the_step_goes_on():
    """Reference engine (its fixture 1894_game_end_bankrupt, action 445): LRC's extra lay is
    usable before the track step, in the redeem step; the redeem step stays while a
    redemption is still affordable, and ends when LRC's 60 leaves too little."""
    st = at(FINAL, 272)  # Nord in its redeem step (Blue phase)
    nord = C["Nord"]
    assert st.step == "redeem" and st.acting_corporation() == "Nord"
    seat = st.active_seats()[0]
    st.private_owner[PRIVATE_INDEX["LRC"]] = CORP_OWNER + nord
    st.lrc_used = False
    st.pool[nord] = max(st.pool[nord], 10)
    st.corp_cash[nord] = 60 + price(st, nord)
    base = st.clone()
    legal = st.legal_actions(seat)
    lrc = [a for a in legal if isinstance(a, LayTile) and a.company == "LRC"]
    assert lrc and not [a for a in legal if isinstance(a, LayTile) and not a.company]
    st.apply(seat, lrc[0])
    assert st.lrc_used and st.step == "redeem" and st.corp_cash[nord] == price(st, nord)
    st = base
    st.corp_cash[nord] -= 1
    st.apply(seat, lrc[0])
    assert st.step == "track" and st.t_laid == []


# --- the reference's own recorded games (data outside the repository) ----------------------


def _recorded_games() -> list[Path]:
    """The shared recorded games (``tests/fixtures/e1894``) and those in the folders of
    ``ROUNDHOUSE_E1894_EXTRA_FIXTURES`` (``os.pathsep``-separated, outside the repository,
    e.g. a checkout's ``public/fixtures/1894``)."""
    extra = os.environ.get("ROUNDHOUSE_E1894_EXTRA_FIXTURES", "")
    dirs = [FIXTURES, *(Path(d) for d in extra.split(os.pathsep) if d)]
    return sorted({p.resolve() for d in dirs for p in Path(d).glob("*.json")})


@pytest.mark.parametrize("path", _recorded_games(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_recorded_games_replay_with_their_result(path):
    """Every recorded 1894 game we can find replays with our rules and the recorded result."""
    data = json.loads(path.read_text(encoding="utf-8"))
    imp = import_game(data)
    assert imp.result() == {str(k): v for k, v in data["result"].items()}


# --- the reference's remembered token-step answer (option reference_token_memo) ------------


def _reserve_every_open_city_in_reach(st, corp: str) -> None:
    """Reserve, for LF, every city ``corp`` could token now (as a late home choice does)."""
    from ..tokens import _slot_problem

    net = reach(st.board, corp)
    for h, k in sorted(net.nodes):
        if st.board.tiles[h].nodes[k].kind == "city" and h in st.board.tokens:
            if _slot_problem(st.board, h, k, corp) is None:
                st.board.reserve("LF", MAP.hexes[h].id, k)


def test_token_step_remembers_its_answer_until_the_network_is_cleared():
    """Differential runs (reference engine): the answer of a corporation's token step is
    kept until the next tile lay, chosen token or ferry marker; a late corporation's home
    reservation in between does not refresh it, so the step still waits (for a pass).
    Option ``reference_token_memo``; False looks at the board as it is."""
    from ..operating_round import _token_step_open

    st = at(FINAL, 38)  # Est in its token step with a city in reach
    est = C["Est"]
    fresh = st.clone()
    assert st.step == "token" and _token_step_open(st, est)
    assert st.board.token_memo == {"Est": True}
    _reserve_every_open_city_in_reach(st, "Est")
    assert _token_step_open(st, est)  # remembered
    st.board.put_tile("C10", "9", 1)  # any lay clears the memory
    assert st.board.token_memo == {} and not _token_step_open(st, est)
    assert st.board.token_memo == {"Est": False}
    fresh.options = fresh.options.model_copy(update={"reference_token_memo": False})
    _reserve_every_open_city_in_reach(fresh, "Est")
    assert not _token_step_open(fresh, est)  # its memory (from the replay) is not used


def test_an_automatic_home_token_keeps_the_memory_a_chosen_token_clears_it():
    """Reference engine: a home token placed without a choice does not clear its network
    (nor the remembered token-step answer); a token placed by a choice does."""
    b = Board.from_data()
    b.token_memo["Est"] = True
    b.put_token("Belge", "E16", 0, clears_graph=False)
    assert b.token_memo == {"Est": True}
    b.put_token("Nord", "G14", 0)
    assert b.token_memo == {}


# --- the route step: two revenue locations met from one token (errata A3, reference) -------


def test_route_step_opens_when_a_token_walk_meets_two_revenue_locations_even_london():
    """Differential runs (reference engine): the route step (and the forced train purchase)
    depends on the walk from a token meeting two revenue locations, London counting even
    without a ferry marker. A corporation in Calais (B9) with track only to London has a
    route step though no train can run there; a line between two cities is a route."""
    from ..graph import route_available
    from ..routes import has_route

    b = Board.from_data()
    b.put_token("Nord", "B9", 0)
    assert not route_available(b, "Nord")
    for rotation in range(6):  # the yellow city tile in Calais joining London
        trial = b.clone()
        trial.put_tile("B9", "57", rotation)
        if route_available(trial, "Nord"):
            break
    else:
        raise AssertionError("no rotation of 57 in B9 reaches London")
    assert not has_route(trial, "Nord")  # no runnable route without a ferry marker
    assert route_available(trial, "Nord", ferry=True) and has_route(trial, "Nord", ferry=True)


def test_lrc_on_printed_paris_lifts_the_token_for_the_corporation_to_place():
    """Reference engine (differential runs): LRC's lay of X1 on the printed Paris (two
    cities, no track) lifts the operating corporation's token there; it then chooses the
    city (either), as after a split. An ordinary lay keeps PLM's token on city 0."""
    from ..tokens import lift_after_special_lay, replacement_options

    b = Board.from_data()
    b.put_token("PLM", "G6", 0)
    old_paths = len(b.tile("G6").base_paths)
    ordinary = b.clone()
    b.put_tile("G6", "X1", 0)
    assert lift_after_special_lay(b, "PLM", "G6", old_paths)
    assert b.waiting_tokens("PLM") == [("PLM", "G6")]
    assert {(p.hex, p.city) for p in replacement_options(b, "PLM")} == {("G6", 0), ("G6", 1)}
    ordinary.put_tile("G6", "X1", 0)
    assert ordinary.tokens[PARIS][0] == ["PLM"]
    assert not lift_after_special_lay(b, "PLM", "G6", len(b.tile("G6").base_paths))


def test_lrc_on_printed_paris_in_the_redeem_step_returns_to_it_after_the_token():
    """Reference engine (differential run, seed 5132: PLM bought LRC, LRC laid X1 on the
    printed Paris in PLM's redeem step, PLM placed its token, and the reference was still in
    "Issue or Redeem Shares", refusing the track lay): the token re-placement after LRC's lay
    returns to the step of the lay, here the redeem step, where a redemption is still open."""
    st = at(FINAL, 846)  # PLM in its redeem step; Paris made printed again below
    plm = C["PLM"]
    assert st.step == "redeem" and st.acting_corporation() == "PLM"
    b, fresh = st.board, Board.from_data()
    b.return_copy(b.tiles[PARIS].name, b.copies[PARIS])
    for attr in ("tiles", "rtiles", "rotations", "copies"):
        getattr(b, attr)[PARIS] = getattr(fresh, attr)[PARIS]
    b.tokens[PARIS] = [["PLM"], [None]]
    b.version += 1
    b.token_memo.clear()
    seat = st.active_seats()[0]
    st.private_owner[PRIVATE_INDEX["LRC"]] = CORP_OWNER + plm
    st.lrc_used = False
    st.pool[plm] = max(st.pool[plm], 10)
    st.corp_cash[plm] = 200 + price(st, plm)
    lay = LayTile("G6", "X1", 0, company="LRC")
    assert lay in st.legal_actions(seat)
    st.apply(seat, lay)
    assert st.step == "replace" and st.t_teleport_step == "redeem"
    st.apply(seat, PlaceToken("G6", 1))
    assert st.step == "redeem" and RedeemShare(1) in st.legal_actions(seat)
    assert b.tokens[PARIS][1] == ["PLM"]
    st.apply(seat, Pass())  # ends the redeem step (no track in this late set: buy trains)
    assert st.step == "buy_train"


# --- routes: the optimum over every token --------------------------------------------------


def test_best_routes_through_paris_other_city_from_a_higher_token():
    """Differential run (seed 5017: CFOR ran 190, the reference's best was 200). CFOR has
    tokens in Paris' city 1 and in H3; its best route starts in H3 and ends in Paris' city 0.
    The enumeration starts each route at its lowest token and leaves out the lower tokens'
    nodes; Paris' two cities share one visit bit (a route visits Paris once), which must not
    make the city 0 look like CFOR's lower token there."""
    b = Board.from_data()
    for hex_id, tile, rotation in [("H5", "42", 1), ("H7", "624", 0), ("G6", "X11", 4)]:
        b.put_tile(hex_id, tile, rotation)
    b.put_token("PLM", "G6", 0)
    b.put_token("CFOR", "G6", 1)
    b.put_token("CFOR", "H3", 0)
    route = value_route(
        b, "CFOR", "7-0", "Purple", [["I2", "H1"], ["H1", "H3"], ["H3", "H5", "H7", "G6"]]
    )
    assert route.revenue == 200 and "G6-0" in route.nodes
    best = best_routes(b, "CFOR", ["7-0"], "Purple")
    assert best.total == 200
    assert best.routes[0].nodes == ("I2-0", "H1-0", "H3-0", "G6-0")


def test_teleport_in_the_redeem_step_returns_to_it_after_the_token_decision():
    """Reference engine (its fixture 1894_game_end_bankrupt, actions 568-570): GLG's teleport
    lay may come in the redeem step; after the private's token decision the turn is back in
    the redeem step (the corporation may still redeem, or pass to its track step)."""
    st = at(FINAL, 574)  # CFOR in its redeem step, tokens left, a 57 in Liege
    cfor = C["CFOR"]
    assert st.step == "redeem" and st.acting_corporation() == "CFOR"
    seat = st.active_seats()[0]
    st.private_owner[PRIVATE_INDEX["GLG"]] = CORP_OWNER + cfor
    st.teleport_used = False
    st.corp_cash[cfor] = 500
    glg = [a for a in st.legal_actions(seat) if isinstance(a, LayTile) and a.company == "GLG"]
    assert glg and all(a.hex == "H17" for a in glg)
    st.apply(seat, glg[0])
    assert st.step == "teleport" and st.t_teleport_step == "redeem"
    st.apply(seat, Pass())  # the private declines its free token
    assert st.step == "redeem" and st.teleport_used
    st.apply(seat, Pass())
    assert st.step == "track" and len(st.t_laid) == 1
