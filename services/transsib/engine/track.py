"""Track building (§5.1, §6.1, §6.3, §6.5).

* A colour's first step puts its marker on space 1; later steps move it one space.
* Markers only move onto empty spaces and never catch up with or overtake the
  marker of the colour ahead, so a line always reads black > grey > brown >
  natural > white from the front (option ``track_colour_order_strict``; when it is
  off a marker may catch up with the marker ahead, never pass it). The functions
  below take the option as ``lag``: how many spaces a marker stays behind the one
  ahead at least (1 strict, 0 otherwise; ``Rules.track_gap``).
* A colour needs to be unlocked (black marker on Trans-Siberian spaces 2/6/10/15)
  and printed on the line (TS 5 colours, St Petersburg 4, Kiev 3).
* Special spaces fire once when the trigger marker (and, where marked, the
  locomotive reach) reaches them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event
from services.transsib.engine import data as D
from services.transsib.engine.actions import TRACK
from services.transsib.engine.player import NO_CAP, Player

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_LEN = D.LINE_LENGTH
_LINE_MASK = D.LINE_COLOURS_MASK
_UNLOCKS = D.UNLOCKS
_NLINES = len(D.LINES)


def can_step(p: Player, line: int, colour: int, lag: int = 1) -> bool:
    """Whether ``colour`` may take one step on ``line`` now (§5.1, §6.1, §6.3)."""
    if not (p.unlocked >> colour & 1) or not (_LINE_MASK[line] >> colour & 1):
        return False
    base = line * 5
    new = p.pos[base + colour] + 1
    if colour == 0:
        return new <= _LEN[line]
    return new + lag <= p.pos[base + colour - 1]


def step_refusal(p: Player, line: int, colour: int, lag: int = 1) -> tuple[str, str] | None:
    """Why one step is refused, as ``(code, reason)``; None if it is legal."""
    name = D.COLOURS[colour]
    if not (_LINE_MASK[line] >> colour & 1):
        return (
            "colour_not_on_line",
            f"§6.1: the {D.LINES[line]} line takes no {name} rails",
        )
    if not (p.unlocked >> colour & 1):
        return (
            "colour_locked",
            f"§6.3: {name} is not unlocked yet (black marker on Trans-Siberian space "
            f"{dict((c, s) for s, c in _UNLOCKS)[colour]} unlocks it)",
        )
    base = line * 5
    new = p.pos[base + colour] + 1
    if colour == 0:
        if new > _LEN[line]:
            return ("line_end", f"§6.1: the black marker is at the end of {D.LINES[line]}")
        return None
    ahead = p.pos[base + colour - 1]
    if new + lag > ahead:
        return (
            "overtaking",
            f"§5.1: {name} may not {'catch up with or ' if lag else ''}overtake the "
            f"{D.COLOURS[colour - 1]} marker ahead of it on {D.LINES[line]} (space {ahead})",
        )
    return None


_BITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(1 << c for c in range(5) if m >> c & 1) for m in range(32)
)


def _fill_singles(p: Player, lag: int) -> list[int]:
    """Create the capacity cache with the one-colour capacities filled in (one pass)."""
    cap = [-1] * 32
    cap[0] = 0
    singles = [0, 0, 0, 0, 0]
    pos = p.pos
    unlocked = p.unlocked
    for line in range(_NLINES):
        lm = unlocked & _LINE_MASK[line]
        base = line * 5
        limit = _LEN[line]
        for c in range(5):
            cur = pos[base + c]
            if (lm >> c & 1) and limit > cur:
                singles[c] += limit - cur
            if cur == 0:
                break
            limit = cur - lag
    for c in range(5):
        cap[1 << c] = singles[c]
    p.cap = cap
    return cap


def can_make(p: Player, mask: int, need: int, lag: int = 1) -> bool:
    """Whether ``need`` steps with colours ``mask`` can be made (``capacity >= need``)."""
    cap = p.cap or _fill_singles(p, lag)
    if need <= 1:
        if need <= 0:
            return True
        for bit in _BITS[mask]:
            if cap[bit] > 0:
                return True
        return False
    v = cap[mask]
    if v < 0:
        v = capacity(p, mask, lag)
    return v >= need


def capacity(p: Player, mask: int, lag: int = 1) -> int:
    """The most steps an action with colours ``mask`` can make (§5.1).

    All markers of the allowed colours move as far as they can, front to back,
    Trans-Siberian first (its black marker may unlock colours on the way, §6.3).
    Any legal step lowers this number by exactly one, so a competed action of
    ``n`` steps is performable in full iff ``capacity >= n``. Cached per mask (``lag``
    is one value per game, see the module docstring).
    """
    cap = p.cap or _fill_singles(p, lag)
    v = cap[mask]
    if v >= 0:
        return v
    total = 0
    unlocked = p.unlocked
    pos = p.pos
    for line in range(_NLINES):
        lm = mask & _LINE_MASK[line]
        if not lm:
            continue
        base = line * 5
        limit = _LEN[line]
        for c in range(5):
            cur = pos[base + c]
            final = cur
            if (lm >> c & 1) and (unlocked >> c & 1) and limit > cur:
                final = limit
                total += final - cur
                if c == 0 and line == 0:
                    for space, colour in _UNLOCKS:
                        if final >= space:
                            unlocked |= 1 << colour
            if final == 0:
                break
            limit = final - lag
    cap[mask] = total
    return total


def legal_steps(p: Player, mask: int, lag: int = 1) -> list[Action]:
    """The ``track`` actions possible now with colours ``mask``, by line then colour."""
    out: list[Action] = []
    unlocked = p.unlocked & mask
    pos = p.pos
    for line in range(_NLINES):
        lm = unlocked & _LINE_MASK[line]
        if not lm:
            continue
        base = line * 5
        row = TRACK[line]
        limit = _LEN[line]
        for c in range(5):
            cur = pos[base + c]
            if (lm >> c & 1) and cur < limit:
                out.append(row[c])
            if cur == 0:
                break
            limit = cur - lag
    return out


def do_step(
    state: TranssibState, seat: int, p: Player, line: int, colour: int, events: list[Event]
) -> None:
    """Move one marker one step (legality already checked), then unlock colours and
    fire specials (§6.3, §6.5)."""
    idx = line * 5 + colour
    new = p.pos[idx] + 1
    p.pos[idx] = new
    p.cap = NO_CAP
    events.append(
        {
            "type": "track",
            "seat": seat,
            "line": D.LINES[line],
            "colour": D.COLOURS[colour],
            "to": new,
        }
    )
    if line == 0 and colour == 0:
        for space, c in _UNLOCKS:
            if new >= space and not (p.unlocked >> c & 1):
                p.unlocked |= 1 << c
                events.append({"type": "unlock", "seat": seat, "colour": D.COLOURS[c]})
    check_specials(state, seat, p, line, events)


def check_specials(
    state: TranssibState, seat: int, p: Player, line: int, events: list[Event]
) -> None:
    """Fire the not-yet-fired specials of ``line`` whose trigger marker and (where
    marked) locomotive reach are on or past them (§6.5). Fired specials stay
    fulfilled; "?" bonuses are queued for after the current action (§4.4)."""
    specials = D.FIRING_SPECIALS[line]
    if not specials:
        return
    pos = p.pos
    reach = -1
    for sp in specials:
        bit = 1 << sp.index
        if p.fired & bit:
            continue
        if pos[line * 5 + sp.trigger] < sp.space:
            continue
        if sp.needs_loco:
            if reach < 0:
                reach = p.reach(line)
            if reach < sp.space:
                continue
        p.fired |= bit
        events.append(
            {
                "type": "special",
                "seat": seat,
                "line": D.LINES[line],
                "space": sp.space,
                "kind": sp.kind,
            }
        )
        from services.transsib.engine.effects import fire_special  # (effects imports track)

        fire_special(state, seat, p, sp.kind, line, events)


def best_colour_counts(p: Player, line: int) -> list[int]:
    """Number of spaces of ``line`` whose best colour is each colour (ignoring reach)."""
    counts = [0] * 5
    base = line * 5
    prev = 0
    for c in range(4, -1, -1):
        q = p.pos[base + c]
        if q > prev:
            counts[c] = q - prev
            prev = q
    return counts
