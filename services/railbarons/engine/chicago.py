"""The Chicago phase and the opening of the Wabash (spec §9).

When a company places a locomotive in Chicago (A2) - at most once per company - a Chicago
phase follows the turn (§9 [V]):

1. that company alone pays a dividend like a general one, with its income after the build;
2. the first time only, the Wabash opens: a Wabash locomotive goes on Fort Wayne (D3), its
   income is set (``wabash_start_income`` [U]), and the player who reached Chicago opens an
   auction for a Wabash share (``wabash_auction_uses_dial`` [U]: the Auction dial is not
   moved by default);
3. then a General Dividend phase if the turn also put a second dial in red (§5, §9.3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event
from services.railbarons.engine import auction, data, dividends, phases
from services.railbarons.engine.expansion import place_start_locomotive

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState


def chicago_phase(st: RailbaronsState, c: int, seat: int, ev: list[Event]) -> bool:
    """Resolve company ``c``'s Chicago phase for the turn of ``seat``.

    Returns True when a Wabash auction was opened (the turn continues after it)."""
    first = st.chicago == 0
    st.chicago |= 1 << c
    ev.append({"type": "chicago_phase", "company": data.COMPANY_IDS[c], "first": first})
    dividends.pay(st, c, "chicago", ev)
    if not first or (st.opened >> data.WABASH) & 1:
        return False
    open_wabash(st, ev)
    rules = st.rules
    if rules.wabash_uses_dial and st.dials[0] < rules.dial_limits[0]:
        st.dials[0] += 1
    auction.start(st, phases.KIND_WABASH, data.WABASH, seat)
    return True


def open_wabash(st: RailbaronsState, ev: list[Event]) -> None:
    """Put the Wabash's locomotive on Fort Wayne and set its income (§9.2)."""
    w = data.WABASH
    place_start_locomotive(st, w)
    if not st.rules.wabash_loco_from_supply:
        st.locos[w] += 1
    st.income[w] = st.rules.start_income[w]
    ev.append(
        {
            "type": "wabash_opened",
            "hex": data.HEX_IDS[data.START_HEX[w]],
            "income": st.income[w],
        }
    )
