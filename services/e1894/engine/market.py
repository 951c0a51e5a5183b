"""Share price movements on the 2-D stock market, and the operating order they decide.

Spec: the 1894 rules summary, "Shares and the stock market":

* payout -> one step right (up at the row end);
* withhold or no revenue -> one step left (down at the left edge);
* each share sold -> one row down (no move if that cell does not exist);
* sold out at the end of a stock round -> up (no move from the top row).

A move into a cell puts the corporation last in that cell's stack (``stamp``): of two
corporations with the same price and column, the one that arrived first operates first.
Operating order: higher price first, then the cell farther right, then earlier arrival.

The functions take the state (:class:`~.state.E1894State`) and a corporation index and
change only ``row``, ``col`` and ``stamp`` of that corporation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .data import MARKET

if TYPE_CHECKING:
    from .state import E1894State


def _put(st: E1894State, ci: int, row: int, col: int) -> None:
    if row == st.row[ci] and col == st.col[ci]:
        return
    st.row[ci] = row
    st.col[ci] = col
    st.stamp_counter += 1
    st.stamp[ci] = st.stamp_counter


def place(st: E1894State, ci: int, row: int, col: int) -> None:
    """Put a corporation on a cell (its par cell when it is parred)."""
    st.row[ci] = -1
    _put(st, ci, row, col)


def move_right(st: E1894State, ci: int) -> None:
    """Dividend paid: one step right, or up when at the end of the row."""
    r, c = st.row[ci], st.col[ci]
    if MARKET.exists(r, c + 1):
        _put(st, ci, r, c + 1)
    elif MARKET.exists(r - 1, c):
        _put(st, ci, r - 1, c)


def move_left(st: E1894State, ci: int) -> None:
    """Withheld or no revenue: one step left, or down at the left edge."""
    r, c = st.row[ci], st.col[ci]
    if c > 0:
        _put(st, ci, r, c - 1)
    elif MARKET.exists(r + 1, c):
        _put(st, ci, r + 1, c)


def move_down(st: E1894State, ci: int, rows: int = 1) -> None:
    """One row down per share sold; stops where the cell below does not exist."""
    for _ in range(rows):
        r, c = st.row[ci], st.col[ci]
        if not MARKET.exists(r + 1, c):
            return
        _put(st, ci, r + 1, c)


def move_up(st: E1894State, ci: int) -> None:
    """One row up (sold out at the end of a stock round); no move from the top row."""
    r, c = st.row[ci], st.col[ci]
    if MARKET.exists(r - 1, c):
        _put(st, ci, r - 1, c)


def price(st: E1894State, ci: int) -> int:
    """Current share price of a parred corporation (francs)."""
    return MARKET.prices[st.row[ci]][st.col[ci]]


def in_gray(st: E1894State, ci: int) -> bool:
    """True when the share price is in the gray ("unlimited") zone."""
    return st.row[ci] >= 0 and (st.row[ci], st.col[ci]) in MARKET.gray


def order_key(st: E1894State, ci: int) -> tuple[int, int, int]:
    """Sort key of the operating order (ascending = operates first)."""
    return (-price(st, ci), -st.col[ci], st.stamp[ci])


def operating_order(st: E1894State) -> list[int]:
    """Floated corporations in operating order."""
    corps = [ci for ci in range(len(st.floated)) if st.floated[ci]]
    corps.sort(key=lambda ci: order_key(st, ci))
    return corps
