"""Tiles of 1894: the tile DSL parser, rotation, revenue by phase and the tile supply.

Spec: the 1894 rules summary, "Hexes and the tile DSL"; data: ``data/tiles.json`` and
``data/map_hexes.json`` (their README explains the DSL).

A tile (or a preprinted hex) is a ``;``-separated list of parts ``type=key:value,...``:

* ``city=revenue:R[,slots:N]``, ``town=revenue:R``, ``offboard=revenue:R[,hide:1]`` are the
  *nodes* of the tile, numbered 0, 1, ... in order of definition (the 18xx.games "part index",
  used in city ids ``X16-0-1`` and node signatures ``G6-1``);
* ``path=a:X,b:Y`` joins two ends, an edge ``0..5`` or a node ``_k``;
* ``upgrade=cost:C,terrain:T``, ``label=P``, ``border=...``, ``icon=...``.

Internally a path end is one small int: an edge ``e`` is ``e`` (0..5) and node ``k`` is
``NODE_BASE + k``. Everything here is immutable and built once at import time.

>>> t = TILES["57"]
>>> [n.kind for n in t.nodes], t.color, sorted(t.rotated(1).exits)
(['city'], 'yellow', [1, 4])
"""

from __future__ import annotations

from services.kernel.engine import MalformedAction

from .data import load as _load_json  # the one loader of the packaged data files

NODE_BASE = 6
"""Path ends ``>= NODE_BASE`` are nodes (``NODE_BASE + k`` = node k); ``0..5`` are edges."""

COLORS = ("white", "yellow", "green", "brown", "gray")
"""Tile colours in upgrade order (``red``/``blue`` hexes are never upgraded)."""

NEXT_COLOR = {"white": "yellow", "yellow": "green", "green": "brown", "brown": "gray"}

PHASE_NAMES = ("Yellow", "Green", "Blue", "Brown", "Red", "Gray", "Purple")
"""Phase names in order (``data/phases.json``)."""


_PHASES_DATA = _load_json("phases.json")["phases"]
PHASE_TILE_COLORS: dict[str, tuple[str, ...]] = {p["name"]: tuple(p["tiles"]) for p in _PHASES_DATA}
"""Phase name -> tile colours allowed in that phase (``data/phases.json``)."""


def phase_index(phase: str) -> int:
    """0 for Yellow ... 6 for Purple.

    Raises:
        MalformedAction: ``unknown_phase`` for a name not in :data:`PHASE_NAMES`.
    """
    try:
        return PHASE_NAMES.index(phase)
    except ValueError:
        raise MalformedAction("unknown_phase", f"unknown phase {phase!r}") from None


def revenue_color(phase: str) -> str:
    """The colour whose revenues apply in ``phase``: the newest tile colour of the phase.

    A phase-dependent revenue ``yellow_30|brown_80`` is worth the value of the newest colour of
    the phase's tile list that the revenue map contains (spec "Hexes and the tile DSL").
    """
    phase_index(phase)
    return PHASE_TILE_COLORS[phase][-1]


class NodeSpec:
    """One revenue node of a tile: a city, a town or an off-board area.

    Attributes:
        kind: ``"city"``, ``"town"`` or ``"offboard"``.
        index: the node's part index on its tile (0-based, order of definition).
        revenue: colour -> revenue in francs (a fixed revenue is the same for every colour).
        slots: token slots (cities only; 0 for towns and off-boards).
    """

    __slots__ = ("kind", "index", "revenue", "slots", "_by_phase")

    def __init__(self, kind: str, index: int, revenue: dict[str, int], slots: int) -> None:
        self.kind = kind
        self.index = index
        self.revenue = revenue
        self.slots = slots
        self._by_phase = {p: self._value(p) for p in PHASE_NAMES}

    def _value(self, phase: str) -> int:
        if len(set(self.revenue.values())) == 1:
            return next(iter(self.revenue.values()))
        for color in reversed(PHASE_TILE_COLORS[phase]):
            if color in self.revenue:
                return self.revenue[color]
        return self.revenue.get("yellow", 0)

    def value(self, phase: str) -> int:
        """Revenue in francs in ``phase`` (e.g. London 30 until Brown, then 80)."""
        return self._by_phase[phase]

    def __repr__(self) -> str:
        return f"NodeSpec({self.kind}#{self.index} {self.revenue} slots={self.slots})"


def _parse_revenue(text: str) -> dict[str, int]:
    if "|" in text or "_" in text:
        out = {}
        for piece in text.split("|"):
            color, _, value = piece.partition("_")
            out[color] = int(value)
        return out
    flat = int(text)
    return {c: flat for c in ("yellow", "green", "brown", "gray", "diesel")}


PathKey = tuple[tuple[int, ...], tuple[str, ...]]
"""A path as an order-free key: ``(sorted edges, sorted node kinds)``
(:meth:`RotatedTile.path_keys`)."""


