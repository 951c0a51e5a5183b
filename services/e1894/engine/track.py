"""Tile lays and upgrades: legality, enumeration, costs and the effect on the board.

Spec: the 1894 rules summary, "Hexes and the tile DSL" (upgrade legality), "Map, track and
tokens" (two lays per OR, terrain and special-city costs, Paris, Bruxelles, Lille, green
cities splitting into brown X16-X24, no green-city upgrade after the D train) and the private
companies' special lays (``data/privates.json``: LRC, GLG, SAC).

Rules implemented, for a lay of ``tile`` at ``rotation`` on ``hex`` by ``corp``:

* the hex exists on the map, may carry track (white/yellow/green/brown hexes only) and is not
  blocked by a private still owned by a player (I14 LRC, H17 GLG, D17 SAC);
* the tile's colour is the next one after the hex's current colour and is allowed in the
  phase; labels are equal; town count equal, city count equal unless the old tile has a label;
* every old path is kept by the rotated new tile (same edges, same kind of node);
* every exit of the new tile leads to a neighbour that may be entered from that side;
* green 14/15/619 may only become their split brown tiles (X16-X18 / X19-X21 / X22-X24), with
  exactly the old exits, and not at all from the Purple phase (the D train) on;
* green Paris (X4/X5) -> brown keeps PLM's city: same rotation if PLM's token (or its
  reservation) is in city 0, otherwise rotation + 3;
* the corporation's network touches one of the new exits, or it has a token (or a removed
  token waiting) in the hex; GLG/SAC lay in their hex without this;
* a copy of the tile is left in the supply, and the corporation has the cash for the cost
  (the ``upgrade=`` cost of the tile being replaced; LRC adds its 60);
* at most two lays per OR: the second may not be on the same hex, and may be an upgrade
  only if the first was not (LRC's lay is extra and yellow only).

Every refusal raises :class:`~services.kernel.engine.IllegalAction` with a code and the rule;
unknown hexes, tiles and rotations raise :class:`~services.kernel.engine.MalformedAction`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from functools import cache
from typing import Any

from services.kernel.engine import IllegalAction, MalformedAction

from .board import PARIS, Board
from .data import load as _load_json
from .graph import Network, reach
from .hexmap import MAP, opposite
from .tiles import (
    GREEN_CITY_SPLITS,
    NEXT_COLOR,
    PHASE_TILE_COLORS,
    SPLIT_TILES,
    TILE_NAMES,
    TILES,
    PathKey,
    Tile,
    get_tile,
    phase_index,
)

SECTION = 'e1894.md "Map, track and tokens"'

_PRIVATES = {p["sym"]: p for p in _load_json("privates.json")["privates"]}


def _ability(sym: str, kind: str) -> dict[str, Any]:
    ability: dict[str, Any]
    for ability in _PRIVATES[sym]["abilities"]:
        if ability["type"] == kind:
            return ability
    raise KeyError((sym, kind))


LRC_COST = int(_ability("LRC", "tile_lay")["cost"])
"""60: what the LRC's owning corporation pays for its extra yellow lay (``privates.json``).
Terrain costs of the hex are paid on top (assumption: the ability sets no ``free`` flag)."""
LRC_TILES: frozenset[str] = frozenset(_ability("LRC", "tile_lay")["tiles"])
TELEPORT: dict[str, tuple[int, frozenset[str]]] = {
    sym: (
        MAP.index(_ability(sym, "teleport")["hexes"][0]),
        frozenset(_ability(sym, "teleport")["tiles"]),
    )
    for sym in ("GLG", "SAC")
}
"""GLG / SAC -> (hex index, tiles allowed) of their lay without connection."""

SPECIAL_LAYS = ("LRC", "GLG", "SAC")

PURPLE = phase_index("Purple")

# a hex's exits may only point at neighbours that can be entered from that side
_PASSABLE: tuple[int, ...] = ()


def _passable_masks() -> tuple[int, ...]:
    out = []
    for h in MAP.hexes:
        mask = 0
        for e, nb in enumerate(h.neighbors):
            if nb < 0:
                continue
            other = MAP.hexes[nb]
            if other.category in ("white", "yellow"):
                mask |= 1 << e
            elif other.tile.rotated(0).edge_paths[opposite(e)]:
                mask |= 1 << e
        out.append(mask)
    return tuple(out)


_PASSABLE = _passable_masks()


def passable_edges(hex_id: str) -> list[int]:
    """Edges of the hex whose neighbour may be entered from this side (the engine's
    ``neighbors``: gray/red/blue hexes only where their printed track points back)."""
    mask = _PASSABLE[MAP.index(hex_id)]
    return [e for e in range(6) if mask >> e & 1]


@dataclasses.dataclass(frozen=True, slots=True)
class TileLay:
    """One legal lay.

    Attributes:
        hex: hex id (``"G6"``).
        tile: tile name (``"X4"``).
        rotation: 0..5.
        cost: francs the corporation pays (terrain / special-city upgrade cost, LRC's 60).
        upgrade: True if it replaces a yellow or later tile (not a lay on a printed white hex).
        special: ``""`` for an ordinary lay, else the private used (``LRC``, ``GLG``, ``SAC``).
    """

    hex: str
    tile: str
    rotation: int
    cost: int
    upgrade: bool
    special: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class LayResult:
    """What :func:`lay_tile` did.

    Attributes:
        hex: hex id.
        tile_id: the 18xx.games id of the laid copy (``"57-3"``).
        old_tile: name of the replaced tile (the hex id for a printed tile).
        cost: francs to pay.
        upgrade: as in :class:`TileLay`.
        removed: tokens removed by a green -> split brown upgrade, ``(corporation, city)``;
            they now wait on the board (:meth:`Board.waiting_tokens`) to be re-placed.
    """

    hex: str
    tile_id: str
    old_tile: str
    cost: int
    upgrade: bool
    removed: tuple[tuple[str, int], ...]


def _is_upgrade(old: Tile) -> bool:
    return old.color != "white"


@cache
def _static_options(
    hex_index: int, old_name: str, old_rot: int
) -> tuple[tuple[str, int, int], ...]:
    """Every (new tile name, rotation, exits mask) that passes the board-independent checks
    for a hex holding ``old_name`` at ``old_rot``: colour order, labels, town/city counts,
    kept paths, passable exits, the split-tile rules. Phase, supply, connectivity, the Paris
    rotation rule and costs are checked later."""
    info = MAP.hexes[hex_index]
    old = info.tile if old_name == info.id else TILES[old_name]
    old_rt = old.rotated(old_rot)
    nxt = NEXT_COLOR.get(old.color)
    if nxt is None:
        return ()
    passable = _PASSABLE[hex_index]
    old_keys = old_rt.path_keys()
    old_exits = old_rt.exits
    out: list[tuple[str, int, int]] = []
    for name in TILE_NAMES:
        new = TILES[name]
        if new.color != nxt or new.labels != old.labels or new.towns != old.towns:
            continue
        split_from = GREEN_CITY_SPLITS.get(old.name)
        if split_from is not None:
            if name not in split_from:
                continue
        elif name in SPLIT_TILES:
            continue
        elif new.cities != old.cities and not old.labels:
            continue
        for r in range(6):
            rt = new.rotated(r)
            mask = 0
            for e in rt.exits:
                mask |= 1 << e
            if mask & ~passable:
                continue
            if split_from is not None and rt.exits != old_exits:
                continue
            if not _keeps_paths(old_keys, rt.path_keys()):
                continue
            out.append((name, r, mask))
    return tuple(out)


def _keeps_paths(old_keys: list[PathKey], new_keys: list[PathKey]) -> bool:
    pool = list(new_keys)
    for k in old_keys:
        if k in pool:
            pool.remove(k)
        else:
            return False
    return True


@cache
def _canonical_rotations(name: str) -> frozenset[int]:
    return frozenset(TILES[name].distinct_rotations())


def _plm_city(board: Board) -> int:
    """0 when city 0 of the Paris tile holds PLM's token or its reservation, else 1 (the
    reference's test for the green -> brown Paris rotation)."""
    cities = board.tokens.get(PARIS) or []
    res = board.reserved.get(PARIS) or []
    if (cities and "PLM" in cities[0]) or (res and res[0] == "PLM"):
        return 0
    return 1


def _check_turn(
    hex_index: int, upgrade: bool, laid: Sequence[tuple[str, bool]], special: str
) -> None:
    if special == "LRC":
        if upgrade:
            raise IllegalAction(
                "lrc_yellow_only", "LRC: the private's extra lay is a yellow tile, not an upgrade"
            )
        return
    if len(laid) >= 2:
        raise IllegalAction(
            "no_lays_left", f"{SECTION}: a corporation lays at most two tiles per operating round"
        )
    if laid:
        first_hex, first_upgrade = laid[0]
        if MAP.index(first_hex) == hex_index:
            raise IllegalAction(
                "same_hex", f"{SECTION}: the second lay of a turn may not be on the same hex"
            )
        if upgrade and first_upgrade:
            raise IllegalAction(
                "second_upgrade",
                f"{SECTION}: the second lay may upgrade only if the first was not an upgrade",
            )


def _validate_basic(hex_id: str, tile_name: str, rotation: int) -> tuple[int, Tile]:
    hex_index = MAP.index(hex_id)
    tile = get_tile(tile_name)
    if not isinstance(rotation, int) or isinstance(rotation, bool) or not 0 <= rotation <= 5:
        raise MalformedAction("bad_rotation", f"rotation must be 0..5, got {rotation!r}")
    return hex_index, tile


def check_tile_lay(
    board: Board,
    corp: str,
    phase: str,
    hex_id: str,
    tile_name: str,
    rotation: int,
    *,
    laid: Sequence[tuple[str, bool]] = (),
    cash: int | None = None,
    blocked_hexes: Collection[str] = (),
    special: str = "",
    network: Network | None = None,
) -> TileLay:
    """Check one lay; return it with its cost, or raise.

    Args:
        board: the board (not changed).
        corp: the laying corporation (for GLG/SAC/LRC: the private's owning corporation).
        phase: current phase name (``"Green"``).
        hex_id, tile_name, rotation: the lay (tile name ``"57"``; strip copy suffixes with
            :func:`~.tiles.parse_tile_id`).
        laid: this turn's earlier ordinary lays of ``corp``, ``(hex id, was upgrade)`` in order.
        cash: the corporation's cash; ``None`` skips the cash check.
        blocked_hexes: hexes blocked by privates still owned by players (``"I14"``...).
        special: ``""``, ``"LRC"`` (the extra yellow lay), ``"GLG"`` or ``"SAC"`` (lay in its
            hex without connection; counts as one of the two lays).
        network: a precomputed :func:`~.graph.reach` of ``corp`` (optional, for speed).

    Returns:
        the :class:`TileLay`.

    Raises:
        MalformedAction: ``unknown_hex``, ``unknown_tile``, ``bad_rotation``,
            ``unknown_special``.
        IllegalAction: ``hex_not_upgradable``, ``hex_blocked``, ``wrong_color``,
            ``phase_color``, ``wrong_label``, ``wrong_stops``, ``lost_path``,
            ``exit_blocked``, ``split_only``, ``split_exits``, ``no_split_after_d``,
            ``paris_rotation``, ``not_connected``, ``no_tile_left``, ``insufficient_cash``,
            ``no_lays_left``, ``same_hex``, ``second_upgrade``, ``special_hex``,
            ``special_tile``, ``lrc_yellow_only``.
    """
    hex_index, tile = _validate_basic(hex_id, tile_name, rotation)
    if special and special not in SPECIAL_LAYS:
        raise MalformedAction("unknown_special", f"no special tile lay {special!r}")
    phase_index(phase)
    info = MAP.hexes[hex_index]
    old = board.tiles[hex_index]
    old_rt = board.rtiles[hex_index]
    upgrade = _is_upgrade(old)
    if info.category not in ("white", "yellow") or old.color not in NEXT_COLOR:
        raise IllegalAction(
            "hex_not_upgradable", f"{SECTION}: {hex_id} ({old.color}) can take no tile"
        )
    if hex_id in blocked_hexes:
        raise IllegalAction(
            "hex_blocked", f"privates: {hex_id} is blocked while its private is owned by a player"
        )
    _check_turn(hex_index, upgrade, laid, special)
    if special in TELEPORT:
        t_hex, t_tiles = TELEPORT[special]
        if hex_index != t_hex:
            raise IllegalAction(
                "special_hex", f"{special}: the private lays only in {MAP.hexes[t_hex].id}"
            )
        if tile_name not in t_tiles:
            raise IllegalAction(
                "special_tile", f"{special}: the private lays only tiles {sorted(t_tiles)}"
            )
    if special == "LRC" and tile_name not in LRC_TILES:
        raise IllegalAction("special_tile", f"LRC: the private lays only tiles {sorted(LRC_TILES)}")
    nxt = NEXT_COLOR[old.color]
    if tile.color != nxt:
        raise IllegalAction(
            "wrong_color",
            f'e1894.md "Hexes and the tile DSL": a {old.color} hex takes a {nxt} tile, '
            f"not {tile.color} {tile_name}",
        )
    if tile.color not in PHASE_TILE_COLORS[phase]:
        raise IllegalAction(
            "phase_color", f"{tile.color} tiles are not available in the {phase} phase"
        )
    if tile.labels != old.labels:
        raise IllegalAction(
            "wrong_label",
            f'e1894.md "Hexes and the tile DSL": labels must match ({sorted(old.labels)} vs '
            f"{sorted(tile.labels)})",
        )
    split_from = GREEN_CITY_SPLITS.get(old.name)
    if split_from is not None and phase_index(phase) >= PURPLE:
        raise IllegalAction(
            "no_split_after_d",
            f"{SECTION}: after the D train green 14/15/619 cities may not be upgraded",
        )
    if split_from is not None and tile_name not in split_from:
        raise IllegalAction(
            "split_only",
            f"{SECTION}: green {old.name} can only become {'/'.join(split_from)}",
        )
    if split_from is None and tile_name in SPLIT_TILES:
        raise IllegalAction(
            "split_only", f"{SECTION}: {tile_name} only upgrades a green 14, 15 or 619 city"
        )
    if tile.towns != old.towns or (
        split_from is None and not old.labels and tile.cities != old.cities
    ):
        raise IllegalAction(
            "wrong_stops",
            'e1894.md "Hexes and the tile DSL": the new tile must have the same towns and '
            "cities as the old one",
        )
    rt = tile.rotated(rotation)
    options = _static_options(hex_index, old.name, board.rotations[hex_index])
    mask = 0
    for e in rt.exits:
        mask |= 1 << e
    if not any(n == tile_name and r == rotation for n, r, _ in options):
        if mask & ~_PASSABLE[hex_index]:
            raise IllegalAction(
                "exit_blocked",
                f"{SECTION}: track may not lead off the map or into the side of a gray, red or "
                "blue hex",
            )
        if split_from is not None and rt.exits != old_rt.exits:
            raise IllegalAction(
                "split_exits", f"{SECTION}: the split tile must have exactly the old exits"
            )
        raise IllegalAction(
            "lost_path",
            'e1894.md "Hexes and the tile DSL": the new tile must keep every old path',
        )
    if hex_index == PARIS and old.color == "green":
        old_rot = board.rotations[hex_index]
        need = old_rot if _plm_city(board) == 0 else (old_rot + 3) % 6
        if rotation != need:
            raise IllegalAction(
                "paris_rotation",
                f"{SECTION}: upgrading green Paris must keep PLM's city (rotation {need})",
            )
    if special not in TELEPORT:
        net = network if network is not None else reach(board, corp)
        if not (
            net.connected(hex_index, mask)
            or any(c == corp and h == hex_index for c, h in board.waiting)
        ):
            raise IllegalAction(
                "not_connected",
                f"{SECTION}: the new track must connect to {corp}'s network (unreachable hex)",
            )
    if not board.free_copies[tile_name]:
        raise IllegalAction("no_tile_left", f"no tile {tile_name} is left in the supply")
    cost = old.upgrade_cost + (LRC_COST if special == "LRC" else 0)
    if cash is not None and cost > cash:
        raise IllegalAction(
            "insufficient_cash",
            f"{SECTION}: the lay costs {cost} and {corp} has {cash}",
            cost=cost,
            cash=cash,
        )
    return TileLay(hex_id, tile_name, rotation, cost, upgrade, special)


def legal_tile_lays(
    board: Board,
    corp: str,
    phase: str,
    *,
    laid: Sequence[tuple[str, bool]] = (),
    cash: int | None = None,
    blocked_hexes: Collection[str] = (),
    special: str = "",
    all_rotations: bool = False,
) -> list[TileLay]:
    """Every lay ``corp`` may make now, in map order then tile order then rotation.

    Arguments as for :func:`check_tile_lay`. With ``all_rotations=False`` (default) only one
    rotation of each set of rotations giving the same track is listed (e.g. tile 57 at 0, 1,
    2); :func:`check_tile_lay` accepts all of them.

    Returns:
        list of :class:`TileLay` (empty when no lay is possible).
    """
    pidx = phase_index(phase)
    colors = PHASE_TILE_COLORS[phase]
    if special and special not in SPECIAL_LAYS:
        raise MalformedAction("unknown_special", f"no special tile lay {special!r}")
    if special != "LRC" and len(laid) >= 2:
        return []
    net = None if special in TELEPORT else reach(board, corp)
    first_hex = MAP.index(laid[0][0]) if laid and special != "LRC" else -1
    no_upgrade = special == "LRC" or bool(laid and laid[0][1] and special != "LRC")
    out: list[TileLay] = []
    allowed: frozenset[str] | None
    if net is None:  # a teleport lay
        candidates = [TELEPORT[special][0]]
        allowed = TELEPORT[special][1]
    else:
        allowed = LRC_TILES if special == "LRC" else None
        candidates = [h for h in range(MAP.size) if net.edges[h] or h in net.token_hexes]
        for c, h in board.waiting:
            if c == corp and h not in candidates:
                candidates.append(h)
        candidates.sort()
    waiting_here = {h for c, h in board.waiting if c == corp}
    for h in candidates:
        if h == first_hex:
            continue
        info = MAP.hexes[h]
        if info.category not in ("white", "yellow") or info.id in blocked_hexes:
            continue
        old = board.tiles[h]
        if old.color not in NEXT_COLOR:
            continue
        upgrade = _is_upgrade(old)
        if upgrade and no_upgrade:
            continue
        split = old.name in GREEN_CITY_SPLITS
        if split and pidx >= PURPLE:
            continue
        cost = old.upgrade_cost + (LRC_COST if special == "LRC" else 0)
        if cash is not None and cost > cash:
            continue
        paris_need = -1
        if h == PARIS and old.color == "green":
            old_rot = board.rotations[h]
            paris_need = old_rot if _plm_city(board) == 0 else (old_rot + 3) % 6
        connected_any = net is None or h in net.token_hexes or h in waiting_here
        edges_mask = 0 if net is None else net.edges[h]
        for name, r, mask in _static_options(h, old.name, board.rotations[h]):
            tile = TILES[name]
            if tile.color not in colors:
                continue
            if allowed is not None and name not in allowed:
                continue
            if not board.free_copies[name]:
                continue
            if not all_rotations and r not in _canonical_rotations(name):
                continue
            if paris_need >= 0 and r != paris_need:
                continue
            if not connected_any and not edges_mask & mask:
                continue
            out.append(TileLay(info.id, name, r, cost, upgrade, special))
    return out


def lay_tile(
    board: Board,
    corp: str,
    phase: str,
    hex_id: str,
    tile_name: str,
    rotation: int,
    *,
    copy: int | None = None,
    laid: Sequence[tuple[str, bool]] = (),
    cash: int | None = None,
    blocked_hexes: Collection[str] = (),
    special: str = "",
) -> LayResult:
    """Check (:func:`check_tile_lay`, raising before any change) and make a lay.

    Args:
        copy: which copy of the tile to take (``57-3`` -> 3, as in imported actions); default
            the lowest free copy. Other arguments as for :func:`check_tile_lay`.

    Returns:
        a :class:`LayResult`. The caller pays ``cost`` and, after a split, lets the laying
        corporation re-place its token at once and the others at the end of the turn
        (:func:`.tokens.replacement_options`).

    Raises:
        as :func:`check_tile_lay`; ``MalformedAction`` ``unknown_tile_copy`` if ``copy`` is
        not a free copy.
    """
    lay = check_tile_lay(
        board,
        corp,
        phase,
        hex_id,
        tile_name,
        rotation,
        laid=laid,
        cash=cash,
        blocked_hexes=blocked_hexes,
        special=special,
    )
    if copy is not None and copy not in board.free_copies[tile_name]:
        raise MalformedAction("unknown_tile_copy", f"tile {tile_name}-{copy} is not in the supply")
    old_name = board.tile_name(hex_id)
    removed = board.put_tile(hex_id, tile_name, rotation, copy)
    return LayResult(hex_id, board.tile_id(hex_id), old_name, lay.cost, lay.upgrade, tuple(removed))


def upgrade_rotations(board: Board, hex_id: str, tile_name: str) -> list[int]:
    """Rotations at which ``tile_name`` fits the hex's current tile, ignoring phase, supply,
    connectivity and cost (for UIs and tests)."""
    h = MAP.index(hex_id)
    get_tile(tile_name)
    old = board.tiles[h]
    return [r for n, r, _ in _static_options(h, old.name, board.rotations[h]) if n == tile_name]


__all__ = [
    "LRC_COST",
    "LayResult",
    "TileLay",
    "check_tile_lay",
    "lay_tile",
    "legal_tile_lays",
    "passable_edges",
    "upgrade_rotations",
]
