"""The 1894 map: hex coordinates, neighbours per edge and each hex's printed tile.

Spec: the 1894 rules summary, "Hexes and the tile DSL"; data: ``data/map_hexes.json``.

Coordinates are ``<row letter><column number>`` (``G6``). For the pointy layout a coordinate
maps to doubled coordinates ``x = number - 1``, ``y = row index`` and the neighbour across
edge ``e`` is at ``(x + dx, y + dy)`` with :data:`EDGE_OFFSETS`. Edge ``e`` of a hex faces edge
``(e + 3) % 6`` of its neighbour.

Hexes are numbered ``0..75`` in data order (``MAP.index("G6")``); the immutable
:data:`MAP` is loaded once and shared by every board.

>>> MAP.neighbor_id("G6", 4), MAP.neighbor_id("G6", 1)
('G8', 'G4')
"""

from __future__ import annotations

from services.kernel.engine import MalformedAction

from .data import load as _load_json
from .tiles import Tile

EDGE_OFFSETS: tuple[tuple[int, int], ...] = ((-1, 1), (-2, 0), (-1, -1), (1, -1), (2, 0), (1, 1))
"""Edge -> (dx, dy) in doubled coordinates: 0 SW, 1 W, 2 NW, 3 NE, 4 E, 5 SE."""

EDGE_NAMES = ("SW", "W", "NW", "NE", "E", "SE")

PLAIN_COLORS = frozenset({"white", "yellow", "green", "brown", "gray"})


def opposite(edge: int) -> int:
    """The neighbour's edge facing ``edge``."""
    return (edge + 3) % 6


class HexInfo:
    """One hex of the map (immutable).

    Attributes:
        id: ``"G6"``.
        index: 0-based index in data order.
        x, y: doubled coordinates.
        category: colour of the printed hex (``white``, ``yellow``, ``gray``, ``red``, ``blue``).
        name: location name (``"Paris"``) or ``""``.
        tile: the printed :class:`~.tiles.Tile` (named after the hex, e.g. ``"D9"``).
        preprinted_tile_id: the 18xx.games id of the printed tile (``"D9-3"``).
        neighbors: tuple of 6 hex indices (``-1`` = off the map), one per edge.
        homes: tuple of ``(corporation, city index)`` whose home this is.
        blocked_by: privates that block the hex while a player owns them (``LRC`` on I14...).
        late_candidate: ``"LF"``/``"LB"`` if a late corporation may choose it as home, else ``""``.
    """

    id: str
    index: int
    x: int
    y: int
    category: str
    name: str
    tile: Tile
    preprinted_tile_id: str
    neighbors: tuple[int, ...]
    homes: tuple[tuple[str, int], ...]
    blocked_by: tuple[str, ...]
    late_candidate: str

    __slots__ = tuple(__annotations__)  # the fields are the annotations above

    def __repr__(self) -> str:
        return f"HexInfo({self.id})"


class HexMap:
    """The whole map (immutable, shared).

    Attributes:
        hexes: tuple of :class:`HexInfo` by index.
        by_id: hex id -> :class:`HexInfo`.
        size: number of hexes.
    """

    def __init__(self) -> None:
        data = _load_json("map_hexes.json")
        offsets = {int(k): (v["dx"], v["dy"]) for k, v in data["direction_offsets"].items()}
        if tuple(offsets[e] for e in range(6)) != EDGE_OFFSETS:
            raise ValueError("map_hexes.json direction offsets differ from EDGE_OFFSETS")
        hexes: list[HexInfo] = []
        for i, h in enumerate(data["hexes"]):
            info = HexInfo()
            info.id = h["coord"]
            info.index = i
            info.x, info.y = self.coord_to_xy(h["coord"])
            if (info.x, info.y) != (h["x"], h["y"]):
                raise ValueError(f"{info.id}: coordinates differ from data")
            info.category = h["category"]
            info.name = h.get("location_name") or ""
            info.tile = Tile(h["coord"], h["category"], h["code"], preprinted=True)
            info.preprinted_tile_id = h["preprinted_tile_id"]
            info.homes = tuple((x["corporation"], int(x["city"])) for x in h.get("home_of", []))
            info.blocked_by = tuple(h.get("blocked_by_private_while_player_owned", []))
            info.late_candidate = h.get("late_corporation_home_candidate") or ""
            hexes.append(info)
        self.hexes: tuple[HexInfo, ...] = tuple(hexes)
        self.by_id: dict[str, HexInfo] = {h.id: h for h in hexes}
        by_xy = {(h.x, h.y): h.index for h in hexes}
        for h in hexes:
            h.neighbors = tuple(by_xy.get((h.x + dx, h.y + dy), -1) for dx, dy in EDGE_OFFSETS)
        for h, raw in zip(hexes, data["hexes"], strict=True):
            expect = {int(k): v for k, v in raw["neighbors"].items()}
            got = {e: hexes[n].id for e, n in enumerate(h.neighbors) if n >= 0}
            if expect != got:
                raise ValueError(f"{h.id}: neighbours differ from data: {got} vs {expect}")
        self.size = len(hexes)

    @staticmethod
    def coord_to_xy(coord: str) -> tuple[int, int]:
        """``"G6"`` -> ``(5, 6)`` (doubled coordinates ``x = number - 1``, ``y = row``)."""
        return int(coord[1:]) - 1, ord(coord[0]) - ord("A")

    def index(self, hex_id: str) -> int:
        """Index of a hex id.

        Raises:
            MalformedAction: ``unknown_hex`` for an id that is not on the map.
        """
        h = self.by_id.get(hex_id) if isinstance(hex_id, str) else None
        if h is None:
            raise MalformedAction("unknown_hex", f"there is no hex {hex_id!r} on the 1894 map")
        return h.index

    def get(self, hex_id: str) -> HexInfo:
        """The :class:`HexInfo` of a hex id (raises ``MalformedAction`` ``unknown_hex``)."""
        return self.hexes[self.index(hex_id)]

    def neighbor(self, index: int, edge: int) -> int:
        """Index of the hex across ``edge`` of hex ``index``, or ``-1`` off the map."""
        return self.hexes[index].neighbors[edge]

    def neighbor_id(self, hex_id: str, edge: int) -> str | None:
        """Id of the hex across ``edge`` of ``hex_id``, or None off the map."""
        n = self.hexes[self.index(hex_id)].neighbors[edge]
        return self.hexes[n].id if n >= 0 else None

    def edge_between(self, a: int, b: int) -> int:
        """The edge of hex ``a`` facing adjacent hex ``b``, or ``-1`` if not adjacent."""
        nb = self.hexes[a].neighbors
        for e in range(6):
            if nb[e] == b:
                return e
        return -1


MAP = HexMap()
"""The one shared map."""

HEXSIDE_COUNT: int
_HEXSIDE: dict[tuple[int, int], int] = {}


def _number_hexsides() -> int:
    n = 0
    for h in MAP.hexes:
        for e in range(6):
            nb = h.neighbors[e]
            key = (h.index, e)
            if key in _HEXSIDE:
                continue
            _HEXSIDE[key] = n
            if nb >= 0:
                _HEXSIDE[(nb, opposite(e))] = n
            n += 1
    return n


HEXSIDE_COUNT = _number_hexsides()


def hexside(index: int, edge: int) -> int:
    """A unique integer for the hexside at ``edge`` of hex ``index`` (shared with the
    neighbour's facing edge). Used for the track-disjointness bitsets of routes."""
    return _HEXSIDE[(index, edge)]
