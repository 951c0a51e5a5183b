"""A corporation's track network: which nodes, hexes and hex edges it can reach.

Spec: the 1894 rules summary, "Map, track and tokens" (tile lays and tokens must connect to
the corporation's network) and "London, ferries and bonuses" (London can be run to or through
only with a ferry marker).

:func:`reach` is the network for tile lays and tokens, found as the reference engine
(18xx.games) finds it: from each token separately, a depth-first walk along track that

* enters each node at most once and walks each path at most once per token (errata A7: no
  reversing through a city or town, no track segment reused);
* never crosses a hexside that the walk in progress has already left a hex by (a counter of
  the hexsides on the walk's current stack): a hex side reached only by a walk that would
  cross the same hexside twice is *not* in the network (differential runs, "tile-lay
  network");
* forgets the paths and nodes walked beyond a *converging exit* (an edge two paths of one
  tile share, junction tiles 23-31, 39-47, 624...) once it backs out of them, so another
  branch of the walk may take them again;
* takes the paths of a node, and the paths at a hex side, in the tile's path order.

Because paths and nodes are remembered, the order of the walk decides what is reached; it is
the order of the tile definitions (the same DSL strings as the reference). A node stops the
walk when it is an off-board area, a city whose slots are all filled by other corporations, or
London for a corporation without a ferry marker; such a node is still *reached* (a route or a
token may end there), except London without a ferry, which is not reached at all.

:func:`route_reach` is the looser flood fill used for the candidate nodes of routes.

>>> from .board import Board
>>> net = reach(Board.from_data(), "Belge")
>>> sorted(net.nodes)   # no token yet: nothing is reachable
[]
"""

from __future__ import annotations

from .board import LONDON, LONDON_BONUS, Board
from .hexmap import MAP, opposite
from .tiles import NODE_BASE

_NEIGHBORS = tuple(h.neighbors for h in MAP.hexes)


def city_blocks(board: Board, hex_index: int, city: int, corp: str) -> bool:
    """True if the city is full of other corporations' tokens (``corp`` has none there), so
    ``corp``'s trains and network may end at it but not pass through it."""
    cities = board.tokens.get(hex_index)
    if not cities:
        return False
    s = cities[city]
    if not s or corp in s:
        return False
    return None not in s


class Network:
    """What one corporation reaches on one board.

    Attributes:
        nodes: set of ``(hex index, node index)`` reached.
        edges: list (per hex index) of a 6-bit mask of the hex's edges the network touches,
            from inside the hex or from the neighbour across the edge. A tile lay is connected
            when one of its exits is in this mask.
        token_hexes: hex indices where the corporation has a token (any exit is connected).
        hexes: set of hex indices where the network has track or a reached node.
    """

    __slots__ = ("nodes", "edges", "token_hexes", "hexes")

    def __init__(self) -> None:
        self.nodes: set[tuple[int, int]] = set()
        self.edges: list[int] = [0] * MAP.size
        self.token_hexes: set[int] = set()
        self.hexes: set[int] = set()

    def connected(self, hex_index: int, exits_mask: int) -> bool:
        """True if a tile with these exits on this hex joins the network."""
        return hex_index in self.token_hexes or bool(self.edges[hex_index] & exits_mask)


def route_reach(
    board: Board, corp: str, *, ferry: bool | None = None, through_blocked: bool = False
) -> Network:
    """Every node ``corp``'s trains could reach: a flood fill over ``(hex, entry edge)``
    states from its tokens that never leaves a node along the path it came in on (errata A7).

    A superset of :func:`reach` (it does not limit a walk to one crossing of each hexside);
    the route search (:mod:`.routes`) takes its candidate nodes from it and checks every route
    itself.

    Args:
        board: the board.
        corp: corporation symbol.
        ferry: whether London may be entered; default: ``board.has_ferry(corp)``.
        through_blocked: walk on through full cities too (used to name the broken rule when
            validating a given route; never for legality of lays and tokens).

    Returns:
        a :class:`Network`.
    """
    if ferry is None:
        ferry = corp in board.ferries
    net = Network()
    rtiles = board.rtiles
    tokens = board.tokens
    edges = net.edges
    seen_nodes = net.nodes
    seen_entries: set[tuple[int, int]] = set()
    # node stack entries: (hex, node, the path it was reached along; -1 for a token). Leaving
    # a node along a path does not depend on how it was reached, so each node remembers the
    # bit set of the paths it has been left along and leaves along each one once.
    left: dict[tuple[int, int], int] = {}
    node_stack: list[tuple[int, int, int]] = []
    starts: set[tuple[int, int]] = set()
    for h, k in board.token_nodes(corp):
        if h == LONDON_BONUS:
            continue
        net.token_hexes.add(h)
        node_stack.append((h, k, -1))
        starts.add((h, k))
    entry_stack: list[tuple[int, int]] = []

    while node_stack or entry_stack:
        while node_stack:
            h, k, via = node_stack.pop()
            if h == LONDON and not ferry:
                continue
            key = (h, k)
            done = left.get(key)
            if done is None:
                done = 0
                seen_nodes.add(key)
                net.hexes.add(h)
                if key not in starts:
                    nd = board.rtiles[h].tile.nodes[k]
                    if nd.kind == "offboard":
                        left[key] = -1  # a walk ends here
                        continue
                    if nd.kind == "city" and not through_blocked:
                        s = tokens[h][k] if h in tokens else None
                        if s and corp not in s and None not in s:
                            left[key] = -1
                            continue
            elif done < 0:
                continue
            rt = rtiles[h]
            for pi in rt.node_paths[k]:
                bit = 1 << pi
                if pi == via or done & bit:
                    continue  # never back along the track the walk came in on
                done |= bit
                a, b = rt.paths[pi]
                other = b if a == NODE_BASE + k else a
                if other >= NODE_BASE:
                    node_stack.append((h, other - NODE_BASE, pi))
                else:
                    edges[h] |= 1 << other
                    nb = _NEIGHBORS[h][other]
                    if nb >= 0:
                        entry_stack.append((nb, opposite(other)))
            left[key] = done
        while entry_stack:
            h, e = entry_stack.pop()
            if (h, e) in seen_entries:
                continue
            seen_entries.add((h, e))
            edges[h] |= 1 << e
            rt = rtiles[h]
            for pi in rt.edge_paths[e]:
                a, b = rt.paths[pi]
                other = b if a == e else a
                net.hexes.add(h)
                if other >= NODE_BASE:
                    if h == LONDON and not ferry:
                        continue
                    node_stack.append((h, other - NODE_BASE, pi))
                else:
                    edges[h] |= 1 << other
                    nb = _NEIGHBORS[h][other]
                    if nb >= 0:
                        edges[nb] |= 1 << opposite(other)
                        entry_stack.append((nb, opposite(other)))
    return net


