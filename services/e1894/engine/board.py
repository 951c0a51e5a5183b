"""The mutable 1894 board: tile and rotation per hex, tokens per city slot, reservations,
tokens waiting to be re-placed after a city split, the tile supply and the ferry markers.

Spec: the 1894 rules summary, "Map, track and tokens" and "London, ferries and bonuses".

The board holds *facts only*; the rules that change it live in :mod:`.track` (tile lays),
:mod:`.tokens` (token placement) and :mod:`.routes`. Its mutators (:meth:`Board.put_tile`,
:meth:`Board.put_token`, ...) do **not** validate: call the ``check_*`` functions of those
modules first (they raise ``IllegalAction`` and leave the board untouched).

Hexes are stored by index (see :mod:`.hexmap`); the public methods take hex ids (``"G6"``).
City indices are the part indices of the tile (``X16-0-1`` is city 1 of tile ``X16-0``).

>>> b = Board.from_data()
>>> b.tile_name("E16"), b.tile_id("E16"), b.reservations("E16")
('E16', 'E16-9', ['Belge'])
>>> b2 = b.clone(); _ = b2.put_tile("E16", "57", 2); b.tile_name("E16"), b2.tile_id("E16")
('E16', '57-0')
"""

from __future__ import annotations

from typing import Any

from services.kernel.engine import MalformedAction

from .data import load as _load_json
from .hexmap import MAP
from .tiles import SPLIT_TILES, TILES, RotatedTile, Tile

PARIS = MAP.index("G6")
LONDON = MAP.index("A10")
LONDON_BONUS = MAP.index("A12")
"""A12: where the ferry markers lie and where LS puts its owner's free token."""

FERRY_MARKERS = int(_load_json("game.json")["ferry"]["markers"])
"""4 ferry markers (``data/game.json``)."""

CORPORATIONS: dict[str, dict[str, Any]] = {
    c["sym"]: c for c in _load_json("corporations.json")["corporations"]
}
"""Corporation symbol -> its ``data/corporations.json`` record."""


