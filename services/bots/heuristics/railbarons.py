"""Static evaluation of Chicago Express positions for the one-step ``greedy`` policy.

``evaluate(state, seat)`` estimates what ``seat`` will hold at the end (cash is the score,
spec §11) minus the best opponent's estimate:

* cash now;
* plus, per company, the seat's fraction of its shares times the income it should pay over
  the dividends still to come (§10: per-share = income / shares sold); a company's expected
  income counts its treasury as future track (about $5 per point of income) and its progress
  towards Chicago (§9: +7 income and a Chicago dividend);
* during an auction the high bidder is counted as if he had already won at his bid (so the
  greedy bidder bids while a share is worth more than its price, §6).

It reads the engine's state directly (same process) and is cheap: no search, no copies.
"""

from __future__ import annotations

from services.railbarons.engine import board, phases

NC = board.NUM_COMPANIES
_DIST = board.CHICAGO_DISTANCE
TREASURY_PER_INCOME = 5.0
"""Dollars of treasury counted as one point of future income."""
CHICAGO_WEIGHT = 1.5
"""Income points per hex of progress towards Chicago."""


def _remaining_dividends(st) -> float:
    if st.phase == phases.OVER:
        return 0.0
    if st.end_reason:
        return 1.0
    left = 8 - st.rounds
    return max(1.0, left - 0.5)


def _closest_to_chicago(net: int) -> int:
    best = 99
    while net:
        low = net & -net
        h = low.bit_length() - 1
        net ^= low
        d = _DIST[h]
        if d < best:
            best = d
    return best


def evaluate(state, seat: int) -> float:
    """Higher is better for ``seat`` (dollars, relative to the best opponent)."""
    st = state
    n = st.num_players
    held = list(st.held)
    sold = list(st.sold)
    cash = [float(x) for x in st.cash]
    treasury = list(st.treasury)
    if st.phase == phases.BIDDING and st.a_bidder >= 0:
        # count the running auction as won by the high bidder at his bid
        c = st.a_company
        w = st.a_bidder
        held[w * NC + c] += 1
        sold[c] += 1
        cash[w] -= st.a_high
        treasury[c] += st.a_high
    rounds_left = _remaining_dividends(st)
    worth = [0.0] * NC
    for c in range(NC):
        if not sold[c]:
            continue
        expected = st.income[c] + treasury[c] / TREASURY_PER_INCOME
        if not (st.chicago >> c) & 1 and st.net[c]:
            expected += CHICAGO_WEIGHT * (20 - _closest_to_chicago(st.net[c]))
        worth[c] = expected * rounds_left / sold[c]
    values = []
    for s in range(n):
        base = s * NC
        v = cash[s]
        for c in range(NC):
            k = held[base + c]
            if k:
                v += k * worth[c]
        values.append(v)
    mine = values[seat]
    others = max(values[s] for s in range(n) if s != seat)
    return mine - others