class RotatedTile:
    """A tile in one rotation: paths with rotated edges, and derived lookups.

    Attributes:
        tile: the :class:`Tile`.
        rotation: 0..5.
        paths: tuple of ``(a, b)`` path ends (edges rotated; see :data:`NODE_BASE`).
        exits: frozenset of edges any path touches.
        edge_paths: edge -> tuple of path indices touching that edge.
        node_paths: node index -> tuple of path indices touching that node.
        node_edges: node index -> frozenset of edges reached by a direct path from the node.
        path_sigs: multiset signature used for "old paths kept" checks (see :meth:`Tile`).
    """

    __slots__ = ("tile", "rotation", "paths", "exits", "edge_paths", "node_paths", "node_edges")

    def __init__(self, tile: Tile, rotation: int) -> None:
        self.tile = tile
        self.rotation = rotation

        def rot(end: int) -> int:
            return (end + rotation) % 6 if end < NODE_BASE else end

        self.paths = tuple((rot(a), rot(b)) for a, b in tile.base_paths)
        self.exits = frozenset(e for p in self.paths for e in p if e < NODE_BASE)
        edge_paths: dict[int, list[int]] = {e: [] for e in range(6)}
        node_paths: dict[int, list[int]] = {n: [] for n in range(len(tile.nodes))}
        node_edges: dict[int, set[int]] = {n: set() for n in range(len(tile.nodes))}
        for i, (a, b) in enumerate(self.paths):
            for end in (a, b):
                if end < NODE_BASE:
                    edge_paths[end].append(i)
                else:
                    node_paths[end - NODE_BASE].append(i)
            if a >= NODE_BASE and b < NODE_BASE:
                node_edges[a - NODE_BASE].add(b)
            if b >= NODE_BASE and a < NODE_BASE:
                node_edges[b - NODE_BASE].add(a)
        self.edge_paths = {e: tuple(v) for e, v in edge_paths.items()}
        self.node_paths = {n: tuple(v) for n, v in node_paths.items()}
        self.node_edges = {n: frozenset(v) for n, v in node_edges.items()}

    def path_keys(self) -> list[PathKey]:
        """Each path as an order-free key: ``(sorted edges, node kinds)``.

        Two paths have the same key when they join the same edges and the same kinds of node;
        the identity of a node (city 0 or city 1) is ignored. Used by the "old paths are kept"
        upgrade check (spec "Hexes and the tile DSL": old paths must be a subset of the new).
        """
        keys: list[PathKey] = []
        for a, b in self.paths:
            edges = tuple(sorted(e for e in (a, b) if e < NODE_BASE))
            kinds = tuple(
                sorted(self.tile.nodes[e - NODE_BASE].kind for e in (a, b) if e >= NODE_BASE)
            )
            keys.append((edges, kinds))
        return keys

    def __repr__(self) -> str:
        return f"RotatedTile({self.tile.name} r{self.rotation})"


