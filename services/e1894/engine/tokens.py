"""Station tokens: legal placements, home tokens, reservations, re-placement after a city split,
the LS token on A12 and the ferry-marker reachability check.

Spec: the 1894 rules summary, "Map, track and tokens" and "London, ferries and bonuses";
token counts and prices: ``data/corporations.json`` (``token_prices``: first entries are the
free home tokens).

A corporation's tokens are used in charter order: the next token costs
``token_prices[used]`` where ``used`` counts its tokens on the map (A12 included) and its
removed tokens still waiting to be re-placed.

Rules for an ordinary placement (:func:`check_token_placement`):

* the city exists; it is not London (A10) and not A12 (LS only);
* the corporation has a token left and the cash for it;
* it has no token in that hex yet;
* the city is reachable through its network (:func:`.graph.reach`);
* a slot is free once other corporations' reservations are kept: city reservations hold one
  slot each; a hex-level reservation (split tile) keeps the hex's last open city;
* while removed tokens wait in the hex: nothing while two wait, nor while one waits and the
  hex carries a reservation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from services.kernel.engine import IllegalAction, MalformedAction

from .board import CORPORATIONS, LONDON, LONDON_BONUS, PARIS, Board
from .graph import Network, reach
from .hexmap import MAP
from .tiles import SPLIT_TILES

SECTION = 'e1894.md "Map, track and tokens"'
LONDON_SECTION = 'e1894.md "London, ferries and bonuses"'


@dataclasses.dataclass(frozen=True, slots=True)
class TokenPlacement:
    """One legal token placement.

    Attributes:
        hex: hex id.
        city: city index on the hex's tile.
        cost: francs to pay (0 for home, LS, teleport and re-placed tokens).
        kind: ``"token"`` (ordinary), ``"home"``, ``"replace"`` (after a split), ``"ls"``
            (A12) or ``"teleport"`` (GLG/SAC).
    """

    hex: str
    city: int
    cost: int
    kind: str = "token"


def _corp(corp: str) -> dict[str, Any]:
    c = CORPORATIONS.get(corp)
    if c is None:
        raise MalformedAction("unknown_corporation", f"there is no corporation {corp!r}")
    return c


def tokens_used(board: Board, corp: str) -> int:
    """Tokens of ``corp`` on the map (A12 included) plus its removed tokens still waiting."""
    return board.tokens_on_map(corp) + sum(1 for c, _ in board.waiting if c == corp)


def tokens_left(board: Board, corp: str) -> int:
    """Tokens still on ``corp``'s charter (the traces' ``tokens_left`` minus waiting ones)."""
    return len(_corp(corp)["token_prices"]) - tokens_used(board, corp)


def next_token_cost(board: Board, corp: str) -> int | None:
    """Price of ``corp``'s next token (``token_prices[used]``), or None if none is left."""
    prices = _corp(corp)["token_prices"]
    used = tokens_used(board, corp)
    return prices[used] if used < len(prices) else None


def _open_slots(board: Board, h: int, k: int, corp: str) -> int:
    """Empty slots of city k usable by ``corp`` after other corporations' city reservations."""
    s = board.tokens[h][k]
    empty = s.count(None)
    res = board.reserved.get(h)
    if res is not None and k < len(res) and res[k] is not None and res[k] != corp:
        empty -= 1
    return empty


def _slot_problem(board: Board, h: int, k: int, corp: str) -> IllegalAction | None:
    """Why ``corp`` may not put a token in city k of hex h now (None if it may), ignoring
    reachability, cash and token count."""
    hex_id = MAP.hexes[h].id
    if h == LONDON:
        return IllegalAction(
            "no_token_in_london", f"{LONDON_SECTION}: nobody may place a token in London"
        )
    if h == LONDON_BONUS:
        return IllegalAction("ls_only", f"{LONDON_SECTION}: only LS puts a token on A12")
    cities = board.tokens[h]
    if any(corp in s for s in cities):
        return IllegalAction(
            "already_tokened", f"{SECTION}: {corp} already has a token in {hex_id}"
        )
    if _open_slots(board, h, k, corp) <= 0:
        s = cities[k]
        if None in s:
            return IllegalAction(
                "reserved_slot", f"{SECTION}: the free slot in {hex_id} is reserved"
            )
        return IllegalAction("city_full", f"{SECTION}: city {k} of {hex_id} has no free slot")
    waiting = [c for c, wh in board.waiting if wh == h]
    reservations = [c for c in board.reservations(hex_id) if c != corp]
    if len(waiting) >= 2 or (waiting and reservations):
        return IllegalAction(
            "tokens_waiting",
            f"{SECTION}: removed tokens are still waiting to be re-placed in {hex_id}",
        )
    hr = [c for c in board.hex_reserved.get(h, []) if c != corp]
    if hr:
        open_cities = [j for j, s in enumerate(cities) if s and all(c is None for c in s)]
        if open_cities == [k]:
            return IllegalAction(
                "reserved_slot",
                f"{SECTION}: the last open city of {hex_id} is reserved for {hr[0]}",
            )
    return None


