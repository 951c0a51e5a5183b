"""Private companies: owners, revenue, closing, and corporations buying them.

Spec: the 1894 rules summary, "Setup and auction" and "Trains and phases"; data
``data/privates.json``.

Owners are coded in ``state.private_owner`` as: a seat (0..n-1), ``CORP_OWNER + ci`` for a
corporation, :data:`UNSOLD` while in the auction, :data:`CLOSED` once closed or removed.

* Revenue is paid at the start of every operating round to the owner. AR pays 5 to a player
  and 10 to a corporation; SQG pays 0, 70 when Saint-Quentin (G10) is green, 100 when brown.
* The major shareholdings (xMS, BMS) cannot be sold to corporations and close when their
  corporation first operates.
* Corporations may buy privates from players only in the Green, Blue and Brown phases, at
  half to double the face value (rounded up / exactly).
* The first 6 closes every private but SQG; SQG closes in Purple.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event

from .data import PRIVATES

if TYPE_CHECKING:
    from .state import E1894State

UNSOLD = -1
CLOSED = -2
CORP_OWNER = 100


def close_private(st: E1894State, pi: int) -> None:
    """Close private ``pi`` (it pays nothing and is worth nothing afterwards)."""
    if st.private_owner[pi] != CLOSED:
        st.private_owner[pi] = CLOSED


def revenue(st: E1894State, pi: int) -> int:
    """Revenue the private pays its current owner this OR (francs)."""
    info = PRIVATES[pi]
    owner = st.private_owner[pi]
    if info.sym == "AR":
        return 10 if owner >= CORP_OWNER else 5
    if info.sym == "SQG":
        color = st.board.tile_color("G10")
        return {"green": 70, "brown": 100, "gray": 100}.get(color, 0)
    return info.revenue


def pay_revenue(st: E1894State) -> list[Event]:
    """Pay every open, owned private's revenue (start of an operating round)."""
    events = []
    for pi, owner in enumerate(st.private_owner):
        if owner < 0:
            continue
        amount = revenue(st, pi)
        if amount <= 0:
            continue
        if owner >= CORP_OWNER:
            st.corp_cash[owner - CORP_OWNER] += amount
        else:
            st.cash[owner] += amount
        events.append({"type": "private_revenue", "company": PRIVATES[pi].sym, "amount": amount})
    return events


def price_range(pi: int) -> tuple[int, int]:
    """(lowest, highest) price a corporation may pay a player for the private."""
    value = PRIVATES[pi].value
    return (value + 1) // 2, value * 2


def buyable_by_corps(st: E1894State) -> list[int]:
    """Privates a corporation could buy now (player-owned, not a major shareholding)."""
    return [
        pi
        for pi, owner in enumerate(st.private_owner)
        if 0 <= owner < CORP_OWNER and not PRIVATES[pi].major_of
    ]


def owned_by_corp(st: E1894State, ci: int, sym: str) -> bool:
    """True if corporation ``ci`` owns the private ``sym``."""
    from .data import PRIVATE_INDEX

    return st.private_owner[PRIVATE_INDEX[sym]] == CORP_OWNER + ci
