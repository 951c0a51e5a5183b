"""Train routes: validate and value a given route, and find a corporation's best routes.

Spec: the 1894 rules summary, "London, ferries and bonuses" and "Trains and phases"; route
conventions of the reference engine (``fixtures/e1894/traces/README.md``).

A route of a train is a sequence of distinct nodes (cities, towns, off-board areas) joined
by track, with these rules:

* at least two nodes, and at least one of them a city holding the corporation's token;
* consecutive nodes are joined by a *connection*: a walk along paths from node to node that
  crosses hexsides and passes only plain track in between;
* no hexside is used twice, by the route or by any other route of the same corporation
  (trains may not share track); several trains may visit the same node;
* no node is visited twice, and Paris (G6, two cities) at most once;
* a node in the middle of the route may not be an off-board area or a city full of other
  corporations' tokens; London (A10) may be visited, or passed, only with a ferry marker;
* distance: train ``n`` visits at most ``n`` nodes; ``5+1`` at most 6 nodes of which at most
  5 are cities/off-boards (one extra town); ``D`` any number;
* revenue: every visited node's value in the current phase (``yellow_30|brown_80`` means 30
  until Brown, then 80), plus bonuses: Luxembourg (I18) adds the route's largest stop value;
  London (A10) adds the largest other stop value for the corporation with the LS token on A12;
  Netherlands (C18) adds 100 when the route also reaches I2, I18 or A4.

The optimiser (:func:`best_routes`) builds an integer graph of the corporation's reachable
nodes and connections (each connection a bitset of hexsides), enumerates every legal route
once (grown from its lowest token in both directions, with the two halves ordered to avoid
duplicates), then chooses one route per train with disjoint hexside bitsets by
branch-and-bound on revenue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from services.kernel.engine import IllegalAction, MalformedAction

from .board import LONDON, LONDON_BONUS, PARIS, Board
from .data import load as _load_json
from .graph import route_reach
from .hexmap import HEXSIDE_COUNT, MAP, hexside, opposite
from .tiles import NODE_BASE, phase_index

SECTION = 'e1894.md "London, ferries and bonuses"'
TRAIN_SECTION = 'e1894.md "Trains and phases"'

_GAME = _load_json("game.json")["special_hexes"]
LUXEMBOURG = MAP.index(_GAME["luxembourg"])
NETHERLANDS = MAP.index(_GAME["netherlands"])
NL_PARTNERS = frozenset(MAP.index(x) for x in _GAME["non_netherlands_offboards_for_bonus"])
NL_BONUS = 100
"""+100 for Netherlands with I2, I18 or A4 on the same route (spec "London, ferries and
bonuses"; the +100 icon on those hexes)."""

_NEIGHBORS = tuple(h.neighbors for h in MAP.hexes)

UNLIMITED = 10_000

# flag bits of a route's special stops
F_LONDON, F_LUX, F_NL, F_NLP = 1, 2, 4, 8


def train_name(train: str) -> str:
    """``"5+1-2"`` -> ``"5+1"``; ``"D"`` -> ``"D"`` (train ids are ``name-k``)."""
    if train in TRAIN_LIMITS:
        return train
    name, sep, k = train.rpartition("-")
    if sep and k.isdigit() and name in TRAIN_LIMITS:
        return name
    raise MalformedAction("unknown_train", f"there is no train {train!r} in 1894")


def _train_limits(raw: Any) -> tuple[int, int]:
    """(max nodes visited, max cities + off-boards visited) of one ``trains.json`` distance:
    an int n (999 = unlimited) or a list of ``{nodes, visit}`` groups (5+1: one town plus
    five stops of any kind)."""
    if isinstance(raw, int):
        return (UNLIMITED, UNLIMITED) if raw >= 999 else (raw, raw)
    nodes = sum(int(g["visit"]) for g in raw)
    big = sum(int(g["visit"]) for g in raw if {"city", "offboard"} & set(g["nodes"]))
    return nodes, big


TRAIN_LIMITS: dict[str, tuple[int, int]] = {
    t["name"]: _train_limits(t["distance"]) for t in _load_json("trains.json")["trains"]
}
"""Train name -> (max nodes visited, max cities + off-boards visited), from
``data/trains.json`` (2: (2, 2) ... 5+1: (6, 5), five stops of any kind plus one extra town;
D: unlimited)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Route:
    """One valued route.

    Attributes:
        train: the train id or name it was computed for (``"5+1-2"``).
        nodes: node signatures ``"HEX-k"`` of the visited stops, in route order.
        hexes: hex ids of the visited stops, in route order.
        connections: for each pair of consecutive stops, the hex ids walked from one to the
            next (``[["F15", "F17", "E16"], ["E16", "D15"]]``, as in 18xx.games actions).
        stops: ``(signature, value)`` per stop, value in the current phase.
        bonus: ``(name, amount)`` pairs: ``lux``, ``london`` (LS), ``nl``; only non-zero ones.
        revenue: francs: sum of stop values plus bonuses.
    """

    train: str
    nodes: tuple[str, ...]
    hexes: tuple[str, ...]
    connections: tuple[tuple[str, ...], ...]
    stops: tuple[tuple[str, int], ...]
    bonus: tuple[tuple[str, int], ...]
    revenue: int

    def to_json(self) -> dict[str, Any]:
        """The 18xx.games ``run_routes`` route form (``train``, ``connections``, ``hexes``,
        ``revenue``, ``revenue_str``, ``nodes``)."""
        return {
            "train": self.train,
            "connections": [list(c) for c in self.connections],
            "hexes": list(self.hexes),
            "revenue": self.revenue,
            "revenue_str": "-".join(self.hexes),
            "nodes": list(self.nodes),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class RouteSet:
    """A corporation's chosen routes: one per train that runs (trains without a route are
    left out), in the order of the trains given; ``total`` is their revenue sum."""

    routes: tuple[Route, ...]
    total: int

    def to_json(self) -> dict[str, Any]:
        return {"routes": [r.to_json() for r in self.routes], "total": self.total}


# ---------------------------------------------------------------- the route graph


Stop = tuple[int, int]
"""One stop of a route candidate's half: ``(node id, connection id it was reached by)``."""
Candidate = tuple[int, int, int, int, tuple[Stop, ...], tuple[Stop, ...]]
"""A route candidate of :func:`_enumerate`: ``(revenue, hexside mask, nodes, cities, right
part, left part)``; the two parts grow from the lowest token node."""