def reach(board: Board, corp: str, *, ferry: bool | None = None) -> Network:
    """``corp``'s network for tile lays and tokens, walked as the reference engine walks it
    (see the module docstring; errata A7 and the differential runs).

    Args:
        board: the board.
        corp: corporation symbol.
        ferry: whether London may be entered; default: ``board.has_ferry(corp)``.

    Returns:
        a :class:`Network`.
    """
    return _walk(board, corp, ferry)[0]


def route_available(board: Board, corp: str, *, ferry: bool | None = None) -> bool:
    """The reference engine's test for a route step (and for the forced train purchase):
    the walk of :func:`reach` from one of ``corp``'s tokens meets at least two revenue
    locations (cities, towns, off-board areas), counting the token's own city, cities full
    of other corporations and London even without a ferry marker (where the walk stops). A
    corporation may so have a route step without any route its trains can run (then it runs
    none: revenue 0)."""
    return any(len(found) >= 2 for found in _walk(board, corp, ferry)[1])


def _walk(
    board: Board, corp: str, ferry: bool | None
) -> tuple[Network, list[set[tuple[int, int]]]]:
    """The network and, per token, the nodes its own walk met (London included)."""
    if ferry is None:
        ferry = corp in board.ferries
    net = Network()
    per_token: list[set[tuple[int, int]]] = []
    local: set[tuple[int, int]] = set()
    rtiles = board.rtiles
    tokens = board.tokens
    edges = net.edges
    nodes = net.nodes
    hexes = net.hexes
    neighbors = _NEIGHBORS
    starts = [(h, k) for h, k in board.token_nodes(corp) if h != LONDON_BONUS]
    for h, k in starts:
        net.token_hexes.add(h)
        hexes.add(h)
        nodes.add((h, k))
    # hexsides the walk in progress has left a hex by, keyed hex * 6 + edge
    counter = [0] * (len(rtiles) * 6)
    node_base = NODE_BASE

    def stops(h: int, k: int) -> bool:
        # a node the walk reaches but does not walk on from (the reference's "blocks")
        if h == LONDON:
            return not ferry
        kind = rtiles[h].tile.nodes[k].kind
        if kind == "offboard":
            return True
        if kind != "city":
            return False
        cities = tokens.get(h)
        s = cities[k] if cities else None
        if not s:
            return False
        return corp not in s and None not in s

    vnodes: set[tuple[int, int]] = set()
    vpaths: set[int] = set()

    def walk_node(h: int, k: int, conv: bool) -> None:
        key = (h, k)
        if key in vnodes:
            return
        vnodes.add(key)
        for pi in rtiles[h].node_paths[k]:
            walk_path(h, pi, -1, conv, key, conv)
        if conv:
            vnodes.discard(key)

    def walk_path(
        h: int, pi: int, skip: int, conv: bool, origin: tuple[int, int], origin_conv: bool
    ) -> None:
        pk = h * 64 + pi
        if pk in vpaths:
            return
        rt = rtiles[h]
        a, b = rt.paths[pi]
        if (a < node_base and counter[h * 6 + a]) or (b < node_base and counter[h * 6 + b]):
            return
        vpaths.add(pk)
        hexes.add(h)
        for end in (a, b):
            if end < node_base:
                edges[h] |= 1 << end
                nb = neighbors[h][end]
                if nb >= 0:
                    edges[nb] |= 1 << opposite(end)
        for end in (a, b):
            if end >= node_base:
                nk = (h, end - node_base)
                local.add(nk)
                if h == LONDON and not ferry:
                    continue
                nodes.add(nk)
                if nk != origin and not stops(h, nk[1]):
                    walk_node(h, nk[1], origin_conv or conv)
        for end in (a, b):
            if end >= node_base or end == skip:
                continue
            nb = neighbors[h][end]
            if nb < 0:
                continue
            ce = h * 6 + end
            counter[ce] += 1
            ne = opposite(end)
            nconv = conv or len(rt.edge_paths[end]) > 1
            for npi in rtiles[nb].edge_paths[ne]:
                walk_path(nb, npi, ne, nconv, origin, origin_conv)
            counter[ce] -= 1
        if conv:
            vpaths.discard(pk)

    for start in starts:
        vnodes = {s for s in starts if s != start}
        vpaths = set()
        local = set()
        walk_node(start[0], start[1], False)
        per_token.append(local)
    return net, per_token
