"""The three action dials (spec §5).

Each round the Auction dial allows 3 uses, Develop 4 and Expand 5 (options
``*_dial_uses``); after its last use a needle sits in its red zone and that dial cannot be
chosen. On his turn the player **must** advance one dial not in red, then **may** carry out
that action or decline it. When two dials are in red at the end of a turn, a General
Dividend phase follows (§10), which resets all three.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, MalformedAction
from services.railbarons.engine import phases
from services.railbarons.engine.actions import DIAL_ACTIONS
from services.railbarons.engine.options import DIAL_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

AUCTION_DIAL, DEVELOP_DIAL, EXPAND_DIAL = 0, 1, 2
DIAL_INDEX = {name: i for i, name in enumerate(DIAL_NAMES)}
_NEXT_PHASE = (phases.AUCTION, phases.DEVELOP, phases.EXPAND)


def dial_index(name: str) -> int:
    """Index of a dial name. Raises :class:`MalformedAction` (``unknown_dial``)."""
    d = DIAL_INDEX.get(name) if isinstance(name, str) else None
    if d is None:
        raise MalformedAction(
            "unknown_dial", f"unknown dial {name!r}; expected one of {', '.join(DIAL_NAMES)}"
        )
    return d


def legal(st: RailbaronsState, seat: int) -> list[Action]:
    """The dials not in their red zone, as ``choose_dial`` actions (§5)."""
    dials = st.dials
    limits = st.rules.dial_limits
    return [DIAL_ACTIONS[d] for d in (0, 1, 2) if dials[d] < limits[d]]


def check_choose(st: RailbaronsState, d: int) -> None:
    """Raise ``dial_in_red`` when dial ``d`` is in its red zone (§5)."""
    if st.dials[d] >= st.rules.dial_limits[d]:
        raise IllegalAction(
            "dial_in_red",
            f"§5: the {DIAL_NAMES[d].capitalize()} dial is in its red zone "
            f"({st.rules.dial_limits[d]} uses this round)",
        )


def choose(st: RailbaronsState, seat: int, d: int, ev: list[Event]) -> None:
    """Advance dial ``d`` one step; the turn continues with that action or a decline."""
    st.dials[d] += 1
    st.phase = _NEXT_PHASE[d]
    st.x_company = -1
    st.x_hexes = ()
    ev.append({"type": "dial_chosen", "seat": seat, "dial": DIAL_NAMES[d], "uses": st.dials[d]})


def red_count(st: RailbaronsState) -> int:
    """Number of dials in their red zone (§5)."""
    limits = st.rules.dial_limits
    dials = st.dials
    return (dials[0] >= limits[0]) + (dials[1] >= limits[1]) + (dials[2] >= limits[2])


def reset(st: RailbaronsState) -> None:
    """Turn all needles back to start (§10.2)."""
    st.dials = [0, 0, 0]