class Tile:
    """An immutable tile definition (also used for each hex's preprinted tile).

    Attributes:
        name: ``"57"``, ``"X16"``; a preprinted tile is named after its hex (``"D9"``).
        color: ``white``, ``yellow``, ``green``, ``brown``, ``gray``, ``red`` or ``blue``.
        code: the raw DSL string.
        count: copies in the supply (0 for preprinted tiles).
        nodes: tuple of :class:`NodeSpec` in part-index order.
        base_paths: tuple of ``(a, b)`` path ends at rotation 0.
        labels: frozenset of labels (``P``, ``B``, ``L``).
        upgrade_cost: francs paid to lay a tile on / upgrade over this tile (0 if none).
        terrain: terrain name of the ``upgrade=`` part (``"water"``) or ``""``.
        borders: edges with a province border (no effect on play).
        icons: icon image names.
        preprinted: True for a hex's printed tile.
    """

    __slots__ = (
        "name",
        "color",
        "code",
        "count",
        "nodes",
        "base_paths",
        "labels",
        "upgrade_cost",
        "terrain",
        "borders",
        "icons",
        "preprinted",
        "_rotations",
        "city_indices",
        "town_indices",
        "offboard_indices",
    )

    def __init__(
        self, name: str, color: str, code: str, count: int = 0, preprinted: bool = False
    ) -> None:
        self.name = name
        self.color = color
        self.code = code
        self.count = count
        self.preprinted = preprinted
        nodes: list[NodeSpec] = []
        paths: list[tuple[int, int]] = []
        labels: set[str] = set()
        self.upgrade_cost = 0
        self.terrain = ""
        borders: list[int] = []
        icons: list[str] = []
        for part in code.split(";") if code else ():
            kind, _, rest = part.partition("=")
            kv: dict[str, str] = {}
            for item in rest.split(","):
                if not item:
                    continue
                key, _, value = item.partition(":")
                kv[key] = value
            if kind in ("city", "town", "offboard"):
                slots = int(kv.get("slots", "1")) if kind == "city" else 0
                nodes.append(NodeSpec(kind, len(nodes), _parse_revenue(kv["revenue"]), slots))
            elif kind == "path":
                paths.append((self._end(kv["a"], len(nodes)), self._end(kv["b"], len(nodes))))
            elif kind == "label":
                labels.add(rest)
            elif kind == "upgrade":
                self.upgrade_cost = int(kv.get("cost", "0"))
                self.terrain = kv.get("terrain", "")
            elif kind == "border":
                borders.append(int(kv["edge"]))
            elif kind == "icon":
                icons.append(kv.get("image", "").rsplit("/", 1)[-1])
            else:
                raise ValueError(f"tile {name}: unknown DSL part {part!r}")
        self.nodes = tuple(nodes)
        self.base_paths = tuple(paths)
        self.labels = frozenset(labels)
        self.borders = tuple(borders)
        self.icons = tuple(icons)
        self.city_indices = tuple(n.index for n in nodes if n.kind == "city")
        self.town_indices = tuple(n.index for n in nodes if n.kind == "town")
        self.offboard_indices = tuple(n.index for n in nodes if n.kind == "offboard")
        self._rotations = tuple(RotatedTile(self, r) for r in range(6))

    @staticmethod
    def _end(text: str, defined: int) -> int:
        if text.startswith("_"):
            k = int(text[1:])
            if k >= defined:
                raise ValueError(f"path end {text} refers to an undefined node")
            return NODE_BASE + k
        edge = int(text)
        if not 0 <= edge <= 5:
            raise ValueError(f"bad edge {edge}")
        return edge

    def rotated(self, rotation: int) -> RotatedTile:
        """This tile turned by ``rotation`` (0..5) sixth-turns: every edge ``e`` becomes
        ``(e + rotation) % 6``."""
        return self._rotations[rotation % 6]

    @property
    def cities(self) -> int:
        """Number of cities on the tile."""
        return len(self.city_indices)

    @property
    def towns(self) -> int:
        """Number of towns on the tile."""
        return len(self.town_indices)

    def distinct_rotations(self) -> tuple[int, ...]:
        """Rotations giving different path sets (e.g. 3 for tile 9), lowest first."""
        seen: dict[frozenset[frozenset[int]], int] = {}
        for r in range(6):
            key = frozenset(frozenset(p) for p in self._rotations[r].paths)
            seen.setdefault(key, r)
        return tuple(sorted(seen.values()))

    def __repr__(self) -> str:
        return f"Tile({self.name})"


def _load_tiles() -> tuple[dict[str, Tile], dict[str, tuple[str, ...]], frozenset[str]]:
    data = _load_json("tiles.json")
    tiles = {
        t["name"]: Tile(t["name"], t["color"], t["code"], int(t["count"])) for t in data["tiles"]
    }
    splits = {k: tuple(v) for k, v in data["green_city_to_brown_upgrades"].items()}
    paris = frozenset(data["paris_tiles_reserved_for_PLM_city0"])
    return tiles, splits, paris


TILES, GREEN_CITY_SPLITS, PARIS_TILES_RESERVED_FOR_PLM = _load_tiles()
"""``TILES``: tile name -> :class:`Tile` (62 names). ``GREEN_CITY_SPLITS``: green 14/15/619 ->
the brown split tiles it may become. ``PARIS_TILES_RESERVED_FOR_PLM``: Paris tiles whose city 0
is PLM's."""

SPLIT_TILES: frozenset[str] = frozenset(t for v in GREEN_CITY_SPLITS.values() for t in v)
"""The brown X16..X24 tiles, each two 1-slot cities of 40 (spec "Map, track and tokens")."""

SPLIT_SOURCE: dict[str, str] = {t: g for g, v in GREEN_CITY_SPLITS.items() for t in v}
"""Split brown tile -> the green tile it upgrades from."""

TILE_NAMES: tuple[str, ...] = tuple(TILES)
"""Tile names in data order (used for stable enumeration order)."""


def get_tile(name: str) -> Tile:
    """The supply tile called ``name`` (``"57"``, ``"X16"``).

    Raises:
        MalformedAction: ``unknown_tile``.
    """
    tile = TILES.get(name)
    if tile is None:
        raise MalformedAction("unknown_tile", f"there is no tile {name!r} in 1894")
    return tile


def parse_tile_id(tile_id: str) -> tuple[str, int | None]:
    """Split an 18xx.games tile id ``"57-3"`` into ``("57", 3)``; a bare name gives
    ``(name, None)``.

    Raises:
        MalformedAction: ``unknown_tile`` if the name is not a supply tile.
    """
    name, sep, copy = tile_id.rpartition("-")
    if sep and name in TILES and copy.isdigit():
        return name, int(copy)
    if tile_id in TILES:
        return tile_id, None
    raise MalformedAction("unknown_tile", f"there is no tile {tile_id!r} in 1894")
