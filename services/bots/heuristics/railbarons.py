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

It sees the engine only through its read API (:mod:`services.railbarons.engine.reading`)
and is cheap: no search, no copies.
"""

from __future__ import annotations

from services.railbarons.engine.reading import Reading, read

TREASURY_PER_INCOME = 5.0
"""Dollars of treasury counted as one point of future income."""
CHICAGO_WEIGHT = 1.5
"""Income points per hex of progress towards Chicago."""
NO_NETWORK_DISTANCE = 99
"""Distance counted for a company without track."""


def _remaining_dividends(r: Reading) -> float:
    if r.over:
        return 0.0
    if r.end_triggered:
        return 1.0
    left = 8 - r.dividends_paid
    return max(1.0, left - 0.5)


def evaluate(state, seat: int) -> float:
    """Higher is better for ``seat`` (dollars, relative to the best opponent)."""
    r = read(state)
    n = len(r.players)
    held = [list(p.shares) for p in r.players]
    sold = [c.shares_sold for c in r.companies]
    cash = [float(p.cash) for p in r.players]
    treasury = [c.treasury for c in r.companies]
    if r.auction is not None:
        # count the running auction as won by the high bidder at his bid
        c = r.auction.company
        w = r.auction.high_bidder
        held[w][c] += 1
        sold[c] += 1
        cash[w] -= r.auction.high_bid
        treasury[c] += r.auction.high_bid
    rounds_left = _remaining_dividends(r)
    worth = [0.0] * len(r.companies)
    for company in r.companies:
        c = company.index
        if not sold[c]:
            continue
        expected = company.income + treasury[c] / TREASURY_PER_INCOME
        if not company.reached_chicago and company.chicago_distance is not None:
            closest = min(company.chicago_distance, NO_NETWORK_DISTANCE)
            expected += CHICAGO_WEIGHT * (20 - closest)
        worth[c] = expected * rounds_left / sold[c]
    values = []
    for s in range(n):
        v = cash[s]
        for c, k in enumerate(held[s]):
            if k:
                v += k * worth[c]
        values.append(v)
    mine = values[seat]
    others = max(values[s] for s in range(n) if s != seat)
    return mine - others