class RouteGraph:
    """Integer graph of one corporation's reachable nodes (internal).

    Attributes:
        hexnode: list of ``(hex index, node index)`` per node id.
        value: stop value per node id in the phase.
        town: True per node id for towns.
        passable: True if a route may pass through the node.
        visit_bit: bit per node id for the "visit once" set (both Paris cities share one).
        flags: special-stop flag bits per node id (London, Luxembourg, Netherlands, partner).
        token: node ids holding the corporation's token, ascending.
        adj: per node id, list of ``(other node id, hexside mask, connection id)``.
        chains: per connection id, ``(from node id, to node id, hex index chain)``.
        conn_mask: per connection id, its hexside bitset.
        ls: True if London gets the LS bonus for this corporation.
        ids: ``(hex index, node index)`` -> node id.
    """

    hexnode: list[tuple[int, int]]
    value: list[int]
    town: list[bool]
    passable: list[bool]
    visit_bit: list[int]
    flags: list[int]
    token: list[int]
    adj: list[list[tuple[int, int, int]]]
    chains: list[tuple[int, int, tuple[int, ...]]]
    conn_mask: list[int]
    ls: bool
    ids: dict[tuple[int, int], int]

    __slots__ = tuple(__annotations__)  # the fields are the annotations above


def build_graph(
    board: Board, corp: str, phase: str, *, ferry: bool | None = None, whole: bool = False
) -> RouteGraph:
    """The :class:`RouteGraph` of ``corp`` on ``board`` in ``phase``.

    ``whole=True`` also takes in nodes reachable only through full cities (they stay
    impassable); used to validate given routes with the precise reason."""
    if ferry is None:
        ferry = corp in board.ferries
    net = route_reach(board, corp, ferry=ferry, through_blocked=whole)
    g = RouteGraph()
    nodes = sorted(net.nodes)
    ids = {hn: i for i, hn in enumerate(nodes)}
    g.ids = ids
    g.hexnode = nodes
    rtiles = board.rtiles
    tokens = board.tokens
    g.value = []
    g.town = []
    g.passable = []
    g.visit_bit = []
    g.flags = []
    paris_bit = 0
    for i, (h, k) in enumerate(nodes):
        nd = rtiles[h].tile.nodes[k]
        g.value.append(nd.value(phase))
        g.town.append(nd.kind == "town")
        ok = nd.kind != "offboard"
        if nd.kind == "city" and h in tokens:
            s = tokens[h][k]
            if s and corp not in s and None not in s:
                ok = False
        g.passable.append(ok)
        if h == PARIS:
            if not paris_bit:
                paris_bit = 1 << i
            g.visit_bit.append(paris_bit)
        else:
            g.visit_bit.append(1 << i)
        f = 0
        if h == LONDON:
            f |= F_LONDON
        if h == LUXEMBOURG:
            f |= F_LUX
        if h == NETHERLANDS:
            f |= F_NL
        if h in NL_PARTNERS:
            f |= F_NLP
        g.flags.append(f)
    g.token = sorted(
        ids[(h, k)] for h, k in board.token_nodes(corp) if h != LONDON_BONUS and (h, k) in ids
    )
    g.ls = board.london_bonus_corporation() == corp
    g.adj = [[] for _ in nodes]
    g.chains = []
    g.conn_mask = []
    seen: set[tuple[int, int, int]] = set()
    for u, (h, k) in enumerate(nodes):
        rt = rtiles[h]
        for pi in rt.node_paths[k]:
            a, b = rt.paths[pi]
            other = b if a == NODE_BASE + k else a
            if other >= NODE_BASE:
                v = ids.get((h, other - NODE_BASE))
                if v is not None and v != u:
                    _add_conn(g, seen, u, v, 1 << (HEXSIDE_COUNT + len(g.chains)), (h,))
                continue
            _walk(g, board, ids, seen, u, h, other, 0, [h])
    return g


