"""Locomotives and factories (§7).

* The supply holds stacks #2..#9 (stack size = player count); a new locomotive is
  always the **lowest** number left (§7.1).
* A locomotive goes on an empty slot or replaces a **lower** one; the displaced one
  must go to another line (empty slot or replacing an even lower one), and only
  when every slot is full may it be flipped to its factory side and returned to
  the supply instead (§7.3). A line with an empty slot takes the new locomotive
  on that slot.
* A factory is the lowest locomotive flipped, or any returned factory; it goes in
  the leftmost empty gap, or replaces any factory once all five are full (§7.4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event
from services.transsib.engine import data as D

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.player import Player
    from services.transsib.engine.state import TranssibState

_SLOT_LINE = D.LOCO_SLOT_LINE
_LINE_SLOTS = D.LINE_SLOTS


def lowest_supply(supply: list[int]) -> int:
    """The lowest locomotive number left in the supply, 0 if none (§7.1)."""
    for n in range(1, D.MAX_LOCO + 1):
        if supply[n]:
            return n
    return 0


def targets(p: Player, number: int, from_line: int) -> list[int]:
    """Slots where locomotive ``number`` may go (§7.2, §7.3): per line other than
    ``from_line``, its first empty slot if it has one, else every slot holding a
    lower locomotive."""
    out = []
    locos = p.locos
    for line, slots in enumerate(_LINE_SLOTS):
        if line == from_line:
            continue
        empty = -1
        for s in slots:
            if locos[s] == 0:
                empty = s
                break
        if empty >= 0:
            out.append(empty)
            continue
        for s in slots:
            if locos[s] < number:
                out.append(s)
    return out


def target_refusal(p: Player, number: int, from_line: int, slot: int) -> tuple[str, str] | None:
    """Why locomotive ``number`` may not go on ``slot`` (None if it may)."""
    line = _SLOT_LINE[slot]
    if line == from_line:
        return (
            "same_line",
            f"§7.3: a displaced locomotive goes to another of your lines, not back to "
            f"{D.LINES[line]}",
        )
    held = p.locos[slot]
    if held == 0:
        return None
    for s in _LINE_SLOTS[line]:
        if p.locos[s] == 0:
            return (
                "use_empty_slot",
                f"§7.2: {D.LINES[line]} has an empty locomotive slot; the locomotive goes there",
            )
    if held >= number:
        return (
            "loco_not_lower",
            f"§7.3: a locomotive may only replace a lower one (#{number} onto #{held})",
        )
    return None


def has_empty_slot(p: Player) -> bool:
    """Whether any locomotive slot is empty (then a displaced one must be placed, §7.3)."""
    return 0 in p.locos


def can_take_loco(state: TranssibState, p: Player) -> bool:
    """Whether a new locomotive can be taken and placed now (§7.1, §7.2)."""
    n = lowest_supply(state.supply)
    return bool(n) and bool(targets(p, n, -1))


def can_take_factory(state: TranssibState) -> bool:
    """Whether any factory tile is available (a supply locomotive or a returned factory)."""
    return state.supply_total > 0 or state.pool_total > 0


def can_loco_and_factory(state: TranssibState, p: Player) -> bool:
    """Whether L-3 (one locomotive and one factory, any order) can be done in full
    (§5.2, seed p.10: not without a locomotive in the supply)."""
    n = lowest_supply(state.supply)
    if not n:
        return False
    tg = targets(p, n, -1)
    if not tg:
        return False
    if state.supply_total >= 2 or state.pool_total >= 1:
        return True
    # the last locomotive: a factory only appears if placing it returns a displaced one
    return not has_empty_slot(p) and any(p.locos[s] for s in tg)


def factory_tiles(state: TranssibState) -> list[int]:
    """Factory numbers that may be built: the lowest supply locomotive and every
    returned factory (§7.1), ascending."""
    n = lowest_supply(state.supply)
    pool = state.pool
    out = [m for m in range(1, D.MAX_LOCO + 1) if pool[m] or m == n]
    return out


def factory_gaps(p: Player) -> list[int]:
    """Gaps a new factory may go in: the leftmost empty one, else any (§7.4)."""
    for g, f in enumerate(p.factories):
        if not f:
            return [g]
    return list(range(D.NUM_GAPS))


def place(
    state: TranssibState, seat: int, p: Player, slot: int, number: int, events: list[Event]
) -> int:
    """Put ``number`` on ``slot``; returns the displaced number (0 if none)."""
    displaced = p.locos[slot]
    p.locos[slot] = number
    line = _SLOT_LINE[slot]
    events.append(
        {
            "type": "loco",
            "seat": seat,
            "number": number,
            "line": D.LINES[line],
            "slot": _LINE_SLOTS[line].index(slot),
            "displaced": displaced,
        }
    )
    return displaced


def build_factory(
    state: TranssibState, seat: int, p: Player, number: int, gap: int, events: list[Event]
) -> None:
    """Take factory ``number`` (a returned factory first, else the supply's lowest
    locomotive) and build it in ``gap``, returning a replaced factory (§7.4)."""
    if state.pool[number]:
        state.pool[number] -= 1
        state.pool_total -= 1
    else:
        state.supply[number] -= 1
        state.supply_total -= 1
    old = p.factories[gap]
    p.factories[gap] = number
    p.indcap = -1
    if old:
        state.pool[old] += 1
        state.pool_total += 1
    events.append({"type": "factory", "seat": seat, "number": number, "gap": gap, "replaced": old})


def return_as_factory(
    state: TranssibState, seat: int, number: int, no_factory: bool, events: list[Event]
) -> None:
    """Flip a displaced locomotive and return it to the supply as a factory (§7.3)."""
    if not no_factory:
        state.pool[number] += 1
        state.pool_total += 1
    events.append(
        {"type": "loco_to_factory", "seat": seat, "number": number, "removed": no_factory}
    )