def check_token_placement(
    board: Board,
    corp: str,
    hex_id: str,
    city: int,
    *,
    cash: int | None = None,
    network: Network | None = None,
) -> TokenPlacement:
    """Check an ordinary token placement (the OR's token step); return it with its cost.

    Raises:
        MalformedAction: ``unknown_hex``, ``unknown_city``, ``unknown_corporation``.
        IllegalAction: ``no_token_in_london``, ``ls_only``, ``no_tokens_left``,
            ``already_tokened``, ``city_full``, ``reserved_slot``, ``tokens_waiting``,
            ``unreachable``, ``insufficient_cash``.
    """
    h = MAP.index(hex_id)
    _corp(corp)
    cities = board.tokens.get(h)
    if (
        not cities
        or not isinstance(city, int)
        or not 0 <= city < len(cities)
        or not board.tiles[h].nodes[city].kind == "city"
    ):
        raise MalformedAction("unknown_city", f"{hex_id} has no city {city!r}")
    problem = _slot_problem(board, h, city, corp)
    if problem is not None:
        raise problem
    cost = next_token_cost(board, corp)
    if cost is None:
        raise IllegalAction("no_tokens_left", f"{SECTION}: {corp} has no token left")
    net = network if network is not None else reach(board, corp)
    if (h, city) not in net.nodes:
        raise IllegalAction("unreachable", f"{SECTION}: {corp} cannot reach {hex_id} city {city}")
    if cash is not None and cost > cash:
        raise IllegalAction(
            "insufficient_cash",
            f"{SECTION}: the token costs {cost}, {corp} has {cash}",
            cost=cost,
            cash=cash,
        )
    return TokenPlacement(hex_id, city, cost)


def legal_token_placements(
    board: Board, corp: str, *, cash: int | None = None
) -> list[TokenPlacement]:
    """Every ordinary token placement ``corp`` may make now (map order, then city)."""
    cost = next_token_cost(board, corp)
    if cost is None or (cash is not None and cost > cash):
        return []
    net = reach(board, corp)
    out = []
    for h, k in sorted(net.nodes):
        if board.tiles[h].nodes[k].kind != "city" or h not in board.tokens:
            continue
        if _slot_problem(board, h, k, corp) is None:
            out.append(TokenPlacement(MAP.hexes[h].id, k, cost))
    return out


PLACE_TIME_ONLY = frozenset({"no_token_in_london", "tokens_waiting"})
"""Token restrictions of 1894 that the reference engine checks only when a token is placed,
not when it decides whether the token step is open (see :func:`token_step_open`)."""


def token_step_open(board: Board, corp: str, *, cash: int) -> bool:
    """True if ``corp``'s token step waits for its decision (reference engine): it has a
    token, can pay the next one and reaches a city it could token, counting cities that only
    the place-time restrictions :data:`PLACE_TIME_ONLY` (London, tokens waiting after a
    split) forbid, and London when its track is reached even without a ferry marker; the
    decision may then only be ``pass``."""
    cost = next_token_cost(board, corp)
    if cost is None or cost > cash:
        return False
    return tokenable_city_in_reach(board, corp)


def tokenable_city_in_reach(board: Board, corp: str, network: Network | None = None) -> bool:
    """The network part of :func:`token_step_open` (money and tokens left aside);
    ``network``: ``reach(board, corp)`` if already computed."""
    net = network if network is not None else reach(board, corp)
    for h, k in net.nodes:
        if board.tiles[h].nodes[k].kind != "city" or h not in board.tokens:
            continue
        problem = _slot_problem(board, h, k, corp)
        if problem is None or problem.code in PLACE_TIME_ONLY:
            return True
    # London: without a ferry the walk stops at it, but it is reached like a full city
    london = board.tokens.get(LONDON)
    return bool(net.edges[LONDON]) and london is not None and any(None in s for s in london)


def place_token(
    board: Board,
    corp: str,
    hex_id: str,
    city: int,
    *,
    slot: int | None = None,
    cash: int | None = None,
) -> TokenPlacement:
    """Check (:func:`check_token_placement`) and place an ordinary token; returns it (the
    caller pays ``cost``)."""
    p = check_token_placement(board, corp, hex_id, city, cash=cash)
    board.put_token(corp, hex_id, city, slot)
    return p