def _add_conn(
    g: RouteGraph,
    seen: set[tuple[int, int, int]],
    u: int,
    v: int,
    mask: int,
    chain: tuple[int, ...],
) -> None:
    key = (min(u, v), max(u, v), mask)
    if key in seen:
        return
    seen.add(key)
    cid = len(g.chains)
    if u > v:
        u, v = v, u
        chain = chain[::-1]
    g.chains.append((u, v, chain))
    g.conn_mask.append(mask)
    g.adj[u].append((v, mask, cid))
    g.adj[v].append((u, mask, cid))


def _walk(
    g: RouteGraph,
    board: Board,
    ids: dict[tuple[int, int], int],
    seen: set[tuple[int, int, int]],
    u: int,
    h: int,
    edge: int,
    mask: int,
    chain: list[int],
) -> None:
    """Follow track from hex ``h`` out through ``edge``; record connections to nodes."""
    nb = _NEIGHBORS[h][edge]
    if nb < 0:
        return
    bit = 1 << hexside(h, edge)
    if mask & bit:
        return
    mask |= bit
    entry = opposite(edge)
    rt = board.rtiles[nb]
    chain.append(nb)
    for pi in rt.edge_paths[entry]:
        a, b = rt.paths[pi]
        other = b if a == entry else a
        if other >= NODE_BASE:
            v = ids.get((nb, other - NODE_BASE))
            if v is not None and v != u:
                _add_conn(g, seen, u, v, mask, tuple(chain))
        else:
            _walk(g, board, ids, seen, u, nb, other, mask, chain)
    chain.pop()


# ---------------------------------------------------------------- enumeration


def _enumerate(g: RouteGraph, max_nodes: int, max_cities: int) -> list[Candidate]:
    """Every legal route (as ``(revenue, hexside mask, nodes, cities, node ids, conn ids)``)
    with at most ``max_nodes`` nodes and ``max_cities`` non-town nodes."""
    out: list[Candidate] = []
    value = g.value
    town = g.town
    passable = g.passable
    vbit = g.visit_bit
    flags = g.flags
    adj = g.adj
    ls = g.ls
    tokens = g.token
    append = out.append

    def finish(s: int, mx: int, lv: int, fl: int) -> int:
        rev = s
        if fl & F_LUX:
            rev += mx if mx >= lv else lv
        if fl & F_LONDON and ls:
            rev += mx
        if fl & F_NL and fl & F_NLP:
            rev += NL_BONUS
        return rev

    nbit = [1 << i for i in range(len(value))]

    def grow(t: int, forbid: int) -> None:
        """Every route whose lowest token is ``t`` (``forbid``: the node bits, ``1 << id``, of
        the lower tokens, whose routes were enumerated from them)."""
        tv = value[t]
        tcity = 0 if town[t] else 1
        t_is_london = flags[t] & F_LONDON

        def next_stops(
            x: int,
            vis: int,
            hm: int,
            n: int,
            c: int,
            s: int,
            mx: int,
            lv: int,
            fl: int,
            min_cid: int,
        ) -> Iterator[tuple[int, int, int, int, int, int, int, int, int, int]]:
            """Every way to extend a partial route ending at node ``x`` by one stop: no
            hexside twice (``hm``), no node twice and no lower token (``vis``, ``forbid``),
            within the train's distance; the stop's value is added and London's kept apart
            (``lv``) from the largest other value (``mx``) for the Luxembourg and London
            bonuses. Connections with ids up to ``min_cid`` are skipped (-1: none).

            Yields ``(y, connection id, y's visit bit, hexside mask, nodes, cities, value
            sum, largest value, London value, flags)`` of the extended route."""
            for y, m, cid in adj[x]:
                if cid <= min_cid or m & hm:
                    continue
                yb = vbit[y]
                # ``forbid`` holds the lower tokens' own node bits, not their visit bits:
                # Paris' two cities share one visit bit, and a route through Paris' other
                # city is still this token's to enumerate
                if yb & vis or nbit[y] & forbid:
                    continue
                n2 = n + 1
                c2 = c if town[y] else c + 1
                if n2 > max_nodes or c2 > max_cities:
                    continue
                vy = value[y]
                fy = flags[y]
                if fy & F_LONDON:
                    yield y, cid, yb, hm | m, n2, c2, s + vy, mx, vy, fl | fy
                else:
                    yield y, cid, yb, hm | m, n2, c2, s + vy, (vy if vy > mx else mx), lv, fl | fy

        # phase 2: grow the left part from t, given the right part's state
        def left(
            x: int,
            vis: int,
            hm: int,
            n: int,
            c: int,
            s: int,
            mx: int,
            lv: int,
            fl: int,
            min_cid: int,
            rseq: list[Stop],
            lseq: list[Stop],
        ) -> None:
            for y, cid, yb, hm2, n2, c2, s2, mx2, lv2, fl2 in next_stops(
                x, vis, hm, n, c, s, mx, lv, fl, min_cid
            ):
                lseq.append((y, cid))
                append((finish(s2, mx2, lv2, fl2), hm2, n2, c2, tuple(rseq), tuple(lseq)))
                if passable[y]:
                    left(y, vis | yb, hm2, n2, c2, s2, mx2, lv2, fl2, -1, rseq, lseq)
                lseq.pop()

        def right(
            x: int,
            vis: int,
            hm: int,
            n: int,
            c: int,
            s: int,
            mx: int,
            lv: int,
            fl: int,
            first: int,
            rseq: list[Stop],
        ) -> None:
            for y, cid, yb, hm2, n2, c2, s2, mx2, lv2, fl2 in next_stops(
                x, vis, hm, n, c, s, mx, lv, fl, -1
            ):
                f = cid if first < 0 else first
                rseq.append((y, cid))
                append((finish(s2, mx2, lv2, fl2), hm2, n2, c2, tuple(rseq), ()))
                vis2 = vis | yb
                if n2 < max_nodes:
                    # the left part may start at t (t is a token city: passable)
                    left(t, vis2, hm2, n2, c2, s2, mx2, lv2, fl2, f, rseq, [])
                    if passable[y]:
                        right(y, vis2, hm2, n2, c2, s2, mx2, lv2, fl2, f, rseq)
                rseq.pop()

        if t_is_london:
            right(t, vbit[t], 0, 1, tcity, tv, 0, tv, flags[t], -1, [])
        else:
            right(t, vbit[t], 0, 1, tcity, tv, tv, 0, flags[t], -1, [])

    lower = 0
    for t in tokens:
        grow(t, lower)
        lower |= nbit[t]
    return out