class Board:
    """One board position. Cheap to :meth:`clone`; equal boards give equal :meth:`to_json`.

    Attributes (indexed by hex index; treat as read-only outside this package):
        tiles: the current :class:`~.tiles.Tile` of each hex (the printed one until a lay).
        rotations: rotation 0..5 of each hex's tile.
        rtiles: the :class:`~.tiles.RotatedTile` of each hex (tile + rotation, for speed).
        copies: copy index of the laid supply tile (``57-3`` -> 3), ``-1`` for a printed tile.
        tokens: hex -> one list per city of its slots (corporation symbol or None). A slot list
            may be longer than the city's printed slots: after a split the engine adds a slot
            for a re-placed token.
        reserved: hex -> one entry per city: the corporation the city is reserved for, or None.
        hex_reserved: hex -> corporations whose reservation covers the whole hex (a split
            brown tile whose two cities were both open, spec "Green cities split").
        waiting: removed tokens waiting to be re-placed: list of ``(corporation, hex)`` in
            removal order.
        free_copies: tile name -> free copy indices in supply order (its length is the
            supply left; an upgraded tile's copy goes back at the end).
        ferries: corporations holding a ferry marker, in purchase order.
        token_memo: corporation -> whether it could token a city in reach, as last found
            at its token step (option ``reference_token_memo``): the reference engine keeps
            this answer with its network until the network is next cleared: a tile lay, a
            token placed by a choice (not a home token placed automatically), a ferry
            marker. A late corporation's home reservation does not clear it. Emptied by
            those changes here.
    """

    tiles: list[Tile]
    rotations: list[int]
    rtiles: list[RotatedTile]
    copies: list[int]
    tokens: dict[int, list[list[str | None]]]
    reserved: dict[int, list[str | None]]
    hex_reserved: dict[int, list[str]]
    waiting: list[tuple[str, int]]
    free_copies: dict[str, list[int]]
    ferries: list[str]
    token_memo: dict[str, bool]
    version: int

    __slots__ = tuple(__annotations__)  # the fields are the annotations above

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_data(cls) -> Board:
        """The board at the start of a game: printed tiles, full supply, home reservations
        (one city per home hex of every corporation that has fixed homes; PLM on Paris
        city 0), no tokens, 4 ferry markers on A12."""
        b = cls.__new__(cls)
        b.tiles = [h.tile for h in MAP.hexes]
        b.rotations = [0] * MAP.size
        b.rtiles = [h.tile.rotated(0) for h in MAP.hexes]
        b.copies = [-1] * MAP.size
        b.tokens = {}
        b.reserved = {}
        for h in MAP.hexes:
            n = len(h.tile.nodes)
            if h.tile.city_indices:
                b.tokens[h.index] = [
                    [None] * nd.slots if nd.kind == "city" else [] for nd in h.tile.nodes
                ]
                b.reserved[h.index] = [None] * n
        for sym, corp in CORPORATIONS.items():
            for coord in corp.get("home_coordinates", []):
                idx = MAP.index(coord)
                b.reserved[idx][int(corp.get("home_city_index", 0))] = sym
        b.hex_reserved = {}
        b.waiting = []
        b.free_copies = {name: list(range(t.count)) for name, t in TILES.items()}
        b.ferries = []
        b.token_memo = {}
        b.version = 0
        return b

    def clone(self) -> Board:
        """An independent copy (lists copied, immutable tiles shared)."""
        b = Board.__new__(Board)
        b.tiles = self.tiles[:]
        b.rotations = self.rotations[:]
        b.rtiles = self.rtiles[:]
        b.copies = self.copies[:]
        b.tokens = {h: [s[:] for s in cities] for h, cities in self.tokens.items()}
        b.reserved = {h: r[:] for h, r in self.reserved.items()}
        b.hex_reserved = {h: r[:] for h, r in self.hex_reserved.items()}
        b.waiting = self.waiting[:]
        b.free_copies = {k: v[:] for k, v in self.free_copies.items()}
        b.ferries = self.ferries[:]
        b.token_memo = dict(self.token_memo)
        b.version = self.version
        return b

    def to_json(self) -> dict[str, Any]:
        """Canonical JSON: laid tiles ``{hex: [tile id, rotation]}``, tokens ``{hex: [[slot
        contents per city]]}`` (hexes with at least one token), reservations, waiting tokens,
        supply counts ``{name: left}`` and ferry holders."""
        tiles = {}
        for h in MAP.hexes:
            i = h.index
            if self.copies[i] >= 0:
                tiles[h.id] = [f"{self.tiles[i].name}-{self.copies[i]}", self.rotations[i]]
        tokens = {
            MAP.hexes[i].id: [list(s) for s in cities]
            for i, cities in sorted(self.tokens.items())
            if any(x is not None for s in cities for x in s)
        }
        reserved = {
            MAP.hexes[i].id: list(r)
            for i, r in sorted(self.reserved.items())
            if any(x is not None for x in r)
        }
        return {
            "tiles": tiles,
            "tokens": tokens,
            "reserved": reserved,
            "hex_reserved": {
                MAP.hexes[i].id: list(r) for i, r in sorted(self.hex_reserved.items()) if r
            },
            "waiting": [[c, MAP.hexes[h].id] for c, h in self.waiting],
            "supply": {k: len(v) for k, v in self.free_copies.items()},
            "free_copies": {k: list(v) for k, v in self.free_copies.items()},
            "ferries": list(self.ferries),
            "token_memo": dict(sorted(self.token_memo.items())),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Board:
        """Inverse of :meth:`to_json`: ``Board.from_json(b.to_json()).to_json() == b.to_json()``."""
        b = cls.from_data()
        for coord, (tile_id, rot) in obj.get("tiles", {}).items():
            name, _, copy = tile_id.rpartition("-")
            i = MAP.index(coord)
            tile = TILES[name]
            b.tiles[i] = tile
            b.rotations[i] = int(rot)
            b.rtiles[i] = tile.rotated(int(rot))
            b.copies[i] = int(copy)
            if tile.city_indices:
                b.tokens[i] = [[None] * nd.slots if nd.kind == "city" else [] for nd in tile.nodes]
            else:
                b.tokens.pop(i, None)
        for coord, cities in obj.get("tokens", {}).items():
            b.tokens[MAP.index(coord)] = [list(s) for s in cities]
        b.reserved = {i: [None] * len(b.tiles[i].nodes) for i in b.tokens}
        for coord, r in obj.get("reserved", {}).items():
            b.reserved[MAP.index(coord)] = list(r)
        b.hex_reserved = {MAP.index(c): list(r) for c, r in obj.get("hex_reserved", {}).items()}
        b.waiting = [(c, MAP.index(h)) for c, h in obj.get("waiting", [])]
        if "free_copies" in obj:
            b.free_copies = {k: list(v) for k, v in obj["free_copies"].items()}
        b.ferries = list(obj.get("ferries", []))
        b.token_memo = dict(obj.get("token_memo", {}))
        return b

    new = from_data

    # ------------------------------------------------------------------ queries

    def tile(self, hex_id: str) -> Tile:
        """The :class:`~.tiles.Tile` now on ``hex_id`` (``MalformedAction`` ``unknown_hex``)."""
        return self.tiles[MAP.index(hex_id)]

    def tile_name(self, hex_id: str) -> str:
        """Tile name on the hex (``"57"``); a printed tile reports the hex id (``"D9"``), as in
        the traces."""
        return self.tiles[MAP.index(hex_id)].name

    def tile_id(self, hex_id: str) -> str:
        """18xx.games tile id: ``"57-3"`` for a laid tile, the printed id (``"D9-3"``) otherwise."""
        i = MAP.index(hex_id)
        if self.copies[i] < 0:
            return MAP.hexes[i].preprinted_tile_id
        return f"{self.tiles[i].name}-{self.copies[i]}"

    def tile_color(self, hex_id: str) -> str:
        """Colour of the hex's current tile (``white`` for an untouched printed hex; SQG's
        revenue follows G10: green 70, brown 100)."""
        return self.tiles[MAP.index(hex_id)].color

    def rotation(self, hex_id: str) -> int:
        """Rotation 0..5 of the hex's tile."""
        return self.rotations[MAP.index(hex_id)]

    def rtile(self, index: int) -> RotatedTile:
        """The rotated tile of hex ``index`` (internal, fast)."""
        return self.rtiles[index]

    def city_id(self, hex_id: str, city: int) -> str:
        """18xx.games city id ``"<tile id>-<city index>"`` (``"X16-0-1"``, ``"D9-3-0"``)."""
        return f"{self.tile_id(hex_id)}-{city}"

    def parse_city_id(self, city_id: str) -> tuple[str, int]:
        """``"X16-0-1"`` -> ``("D9", 1)``: the hex now holding that tile, and the city index.

        Raises:
            MalformedAction: ``unknown_city`` if no hex holds that tile or it has no such city.
        """
        tile_id, sep, part = city_id.rpartition("-")
        if sep and part.isdigit():
            for h in MAP.hexes:
                if self.tile_id(h.id) == tile_id:
                    tile = self.tiles[h.index]
                    k = int(part)
                    if k < len(tile.nodes) and tile.nodes[k].kind == "city":
                        return h.id, k
                    break
        raise MalformedAction("unknown_city", f"no city {city_id!r} on the board")

    def city_tokens(self, hex_id: str) -> list[list[str]]:
        """Per city of the hex, the corporations with a token there (empty slots left out)."""
        cities = self.tokens.get(MAP.index(hex_id))
        if not cities:
            return []
        return [[c for c in s if c is not None] for s in cities]

    def slots(self, hex_id: str, city: int) -> list[str | None]:
        """Copy of the slot list of one city (None = empty slot)."""
        cities = self.tokens.get(MAP.index(hex_id))
        if not cities or city >= len(cities):
            raise MalformedAction("unknown_city", f"{hex_id} has no city {city}")
        return list(cities[city])

    def reservations(self, hex_id: str) -> list[str]:
        """Corporations holding a reservation in the hex (city- or hex-level)."""
        i = MAP.index(hex_id)
        out = [c for c in self.reserved.get(i, []) if c is not None]
        out.extend(self.hex_reserved.get(i, []))
        return out

    def corporation_tokens(self, corp: str) -> list[tuple[str, int]]:
        """``(hex id, city index)`` of every token of ``corp`` on the map (A12 included), in
        hex order."""
        out = []
        for i, cities in self.tokens.items():
            for k, s in enumerate(cities):
                if corp in s:
                    out.extend([(MAP.hexes[i].id, k)] * s.count(corp))
        out.sort(key=lambda t: (MAP.index(t[0]), t[1]))
        return out

    def token_nodes(self, corp: str) -> list[tuple[int, int]]:
        """``(hex index, city index)`` of ``corp``'s tokens (internal, fast; A12 included)."""
        out = []
        for i, cities in self.tokens.items():
            for k, s in enumerate(cities):
                if corp in s:
                    out.append((i, k))
        return out

    def tokens_on_map(self, corp: str) -> int:
        """How many tokens ``corp`` has on the map (A12 included; waiting tokens excluded)."""
        return sum(s.count(corp) for cities in self.tokens.values() for s in cities)

    def waiting_tokens(self, corp: str | None = None) -> list[tuple[str, str]]:
        """Removed tokens waiting to be re-placed, ``(corporation, hex id)``, in order."""
        return [(c, MAP.hexes[h].id) for c, h in self.waiting if corp is None or c == corp]

    def supply_left(self, tile_name: str) -> int:
        """Copies of ``tile_name`` left in the supply (``MalformedAction`` ``unknown_tile``)."""
        if tile_name not in self.free_copies:
            raise MalformedAction("unknown_tile", f"there is no tile {tile_name!r} in 1894")
        return len(self.free_copies[tile_name])

    def has_ferry(self, corp: str) -> bool:
        """True if ``corp`` holds a ferry marker (may run to and through London)."""
        return corp in self.ferries

    def ferries_left(self) -> int:
        """Ferry markers still on A12 (4 at the start)."""
        return FERRY_MARKERS - len(self.ferries)

    def london_bonus_corporation(self) -> str | None:
        """The corporation whose token is on A12 (LS power), or None."""
        cities = self.tokens.get(LONDON_BONUS)
        if cities:
            for c in cities[0]:
                if c is not None:
                    return c
        return None

    # ------------------------------------------------------------------ mutators (no checks)

    def give_ferry(self, corp: str) -> None:
        """``corp`` takes a ferry marker from A12 (check: :func:`.tokens.check_ferry_purchase`)."""
        self.ferries.append(corp)
        self.token_memo.clear()
        self.version += 1

    def take_copy(self, name: str, copy: int | None = None) -> int:
        """Remove one copy of ``name`` from the supply: ``copy`` if given, else the first in
        supply order (the 18xx.games choice: copies in number order, returned ones last)."""
        free = self.free_copies[name]
        if copy is None:
            return free.pop(0)
        free.remove(copy)
        return copy

    def return_copy(self, name: str, copy: int) -> None:
        """Put copy ``copy`` of supply tile ``name`` back at the end of the supply order."""
        self.free_copies[name].append(copy)

    def put_tile(
        self, hex_id: str, tile_name: str, rotation: int, copy: int | None = None
    ) -> list[tuple[str, int]]:
        """Place a supply tile (no legality check): the old laid tile returns to the supply,
        tokens and reservations follow their city; on a green -> split brown upgrade all
        tokens are removed and put in :attr:`waiting` and city reservations become hex-level.

        Returns:
            the removed tokens as ``(corporation, old city index)`` (empty unless a split).
        """
        i = MAP.index(hex_id)
        tile = TILES[tile_name]
        old = self.tiles[i]
        old_rt = self.rtiles[i]
        if self.copies[i] >= 0:
            self.return_copy(old.name, self.copies[i])
        self.copies[i] = self.take_copy(tile_name, copy)
        new_rt = tile.rotated(rotation)
        self.tiles[i] = tile
        self.rotations[i] = rotation
        self.rtiles[i] = new_rt
        self.token_memo.clear()
        self.version += 1
        removed: list[tuple[str, int]] = []
        if not tile.city_indices:
            return removed
        old_tokens = self.tokens.get(i)
        old_res = self.reserved.get(i)
        new_tokens: list[list[str | None]] = [
            [None] * nd.slots if nd.kind == "city" else [] for nd in tile.nodes
        ]
        new_res: list[str | None] = [None] * len(tile.nodes)
        if tile_name in SPLIT_TILES and old.cities == 1:
            # green city splits in two: every token is removed, reservations cover the hex
            for k, s in enumerate(old_tokens or []):
                for c in s:
                    if c is not None:
                        removed.append((c, k))
                        self.waiting.append((c, i))
            for c in old_res or []:
                if c is not None:
                    self.hex_reserved.setdefault(i, []).append(c)
        else:
            mapping = city_mapping(old_rt, new_rt)
            for k, s in enumerate(old_tokens or []):
                target = mapping.get(k, k)
                dest = new_tokens[target]
                for c in s:
                    if c is None:
                        continue
                    try:
                        dest[dest.index(None)] = c
                    except ValueError:
                        dest.append(c)
            for k, c in enumerate(old_res or []):
                if c is not None:
                    new_res[mapping.get(k, k)] = c
            # PLM's Paris reservation is the printed G6's (city 0) and follows its city through
            # every upgrade like a token: the Paris tiles carry no reservation of their own
            # (reference engine, observed: X1 then X5 at +3 puts it on X5's city 1)
        self.tokens[i] = new_tokens
        self.reserved[i] = new_res
        return removed

    def put_token(
        self,
        corp: str,
        hex_id: str,
        city: int,
        slot: int | None = None,
        *,
        clears_graph: bool = True,
    ) -> int:
        """Put a token of ``corp`` in a city (no legality check): in ``slot`` if given and
        empty, else the first empty slot, else a new extra slot. Clears ``corp``'s reservation
        in the hex and one of its waiting entries for the hex. ``clears_graph=False`` (a home
        token placed without a choice) leaves :attr:`token_memo` as it is.

        Returns:
            the slot index used.
        """
        i = MAP.index(hex_id)
        s = self.tokens[i][city]
        if slot is not None and slot < len(s) and s[slot] is None:
            used = slot
        elif None in s:
            used = s.index(None)
        else:
            s.append(None)
            used = len(s) - 1
        s[used] = corp
        res = self.reserved.get(i)
        if res is not None:
            for k, c in enumerate(res):
                if c == corp:
                    res[k] = None
        hr = self.hex_reserved.get(i)
        if hr and corp in hr:
            hr.remove(corp)
        for w, (c, h) in enumerate(self.waiting):
            if c == corp and h == i:
                del self.waiting[w]
                break
        if clears_graph:
            self.token_memo.clear()
        self.version += 1
        return used

    def remove_token(self, corp: str, hex_id: str, city: int) -> None:
        """Take ``corp``'s token off a city (no check)."""
        s = self.tokens[MAP.index(hex_id)][city]
        s[s.index(corp)] = None
        self.version += 1

    def drop_waiting(self, corp: str, hex_id: str) -> None:
        """Forget a waiting token of ``corp`` in ``hex_id`` (it returns to the charter)."""
        i = MAP.index(hex_id)
        for w, (c, h) in enumerate(self.waiting):
            if c == corp and h == i:
                del self.waiting[w]
                self.version += 1
                return

    def reserve(self, corp: str, hex_id: str, city: int | None) -> None:
        """Reserve city ``city`` of the hex for ``corp`` (``None``: the whole hex)."""
        i = MAP.index(hex_id)
        if city is None:
            self.hex_reserved.setdefault(i, []).append(corp)
        else:
            self.reserved[i][city] = corp
        self.version += 1

    def settle_hex_reservations(self, hex_id: str) -> None:
        """A hex-level reservation settles on the split tile's city that is still open
        (spec "Green cities split": "later settles on whichever city is still open")."""
        i = MAP.index(hex_id)
        hr = self.hex_reserved.get(i)
        if not hr:
            return
        cities = self.tokens[i]
        open_cities = [k for k, s in enumerate(cities) if s and all(c is None for c in s)]
        if len(open_cities) == 1:
            k = open_cities[0]
            if self.reserved[i][k] is None:
                self.reserved[i][k] = hr.pop(0)
                self.version += 1


def city_mapping(old: RotatedTile, new: RotatedTile) -> dict[int, int]:
    """Old city index -> new city index for an upgrade that keeps the number of cities:
    each old city goes to the new city whose exits contain its exits (by index when the old
    city has no track, e.g. a printed city)."""
    out: dict[int, int] = {}
    for k in old.tile.city_indices:
        edges = old.node_edges[k]
        if not edges:
            continue
        for j in new.tile.city_indices:
            if edges <= new.node_edges[j]:
                out[k] = j
                break
    return out
