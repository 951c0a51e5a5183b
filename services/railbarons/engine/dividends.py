"""Dividends (spec §10; the Chicago dividend of §9.1 uses the same payment).

For a company with at least one share sold, the per-share payment is
``income / shares sold`` rounded up (``dividend_rounding`` §10.1 [S]); every holder receives
it per share from the bank. Treasuries never receive dividends.

A General Dividend phase (after a turn ending with two dials in red, §5) pays every company,
resets the dials (§10.2), advances Detroit one step (§10.3), and ends the game if an end
condition had been met before the phase (§10.4, §11).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event
from services.railbarons.engine import data, dials, end
from services.railbarons.engine.development import advance_industrial

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES


def per_share(income: int, sold: int, round_up: bool = True) -> int:
    """Dividend per share in dollars (§10.1).

    >>> per_share(13, 2), per_share(13, 2, round_up=False)
    (7, 6)
    """
    if round_up:
        return -(-income // sold)
    return income // sold


def pay(st: RailbaronsState, c: int, kind: str, ev: list[Event]) -> None:
    """Pay company ``c``'s dividend to its shareholders (no-op with no share sold)."""
    sold = st.sold[c]
    if sold <= 0:
        return
    amount = per_share(st.income[c], sold, st.rules.round_up)
    n = st.num_players
    held = st.held
    cash = st.cash
    paid = [0] * n
    for s in range(n):
        k = held[s * NC + c]
        if k:
            cash[s] += k * amount
            paid[s] = k * amount
    ev.append(
        {
            "type": "dividend",
            "kind": kind,
            "company": data.COMPANY_IDS[c],
            "income": st.income[c],
            "per_share": amount,
            "paid": paid,
        }
    )


def general_dividend_phase(st: RailbaronsState, ev: list[Event]) -> bool:
    """Run a General Dividend phase (§10); returns True when the game ended after it."""
    ending = bool(st.end_reason)
    ev.append({"type": "general_dividend", "round": st.rounds + 1})
    for c in range(NC):
        pay(st, c, "general", ev)
    dials.reset(st)
    advance_industrial(st, data.DETROIT, ev)
    st.rounds += 1
    if ending:
        end.finish(st, ev)
        return True
    end.check(st, ev)
    return False