# ---------------------------------------------------------------- optimisation


def best_routes(
    board: Board,
    corp: str,
    trains: Sequence[str],
    phase: str,
    *,
    ferry: bool | None = None,
) -> RouteSet:
    """The revenue-maximising routes of ``corp``'s ``trains`` on ``board`` in ``phase``.

    Args:
        board: the board.
        corp: corporation symbol.
        trains: train ids or names (``["5+1-0", "D-3"]`` or ``["4", "4"]``).
        phase: phase name (stop values and London's 30/80 depend on it).
        ferry: whether the corporation holds a ferry marker (default: from the board).

    Returns:
        a :class:`RouteSet` (empty with total 0 if nothing can run).

    Raises:
        MalformedAction: ``unknown_train``, ``unknown_phase``.
    """
    phase_index(phase)
    names = [train_name(t) for t in trains]
    if not trains:
        return RouteSet((), 0)
    g = build_graph(board, corp, phase, ferry=ferry)
    if not g.token:
        return RouteSet((), 0)
    max_nodes = max(TRAIN_LIMITS[n][0] for n in names)
    max_cities = max(TRAIN_LIMITS[n][1] for n in names)
    cands = _enumerate(g, max_nodes, max_cities)
    cands.sort(key=lambda r: -r[0])
    per_train: list[list[Candidate]] = []
    cache: dict[str, list[Candidate]] = {}
    for n in names:
        if n not in cache:
            mn, mc = TRAIN_LIMITS[n]
            cache[n] = [r for r in cands if r[2] <= mn and r[3] <= mc]
        per_train.append(cache[n])
    choice = _combine(per_train, names, g.conn_mask)
    routes = []
    total = 0
    for ti, idx in enumerate(choice):
        if idx is None:
            continue
        r = per_train[ti][idx]
        route = _to_route(g, board, trains[ti], phase, r)
        routes.append(route)
        total += route.revenue
    return RouteSet(tuple(routes), total)


def _bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _hexside_index(cands: list[Candidate], conn_mask: list[int]) -> dict[int, int]:
    """Hexside -> bitset of the candidate indices whose route crosses that hexside (built from
    the connections each candidate uses)."""
    size = (len(cands) + 8) // 8
    by_conn: dict[int, bytearray] = {}
    for j, r in enumerate(cands):
        byte, bit = j >> 3, 1 << (j & 7)
        for seq in (r[4], r[5]):
            for _y, cid in seq:
                ba = by_conn.get(cid)
                if ba is None:
                    ba = by_conn[cid] = bytearray(size)
                ba[byte] |= bit
    out: dict[int, int] = {}
    for cid, ba in by_conn.items():
        b = int.from_bytes(ba, "little")
        for h in _bits(conn_mask[cid]):
            out[h] = out.get(h, 0) | b
    return out