# ---------------------------------------------------------------- home tokens


def home_hexes(corp: str) -> list[str]:
    """Fixed home hexes of ``corp`` (two for Ouest, Nord and CFOR; none for LF/LB)."""
    return list(_corp(corp).get("home_coordinates", []))


def home_token_options(
    board: Board, corp: str, homes: Sequence[str] | None = None
) -> list[list[TokenPlacement]]:
    """For each home hex still without ``corp``'s token, the cities it may use: one option
    normally (its reserved city); on a split brown tile, each city with room (the corporation
    picks, spec "Map, track and tokens").

    Args:
        homes: the home hexes (default :func:`home_hexes`; pass the chosen hex for LF/LB).
    """
    out = []
    for hex_id in homes if homes is not None else home_hexes(corp):
        h = MAP.index(hex_id)
        cities = board.tokens[h]
        if any(corp in s for s in cities):
            continue
        res = board.reserved.get(h) or []
        mine = [k for k, c in enumerate(res) if c == corp]
        tile = board.tiles[h]
        if mine and not (tile.name in SPLIT_TILES and corp in board.hex_reserved.get(h, [])):
            out.append([TokenPlacement(hex_id, mine[0], 0, "home")])
            continue
        opts = [
            TokenPlacement(hex_id, k, 0, "home")
            for k in tile.city_indices
            if None in cities[k] and not (k < len(res) and res[k] not in (None, corp))
        ]
        if not opts:
            opts = [TokenPlacement(hex_id, k, 0, "home") for k in tile.city_indices]
        out.append(opts)
    return out


def place_home_token(
    board: Board,
    corp: str,
    hex_id: str,
    city: int,
    slot: int | None = None,
    *,
    automatic: bool = False,
) -> TokenPlacement:
    """Place a free home token (check: the option is in :func:`home_token_options`).
    ``automatic``: placed without a choice, which leaves :attr:`.Board.token_memo` alone
    (the reference places such tokens without clearing its network).

    Raises:
        IllegalAction: ``not_home`` if that city is not one of ``corp``'s open home options.
    """
    homes = home_hexes(corp)
    if hex_id not in homes and corp in board.reservations(hex_id):
        homes = homes + [hex_id]  # a late corporation's chosen home

    for opts in home_token_options(board, corp, homes):
        for p in opts:
            if p.hex == hex_id and p.city == city:
                board.put_token(corp, hex_id, city, slot, clears_graph=not automatic)
                return p
    raise IllegalAction(
        "not_home", f"{SECTION}: {hex_id} city {city} is not a home option of {corp}"
    )


# ---------------------------------------------------------------- split re-placement


def replacement_options(board: Board, corp: str) -> list[TokenPlacement]:
    """Where ``corp`` may re-place a token removed by a green -> brown split: either city of
    the hex, even an occupied one (an extra slot is added)."""
    out = []
    for c, h in board.waiting:
        if c != corp:
            continue
        for k in board.tiles[h].city_indices:
            out.append(TokenPlacement(MAP.hexes[h].id, k, 0, "replace"))
        break
    return out


def lift_after_special_lay(board: Board, corp: str, hex_id: str, old_paths: int) -> bool:
    """After a private's special lay (LRC) on a hex whose printed tile had several cities and
    no track (printed Paris), ``corp``'s tokens there are lifted and wait for ``corp`` to
    choose their city (:func:`replacement_options`). Reference engine: its special-lay step
    applies the generic rule for a first track on a multi-city hex (the ordinary track step
    of 1894 moves PLM's token to city 0 instead). ``old_paths``: paths of the tile replaced.

    Returns:
        True if a token of ``corp`` now waits.
    """
    h = MAP.index(hex_id)
    cities = board.tokens.get(h) or []
    if old_paths or len(board.tiles[h].city_indices) < 2:
        return False
    lifted = False
    for s in cities:
        for k, c in enumerate(s):
            if c == corp:
                s[k] = None
                board.waiting.append((corp, h))
                lifted = True
    if lifted:
        board.token_memo.clear()
        board.version += 1
    return lifted


def replace_token(
    board: Board, corp: str, hex_id: str, city: int, slot: int | None = None
) -> TokenPlacement:
    """Re-place a removed token (free).

    Raises:
        IllegalAction: ``nothing_waiting`` if ``corp`` has no token waiting in ``hex_id``;
            ``unknown_city`` style ``MalformedAction`` for a bad city.
    """
    h = MAP.index(hex_id)
    if not any(c == corp and wh == h for c, wh in board.waiting):
        raise IllegalAction(
            "nothing_waiting", f"{SECTION}: {corp} has no removed token waiting in {hex_id}"
        )
    if city not in board.tiles[h].city_indices:
        raise MalformedAction("unknown_city", f"{hex_id} has no city {city!r}")
    board.put_token(corp, hex_id, city, slot)
    board.settle_hex_reservations(hex_id)
    return TokenPlacement(hex_id, city, 0, "replace")


