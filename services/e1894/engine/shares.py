"""Share bookkeeping: who holds what percent, presidency, certificate counts, sales to the pool.

Spec: the 1894 rules summary, "Shares and the stock market" and "Setup and auction".

Every corporation has a 20% president's certificate and eight 10% shares. The state keeps
percentages per holder: ``holdings[ci][seat]`` for players, ``ipo[ci]`` (the Treasury's
buyable shares, with the president's certificate until it is taken), ``pool[ci]`` and
``redeemed[ci]`` (shares the corporation bought back from the pool: in its Treasury but not
buyable). ``president[ci]`` is the seat holding the president's certificate or -1.

Presidency: when a player other than the president holds more, the one holding most (ties:
the first after the old president in player order) takes the president's certificate and
hands two 10% shares back; percentages do not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event

from .data import CERT_LIMIT, CORPS, MARKET_SHARE_LIMIT
from .market import in_gray

if TYPE_CHECKING:
    from .state import E1894State


def certs_of(st: E1894State, ci: int, seat: int) -> int:
    """Certificates of corporation ``ci`` held by ``seat`` (the president's is one)."""
    pct = st.holdings[ci][seat]
    if pct == 0:
        return 0
    if st.president[ci] == seat:
        return 1 + (pct - 20) // 10
    return pct // 10


def cert_count(st: E1894State, seat: int) -> int:
    """Certificates counting toward the limit: privates held, plus shares of corporations
    whose price is not in the gray zone."""
    n = 0
    for ci in range(len(st.holdings)):
        if st.holdings[ci][seat] and not in_gray(st, ci):
            n += certs_of(st, ci, seat)
    for owner in st.private_owner:
        if owner == seat:
            n += 1
    return n


def cert_limit(st: E1894State) -> int:
    """Certificate limit for the number of players (18 / 14)."""
    return CERT_LIMIT[st.num_players]


def next_president(st: E1894State, ci: int, old: int) -> int:
    """The seat that should hold the presidency: the old president unless another player holds
    strictly more; among several, the first after ``old`` in the current player order."""
    best, best_pct = old, st.holdings[ci][old]
    order = st.order
    n = len(order)
    start = order.index(old)
    for k in range(1, n):
        s = order[(start + k) % n]
        pct = st.holdings[ci][s]
        if pct > best_pct:
            best, best_pct = s, pct
    return best


def update_president(st: E1894State, ci: int) -> None:
    """Move the presidency if another player now holds more than the president."""
    old = st.president[ci]
    if old < 0:
        return
    new = next_president(st, ci, old)
    if new != old:
        st.president[ci] = new


def can_sell_count(
    st: E1894State, ci: int, seat: int, count: int, keep_presidency: bool = False
) -> str | None:
    """Why ``seat`` may not sell ``count`` 10% shares of ``ci`` now, or ``None`` if it may.

    Checks the holding, the 50% pool limit and the president's certificate (it never goes to
    the pool: a president may sell below 20% only when another player holds at least 20% and
    so takes over). ``keep_presidency`` forbids a sale that would pass the presidency on (the
    emergency sale of the operating corporation's president).
    """
    if count < 1:
        return "count must be at least 1"
    held = st.holdings[ci][seat]
    if held < 10 * count:
        return f"holds only {held}% of {st.corp_sym(ci)}"
    if st.pool[ci] + 10 * count > MARKET_SHARE_LIMIT:
        return f"the pool may hold at most {MARKET_SHARE_LIMIT}% of {st.corp_sym(ci)}"
    if st.president[ci] == seat:
        left = held - 10 * count
        others = max((st.holdings[ci][s] for s in range(st.num_players) if s != seat), default=0)
        if left < 20 and others < 20:
            return "the president's certificate cannot go to the pool"
        if left < 20 and not st.options.presidents_certificate_sale:
            return "the president's certificate cannot be sold (designer's rules §6.3)"
        if keep_presidency and others > left:
            return "this sale would pass the presidency of the operating corporation on"
    return None


def sell(st: E1894State, ci: int, seat: int, count: int) -> int:
    """Sell ``count`` shares to the pool at the current price (checked beforehand); the price
    drops one row per share. Returns the francs received."""
    from .market import move_down, price

    amount = price(st, ci) * count
    st.holdings[ci][seat] -= 10 * count
    st.pool[ci] += 10 * count
    st.cash[seat] += amount
    update_president(st, ci)
    move_down(st, ci, count)
    return amount


def sell_shares(st: E1894State, ci: int, seat: int, count: int) -> Event:
    """Sell ``count`` shares of ``ci`` from ``seat`` to the pool (:func:`sell`, checked
    beforehand), in a stock round or as an emergency sale in an OR; returns the public
    ``sold`` event (``player``, ``corporation`` symbol, ``count``, ``amount`` in francs)."""
    amount = sell(st, ci, seat, count)
    return {
        "type": "sold",
        "player": seat,
        "corporation": CORPS[ci].sym,
        "count": count,
        "amount": amount,
    }