def _combine(
    per_train: list[list[Candidate]], names: list[str], conn_mask: list[int]
) -> list[int | None]:
    """One candidate (or none) per train, hexside-disjoint, with the maximum total revenue.

    Runs the plain scan (:func:`_combine_scan`) with a small work budget, which solves most
    positions at once, and falls back to the bitset search (:func:`_combine_bitset`) for the
    rest. Both are exact.
    """
    if len(per_train) == 1:
        return [0 if per_train[0] else None]
    found = _combine_scan(per_train, names, budget=SCAN_BUDGET)
    if found is not None:
        return found
    return _combine_bitset(per_train, names, conn_mask)


SCAN_BUDGET = 8000
"""Candidate checks the plain scan may spend before the bitset search takes over."""


def _order(per_train: list[list[Candidate]], names: list[str]) -> list[int]:
    """Trains strongest first (by best candidate), identical trains together."""
    return sorted(
        range(len(per_train)),
        key=lambda i: (-(per_train[i][0][0] if per_train[i] else 0), names[i]),
    )


def _combine_scan(
    per_train: list[list[Candidate]], names: list[str], budget: int
) -> list[int | None] | None:
    """Branch and bound scanning each train's candidates best first (``None`` if it needs more
    than ``budget`` candidate checks)."""
    k = len(per_train)
    order = _order(per_train, names)
    lists = [per_train[i] for i in order]
    revs = [[r[0] for r in lst] for lst in lists]
    masks = [[r[1] for r in lst] for lst in lists]
    tops = [rv[0] if rv else 0 for rv in revs]
    rest = [0] * (k + 1)
    for i in range(k - 1, -1, -1):
        rest[i] = rest[i + 1] + tops[i]
    same_prev = [i > 0 and names[order[i]] == names[order[i - 1]] for i in range(k)]
    best = [-1]
    best_pick: list[list[int | None]] = [[None] * k]
    pick: list[int | None] = [None] * k
    left = [budget]

    class OutOfBudget(Exception):
        pass

    def rec(i: int, used: int, cur: int, prev_idx: int) -> None:
        if i == k:
            if cur > best[0]:
                best[0] = cur
                best_pick[0] = pick[:]
            return
        if same_prev[i] and prev_idx == -2:
            pick[i] = None
            rec(i + 1, used, cur, -2)
            return
        rv = revs[i]
        ms = masks[i]
        bound_rest = rest[i + 1]
        start = prev_idx + 1 if same_prev[i] else 0
        for j in range(start, len(rv)):
            r = rv[j]
            if cur + r + bound_rest <= best[0]:
                break
            left[0] -= 1
            if left[0] < 0:
                raise OutOfBudget
            if ms[j] & used:
                continue
            pick[i] = j
            rec(i + 1, used | ms[j], cur + r, j)
        pick[i] = None
        if cur + bound_rest > best[0]:
            rec(i + 1, used, cur, -2)

    try:
        rec(0, 0, 0, -1)
    except OutOfBudget:
        return None
    out: list[int | None] = [None] * k
    for pos, i in enumerate(order):
        out[i] = best_pick[0][pos]
    return out