# ---------------------------------------------------------------- LS, ferries, late homes


def check_ls_token(board: Board, corp: str) -> TokenPlacement:
    """LS: its owning corporation puts its cheapest available token free on A12.

    Raises:
        IllegalAction: ``ls_used`` (A12 already has a token), ``no_tokens_left``.
    """
    if board.london_bonus_corporation() is not None:
        raise IllegalAction("ls_used", f"{LONDON_SECTION}: A12 already holds the LS token")
    if next_token_cost(board, corp) is None:
        raise IllegalAction("no_tokens_left", f"{SECTION}: {corp} has no token left")
    return TokenPlacement("A12", 0, 0, "ls")


def place_ls_token(board: Board, corp: str) -> TokenPlacement:
    """Check (:func:`check_ls_token`) and put ``corp``'s token on A12."""
    p = check_ls_token(board, corp)
    board.put_token(corp, "A12", 0, 0)
    return p


def can_reach_london(board: Board, corp: str) -> bool:
    """True if ``corp``'s network reaches London (A10) as if it held a ferry marker: needed to
    buy one (spec "London, ferries and bonuses")."""
    net = reach(board, corp, ferry=True)
    return any(h == LONDON for h, _ in net.nodes)


def check_ferry_purchase(board: Board, corp: str) -> None:
    """Raise unless ``corp`` may take a ferry marker: ``ferry_owned``, ``no_ferry_left``,
    ``london_unreachable``. (Price and cash are the caller's: 80, 40 for LS's owner.)"""
    if board.has_ferry(corp):
        raise IllegalAction("ferry_owned", f"{LONDON_SECTION}: {corp} already has a ferry marker")
    if board.ferries_left() <= 0:
        raise IllegalAction("no_ferry_left", f"{LONDON_SECTION}: the 4 ferry markers are gone")
    if not can_reach_london(board, corp):
        raise IllegalAction("london_unreachable", f"{LONDON_SECTION}: {corp} cannot reach London")


def check_teleport_token(
    board: Board, corp: str, private: str, hex_id: str, city: int
) -> TokenPlacement:
    """GLG/SAC: after its lay in Liège/Antwerpen, a free token there (no reachability check)."""
    from .track import TELEPORT

    if private not in TELEPORT:
        raise MalformedAction("unknown_special", f"{private} has no teleport power")
    h = MAP.index(hex_id)
    if h != TELEPORT[private][0]:
        raise IllegalAction(
            "special_hex",
            f"{private}: the free token goes only in {MAP.hexes[TELEPORT[private][0]].id}",
        )
    cities = board.tokens.get(h)
    if not cities or city not in board.tiles[h].city_indices:
        raise MalformedAction("unknown_city", f"{hex_id} has no city {city!r}")
    problem = _slot_problem(board, h, city, corp)
    if problem is not None:
        raise problem
    if next_token_cost(board, corp) is None:
        raise IllegalAction("no_tokens_left", f"{SECTION}: {corp} has no token left")
    return TokenPlacement(hex_id, city, 0, "teleport")


def late_home_candidates(board: Board, corp: str) -> list[str]:
    """LF/LB home choices: candidates with no reservation and a city with room; hexes without
    track are preferred if any are left (spec "Trains and phases", late corporations)."""
    cands = _corp(corp).get("late_home_candidates", [])
    ok = []
    for hex_id in cands:
        h = MAP.index(hex_id)
        if board.reservations(hex_id):
            continue
        cities = board.tokens.get(h) or []
        if not any(None in s for s in cities):
            continue
        ok.append(hex_id)
    bare = [x for x in ok if board.tiles[MAP.index(x)].color == "white"]
    return bare or ok


def reserve_late_home(board: Board, corp: str, hex_id: str) -> None:
    """Reserve LF/LB's chosen home: Paris -> city 1; a split brown tile -> the open city, or
    the whole hex if both are open; otherwise city 0."""
    h = MAP.index(hex_id)
    tile = board.tiles[h]
    if h == PARIS:
        board.reserve(corp, hex_id, 1)
    elif tile.name in SPLIT_TILES:
        open_cities = [k for k in tile.city_indices if all(c is None for c in board.tokens[h][k])]
        board.reserve(corp, hex_id, open_cities[0] if len(open_cities) == 1 else None)
    else:
        board.reserve(corp, hex_id, 0)
