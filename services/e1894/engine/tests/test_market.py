"""Share price movements and the operating order (spec "Shares and the stock market")."""

from __future__ import annotations

from ..data import CORP_INDEX, MARKET
from ..market import move_down, move_left, move_right, move_up, operating_order, place, price
from .flow_helpers import new

PLM, NORD, AG = CORP_INDEX["PLM"], CORP_INDEX["Nord"], CORP_INDEX["AG"]


def test_market_grid():
    """§Shares: par cells 95 [1,1], 100 [3,5], 80 [4,3], 67 [7,5]; the 450 end cell [0,13];
    gray ("unlimited") cells at 59 and below in the bottom left."""
    assert MARKET.par_cells == {95: (1, 1), 100: (3, 5), 80: (4, 3), 67: (7, 5)}
    assert MARKET.is_endgame(0, 13) and MARKET.price(0, 13) == 450
    assert MARKET.is_gray(5, 0) and MARKET.price(5, 0) == 59
    assert not MARKET.is_gray(7, 3)


def test_moves_and_their_edges():
    """§Shares: payout right (up at the row end), withhold left (down at the left edge),
    sale down (none where no cell), sold out up (none from the top row)."""
    st = new()
    place(st, PLM, 1, 13)  # 415, end of row 1
    move_right(st, PLM)
    assert (st.row[PLM], st.col[PLM]) == (0, 13) and price(st, PLM) == 450
    place(st, PLM, 4, 0)
    move_left(st, PLM)
    assert (st.row[PLM], st.col[PLM]) == (5, 0)
    place(st, PLM, 5, 9)  # 140: row 6 is shorter
    move_down(st, PLM)
    assert (st.row[PLM], st.col[PLM]) == (5, 9)
    place(st, PLM, 3, 5)
    move_down(st, PLM, 2)
    assert (st.row[PLM], st.col[PLM]) == (5, 5)
    place(st, PLM, 0, 2)
    move_up(st, PLM)
    assert (st.row[PLM], st.col[PLM]) == (0, 2)


def test_operating_order_price_then_column_then_arrival():
    """§Shares: higher price first; equal prices: the cell farther right first; same cell:
    the corporation that arrived first (the recorded games confirm it)."""
    st = new()
    for ci in (PLM, NORD, AG):
        st.floated[ci] = True
    place(st, NORD, 7, 5)  # 67
    place(st, AG, 7, 5)  # 67, arrived later
    place(st, PLM, 4, 3)  # 80
    assert operating_order(st)[:3] == [PLM, NORD, AG]
    place(st, NORD, 7, 4)
    place(st, NORD, 7, 5)  # NORD arrives again, now after AG
    assert operating_order(st)[1:3] == [AG, NORD]