def _combine_bitset(
    per_train: list[list[Candidate]], names: list[str], conn_mask: list[int]
) -> list[int | None]:
    """Branch and bound: one candidate (or none) per train, hexside-disjoint, max revenue.

    Each train's candidates are sorted by revenue (best first). Trains are searched strongest
    first. For each train the candidates still compatible with the routes already chosen are
    one bitset (all candidates minus, per used hexside, those crossing it), walked lowest index
    (= best revenue) first; the walk stops once the revenue bound cannot beat the best total.
    Identical trains take candidates in increasing index order (no symmetric duplicates),
    which also bounds them: after candidate ``j`` the next identical train earns at most
    candidate ``j + 1``.
    """
    k = len(per_train)
    order = _order(per_train, names)
    lists = [per_train[i] for i in order]
    revs = [[r[0] for r in lst] for lst in lists]
    masks = [[r[1] for r in lst] for lst in lists]
    fulls = [(1 << len(lst)) - 1 for lst in lists]
    index_cache: dict[int, dict[int, int]] = {}
    hs_index: list[dict[int, int]] = [{}]  # the first train needs no index
    for lst in lists[1:]:
        if id(lst) not in index_cache:
            index_cache[id(lst)] = _hexside_index(lst, conn_mask)
        hs_index.append(index_cache[id(lst)])
    tops = [rv[0] if rv else 0 for rv in revs]
    same_prev = [i > 0 and names[order[i]] == names[order[i - 1]] for i in range(k)]
    run = [0] * k  # identical trains right after train i
    for i in range(k - 2, -1, -1):
        run[i] = run[i + 1] + 1 if same_prev[i + 1] else 0
    rest = [0] * (k + 1)
    for i in range(k - 1, -1, -1):
        rest[i] = rest[i + 1] + tops[i]
    extra: list[list[int] | None] = []
    for i in range(k):
        if not run[i]:
            extra.append(None)
            continue
        rv = revs[i]
        n = len(rv)
        extra.append([sum(rv[j + d] for d in range(1, run[i] + 1) if j + d < n) for j in range(n)])
    best = [-1]
    best_pick: list[list[int | None]] = [[None] * k]
    pick: list[int | None] = [None] * k

    def rec(i: int, conf: list[int], cur: int, prev_idx: int) -> None:
        if i == k:
            if cur > best[0]:
                best[0] = cur
                best_pick[0] = pick[:]
            return
        if same_prev[i] and prev_idx == -2:
            # an identical earlier train ran nothing: so does this one
            pick[i] = None
            rec(i + 1, conf, cur, -2)
            return
        rv = revs[i]
        free = fulls[i] & ~conf[i]
        if same_prev[i] and prev_idx >= 0:
            free &= ~((1 << (prev_idx + 1)) - 1)
        ex = extra[i]
        tail = rest[i + 1 + run[i]]
        last = i == k - 1
        while free:
            low = free & -free
            j = low.bit_length() - 1
            r = rv[j]
            if cur + r + tail + (ex[j] if ex is not None else 0) <= best[0]:
                break
            free ^= low
            pick[i] = j
            if last:
                best[0] = cur + r
                best_pick[0] = pick[:]
                break
            hs = _bits(masks[i][j])
            conf2 = conf[:]
            for t in range(i + 1, k):
                idx = hs_index[t]
                c = conf2[t]
                for h in hs:
                    c |= idx.get(h, 0)
                conf2[t] = c
            rec(i + 1, conf2, cur + r, j)
        pick[i] = None
        if cur + rest[i + 1] > best[0]:
            rec(i + 1, conf, cur, -2)

    rec(0, [0] * k, 0, -1)
    out: list[int | None] = [None] * k
    for pos, i in enumerate(order):
        out[i] = best_pick[0][pos]
    return out


def _to_route(g: RouteGraph, board: Board, train: str, phase: str, r: Candidate) -> Route:
    """Rebuild a candidate into a :class:`Route` (left part reversed, then t, then right)."""
    rseq, lseq = r[4], r[5]
    # find the start token: the common origin of both halves
    first_cid = (rseq or lseq)[0][1]
    u, v, _ = g.chains[first_cid]
    y0 = (rseq or lseq)[0][0]
    t = u if v == y0 else v
    # left part reversed: nodes from far end to t
    node_ids: list[int] = []
    conn_ids: list[int] = []
    if lseq:
        lnodes = [y for y, _ in lseq]
        lconns = [cid for _, cid in lseq]
        node_ids.extend(reversed(lnodes))
        conn_ids.extend(reversed(lconns))
    node_ids.append(t)
    for y, cid in rseq:
        conn_ids.append(cid)
        node_ids.append(y)
    return _route_from_ids(g, board, train, phase, node_ids, conn_ids)


def _route_from_ids(
    g: RouteGraph, board: Board, train: str, phase: str, node_ids: list[int], conn_ids: list[int]
) -> Route:
    sigs = []
    hexes = []
    stops = []
    for nid in node_ids:
        h, k = g.hexnode[nid]
        sig = f"{MAP.hexes[h].id}-{k}"
        sigs.append(sig)
        hexes.append(MAP.hexes[h].id)
        stops.append((sig, g.value[nid]))
    chains = []
    for i, cid in enumerate(conn_ids):
        u, _v, chain = g.chains[cid]
        hx = [MAP.hexes[x].id for x in chain]
        if node_ids[i] != u:
            hx.reverse()
        chains.append(tuple(hx))
    bonus = _bonus(g, node_ids)
    revenue = sum(v for _, v in stops) + sum(b for _, b in bonus)
    return Route(train, tuple(sigs), tuple(hexes), tuple(chains), tuple(stops), bonus, revenue)


def _bonus(g: RouteGraph, node_ids: Sequence[int]) -> tuple[tuple[str, int], ...]:
    fl = 0
    mx = 0
    lv = 0
    for nid in node_ids:
        f = g.flags[nid]
        fl |= f
        if f & F_LONDON:
            lv = g.value[nid]
        elif g.value[nid] > mx:
            mx = g.value[nid]
    out = []
    if fl & F_LUX:
        out.append(("lux", max(mx, lv)))
    if fl & F_LONDON and g.ls:
        out.append(("london", mx))
    if fl & F_NL and fl & F_NLP:
        out.append(("nl", NL_BONUS))
    return tuple((n, v) for n, v in out if v)


# ---------------------------------------------------------------- given routes (imports)


def value_route(
    board: Board,
    corp: str,
    train: str,
    phase: str,
    connections: Sequence[Sequence[str]],
    *,
    nodes: Sequence[str] | None = None,
    ferry: bool | None = None,
) -> Route:
    """Validate a given route (an 18xx.games ``run_routes`` route) and value it.

    Args:
        train: train id or name.
        connections: hex chains between consecutive stops (``[["E16", "F17", "F15"]]``).
        nodes: optional node signatures; if given they must be the route's stops (in either
            direction).

    Returns:
        the :class:`Route` with its revenue.

    Raises:
        MalformedAction: ``unknown_train``, ``unknown_hex``, ``bad_route`` (empty or broken
            chains).
        IllegalAction: ``no_track`` (no such track), ``track_reused``, ``node_revisited``,
            ``paris_twice``, ``blocked_city``, ``london_needs_ferry``, ``no_token``,
            ``too_long``, ``nodes_mismatch``.
    """
    name = train_name(train)
    phase_index(phase)
    if not connections or any(len(c) < 2 for c in connections):
        raise MalformedAction("bad_route", "a route needs at least one chain of two hexes")
    chains = [[MAP.index(x) for x in c] for c in connections]
    if ferry is None:
        ferry = corp in board.ferries
    g = build_graph(board, corp, phase, ferry=True, whole=True)
    node_ids, conn_ids = _match_chains(g, chains)
    _check_route(g, corp, name, node_ids, conn_ids, ferry)
    route = _route_from_ids(g, board, train, phase, node_ids, conn_ids)
    if nodes is not None:
        given = list(nodes)
        if sorted(given) != sorted(route.nodes):
            raise IllegalAction(
                "nodes_mismatch", f"the route's nodes {route.nodes} differ from {given}"
            )
    return route


def _match_chains(g: RouteGraph, chains: list[list[int]]) -> tuple[list[int], list[int]]:
    """Find the connection matching each hex chain and order them into one path.

    18xx.games stores a route's chains in no fixed order or direction (often outward from
    the token city), so the chains are matched as a set: each chain is a connection of the
    graph, and together they must form a single simple path. Returns (node ids, connection
    ids) in path order.
    """
    by_chain: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
    for cid, (u, v, chain) in enumerate(g.chains):
        by_chain.setdefault(chain, []).append((u, v, cid))
        by_chain.setdefault(chain[::-1], []).append((v, u, cid))
    options = []
    for c in chains:
        opts = by_chain.get(tuple(c))
        if not opts:
            hexes = "-".join(MAP.hexes[x].id for x in c)
            raise IllegalAction(
                "no_track", f"{SECTION}: no track the corporation can use runs {hexes}"
            )
        options.append(opts)

    def as_path(picked: list[tuple[int, int, int]]) -> tuple[list[int], list[int]] | str:
        """The chains as one path (node ids, connection ids), or why they are not one."""
        if len({cid for _, _, cid in picked}) != len(picked):
            return "track_reused"
        links: dict[int, list[tuple[int, int]]] = {}
        for a, b, cid in picked:
            links.setdefault(a, []).append((b, cid))
            links.setdefault(b, []).append((a, cid))
        if any(len(x) > 2 for x in links.values()):
            return "node_revisited"
        ends = sorted(n for n, x in links.items() if len(x) == 1)
        if len(ends) != 2:
            return "node_revisited"
        start = picked[0][0] if len(picked) == 1 else ends[0]
        node_ids = [start]
        conn_ids: list[int] = []
        prev_cid = -1
        cur = start
        while True:
            nxt = [(n, c) for n, c in links[cur] if c != prev_cid]
            if not nxt:
                break
            n, c = nxt[0]
            conn_ids.append(c)
            node_ids.append(n)
            prev_cid = c
            cur = n
        if len(conn_ids) != len(picked):
            return "no_track"
        return node_ids, conn_ids

    reasons: list[str] = []

    def rec(i: int, acc: list[tuple[int, int, int]]) -> tuple[list[int], list[int]] | None:
        if i == len(options):
            path = as_path(acc)
            if isinstance(path, str):
                reasons.append(path)
                return None
            return path
        seen = set()
        for a, b, cid in options[i]:
            if cid in seen:
                continue
            seen.add(cid)
            res = rec(i + 1, acc + [(a, b, cid)])
            if res is not None:
                return res
        return None

    found = rec(0, [])
    if found is None:
        code = reasons[0] if reasons else "no_track"
        text = {
            "track_reused": "a route may not use track twice",
            "node_revisited": "a route may not visit a stop twice",
            "no_track": "the route's chains do not join into one route",
        }[code]
        raise IllegalAction(code, f"{SECTION}: {text}")
    return found


def _check_route(
    g: RouteGraph, corp: str, name: str, node_ids: list[int], conn_ids: list[int], ferry: bool
) -> None:
    used = 0
    for cid in conn_ids:
        u, v, _ = g.chains[cid]
        m = next(m for y, m, c in g.adj[u] if c == cid)
        if m & used:
            raise IllegalAction("track_reused", f"{SECTION}: a route may not use track twice")
        used |= m
    vis = 0
    for nid in node_ids:
        b = g.visit_bit[nid]
        if vis & b:
            if g.hexnode[nid][0] == PARIS:
                raise IllegalAction("paris_twice", f"{SECTION}: a route may visit Paris only once")
            raise IllegalAction("node_revisited", f"{SECTION}: a route may not visit a stop twice")
        vis |= b
        if g.hexnode[nid][0] == LONDON and not ferry:
            raise IllegalAction(
                "london_needs_ferry",
                f"{SECTION}: only a corporation with a ferry marker runs to London",
            )
    for nid in node_ids[1:-1]:
        if not g.passable[nid]:
            h, k = g.hexnode[nid]
            raise IllegalAction(
                "blocked_city", f"{SECTION}: a route may not pass through {MAP.hexes[h].id}-{k}"
            )
    if not any(nid in g.token for nid in node_ids):
        raise IllegalAction(
            "no_token", f"{SECTION}: a route must include a city with a {corp} token"
        )
    mn, mc = TRAIN_LIMITS[name]
    n = len(node_ids)
    c = sum(1 for nid in node_ids if not g.town[nid])
    if n > mn or c > mc:
        raise IllegalAction("too_long", f"{TRAIN_SECTION}: a {name} train cannot run {n} stops")


def check_route_set(routes: Sequence[tuple[Route, int]]) -> None:
    """Raise ``IllegalAction`` ``track_shared`` if two routes share a hexside, or
    ``train_twice`` if a train runs twice. ``routes``: ``(route, hexside mask)`` pairs from
    :func:`route_hexsides`."""
    used = 0
    trains: set[str] = set()
    for route, mask in routes:
        if route.train in trains:
            raise IllegalAction("train_twice", f"{TRAIN_SECTION}: train {route.train} runs twice")
        trains.add(route.train)
        if mask & used:
            raise IllegalAction(
                "track_shared", f"{SECTION}: trains of a corporation may not share track"
            )
        used |= mask


def route_hexsides(route: Route) -> int:
    """Bitset of the hexsides a route's connections cross."""
    mask = 0
    for chain in route.connections:
        idx = [MAP.index(x) for x in chain]
        for a, b in zip(idx, idx[1:], strict=False):
            e = MAP.edge_between(a, b)
            if e < 0:
                raise MalformedAction(
                    "bad_route", f"{MAP.hexes[a].id} and {MAP.hexes[b].id} are not adjacent"
                )
            mask |= 1 << hexside(a, e)
    return mask


def value_routes(
    board: Board,
    corp: str,
    phase: str,
    routes: Sequence[dict[str, Any]],
    *,
    ferry: bool | None = None,
) -> RouteSet:
    """Validate and value a whole ``run_routes`` action: each route as :func:`value_route`
    (dicts with ``train``, ``connections``, optional ``nodes``), then no shared track and no
    train twice. Returns the :class:`RouteSet`."""
    valued = []
    for r in routes:
        route = value_route(
            board, corp, r["train"], phase, r["connections"], nodes=r.get("nodes"), ferry=ferry
        )
        valued.append((route, route_hexsides(route)))
    check_route_set(valued)
    return RouteSet(tuple(r for r, _ in valued), sum(r.revenue for r, _ in valued))


# ---------------------------------------------------------------- helpers for the game flow


def has_route(board: Board, corp: str, *, ferry: bool | None = None) -> bool:
    """True if ``corp`` can run some route: a token city joined by track to another node it
    may visit (the must-buy-a-train condition, spec "Trains and phases")."""
    g = build_graph(board, corp, "Yellow", ferry=ferry)
    return any(g.adj[t] for t in g.token)


def route_to_string(route: Route) -> str:
    """Compact text form ``"<train>:<chain>;<chain>"``, chains joined by ``,``
    (``"3-0:F15,G14;G14,H13,G12"``)."""
    return f"{route.train}:" + ";".join(",".join(c) for c in route.connections)


def parse_route_string(text: str) -> tuple[str, list[list[str]]]:
    """Inverse of :func:`route_to_string`: ``(train, connections)``.

    Raises:
        MalformedAction: ``bad_route`` if the text has no ``:`` or an empty chain.
    """
    train, sep, rest = text.partition(":")
    if not sep or not train or not rest:
        raise MalformedAction("bad_route", f"route text {text!r} is not '<train>:<chains>'")
    chains = [c.split(",") for c in rest.split(";")]
    if any(not all(c) for c in chains):
        raise MalformedAction("bad_route", f"route text {text!r} has an empty hex")
    return train, chains


def value_route_strings(
    board: Board, corp: str, phase: str, texts: Sequence[str], *, ferry: bool | None = None
) -> RouteSet:
    """:func:`value_routes` for routes in :func:`route_to_string` form."""
    routes = []
    for t in texts:
        train, chains = parse_route_string(t)
        routes.append({"train": train, "connections": chains})
    return value_routes(board, corp, phase, routes, ferry=ferry)
