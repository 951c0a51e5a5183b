"""Stock rounds (spec "Shares and the stock market", "Setup and auction")."""

from __future__ import annotations

from ..actions import Bid, BuyShares, ChooseHome, Par, Pass, SellShares
from ..data import CORP_INDEX, MARKET
from ..shares import cert_count
from .flow_helpers import new, refused

SEED = 92791301
EST, BELGE, NORD, PLM, LF = (CORP_INDEX[s] for s in ("Est", "Belge", "Nord", "PLM", "LF"))


def sr1(**options):
    """Start of SR 1 (4 players): seat 0 LRC+LS, 1 AR+NMinorS, 2 SAC+EMS (Est 100),
    3 SQG+BMS (Belge 100)."""
    st = new(4, SEED, **options)
    for seat, sym, price in (
        (0, "LRC", 20),
        (1, "AR", 25),
        (2, "SAC", 50),
        (3, "SQG", 70),
        (0, "LS", 90),
        (1, "NMinorS", 140),
        (2, "EMS", 180),
    ):
        st.apply(seat, Bid(sym, price))
    st.apply(2, Par("Est", 100))
    st.apply(3, Bid("BMS", 200))
    st.apply(3, Par("Belge", 100))
    assert st.round == "stock" and st.active_seats() == (0,)
    return st


def later_sr(st):
    """The same position treated as a later stock round (selling allowed)."""
    st.sr_number = 2
    return st


def test_no_selling_in_the_first_stock_round():
    """§Shares: no selling in the first SR (turn 1)."""
    st = sr1()
    refused(st, 0, SellShares("Est", 1), "no_selling_yet")
    assert not [a for a in st.legal_actions(0) if isinstance(a, SellShares)]


def test_buying_from_the_treasury_pays_the_bank_and_ends_the_turn():
    """§Shares: a Treasury share costs the par; the money goes to the bank (full
    capitalisation); one share per turn; with nothing else to do the turn ends."""
    st = sr1()
    cash = st.cash[0]
    st.apply(0, BuyShares("Est", "treasury"))
    assert st.cash[0] == cash - 100 and st.holdings[EST][0] == 20
    assert st.corp_cash[EST] == 1000
    assert st.active_seats() == (1,)


def test_a_corporation_floats_at_60_percent_with_ten_times_par():
    """§Shares: it floats when the Treasury holds at most 40% and gets 10 x par."""
    st = sr1()
    st.apply(0, Pass())
    st.apply(1, Par("Nord", 67))  # seat 1 had 10% from NMinorS: now 30%, Treasury 70%
    assert not st.floated[NORD] and st.president[NORD] == 1
    st.apply(2, BuyShares("Nord", "treasury"))
    st.apply(3, BuyShares("Nord", "treasury"))
    st.apply(0, Pass())
    assert not st.floated[NORD]
    st.apply(1, BuyShares("Nord", "treasury"))
    assert st.floated[NORD] and st.ipo[NORD] == 40 and st.corp_cash[NORD] == 670


def test_stock_round_par_prices():
    """§Setup and auction: in a SR the par is 95, 80 or 67 (the 100 cell only with
    strict_stock_round_par=False); LF/LB only after the first 5+1."""
    st = sr1()
    refused(st, 0, Par("PLM", 100), "bad_par")
    refused(st, 0, Par("PLM", 90), "bad_par")
    refused(st, 0, Par("LF", 95), "late_not_available")
    st.apply(0, Par("PLM", 80))
    assert st.par[PLM] == 80 and (st.row[PLM], st.col[PLM]) == MARKET.par_cells[80]
    loose = sr1(strict_stock_round_par=False)
    loose.apply(0, Par("PLM", 100))
    assert loose.par[PLM] == 100


def test_late_corporation_chooses_its_home_after_the_par():
    """§Trains and phases: after the first 5+1 LF/LB may be parred; the president then
    chooses a home among the candidates."""
    st = sr1()
    st.late_available = True
    st.apply(0, Par("LF", 95))
    assert st.pending_home == LF
    legal = st.legal_actions(0)
    assert legal and all(isinstance(a, ChooseHome) for a in legal)
    refused(st, 0, ChooseHome("F15"), "bad_home")  # a Belgian hex
    refused(st, 0, Pass(), "home_pending")
    st.apply(0, legal[0])
    assert st.home[LF] == legal[0].hex and st.pending_home == -1


def test_holding_limit_and_gray_zone():
    """§Shares: at most 60% of a corporation, except when its price is in the gray zone;
    there its shares do not count toward the certificate limit and the president may buy two
    in one turn."""
    st = later_sr(sr1())
    st.holdings[EST][0] = 60
    st.holdings[EST][2] = 20
    st.ipo[EST] = 0
    st.pool[EST] = 0
    st.president[EST] = 0
    st.ipo[EST] = 10
    st.holdings[EST][1] = 0
    st.holdings[EST][3] = 10
    refused(st, 0, BuyShares("Est", "treasury"), "holding_limit")
    before = cert_count(st, 0)
    st.row[EST], st.col[EST] = 6, 0  # 50, gray
    assert cert_count(st, 0) == before - 5
    st.ipo[EST] = 20
    st.par[EST] = 100
    st.cash[0] = 1000
    st.apply(0, BuyShares("Est", "treasury"))
    st.apply(0, BuyShares("Est", "treasury"))
    assert st.holdings[EST][0] == 80
    refused(st, 0, BuyShares("Belge", "treasury"), "already_bought")


def test_one_share_per_turn_outside_the_gray_zone():
    """§Shares: one buy per turn (sell-buy-sell)."""
    st = later_sr(sr1())
    st.apply(0, BuyShares("Est", "treasury"))
    refused(st, 0, BuyShares("Belge", "treasury"), "already_bought")
    refused(st, 0, Par("PLM", 95), "already_bought")
    st.apply(0, SellShares("Belge", 1))  # sell after buying is allowed
    assert st.active_seats() == (0,)


def test_certificate_limit():
    """§Shares: 14 certificates with 4 players (privates count); over it nothing can be
    bought and the player must sell first."""
    st = later_sr(sr1())
    assert cert_count(st, 0) == 4  # LRC, LS, Est 10%, Belge 10%
    st.holdings[PLM][0] = 60
    st.holdings[NORD][0] = 40
    st.president[PLM] = 0
    st.par[PLM] = 80
    st.par[NORD] = 67
    st.row[PLM], st.col[PLM] = MARKET.par_cells[80]
    st.row[NORD], st.col[NORD] = MARKET.par_cells[67]
    st.ipo[PLM], st.ipo[NORD] = 40, 50
    assert cert_count(st, 0) == 4 + 5 + 4 == 13
    st.apply(0, BuyShares("Est", "treasury"))
    assert cert_count(st, 0) == 14
    refused(st, 0, BuyShares("Belge", "treasury"), "already_bought")
    st2 = later_sr(sr1())
    st2.holdings[PLM][0] = 60
    st2.holdings[NORD][0] = 50
    st2.president[PLM] = 0
    st2.par[PLM], st2.par[NORD] = 80, 67
    st2.row[PLM], st2.col[PLM] = MARKET.par_cells[80]
    st2.row[NORD], st2.col[NORD] = MARKET.par_cells[67]
    assert cert_count(st2, 0) == 4 + 5 + 5 == 14
    refused(st2, 0, BuyShares("Est", "treasury"), "certificate_limit")
    st2.holdings[NORD][0] = 60
    refused(st2, 0, BuyShares("Belge", "treasury"), "over_certificate_limit")
    refused(st2, 0, Pass(), "over_certificate_limit")
    assert all(isinstance(a, SellShares) for a in st2.legal_actions(0))


def test_no_buying_back_what_was_sold_this_round():
    """§Shares: a player may not buy a corporation he sold in the same round."""
    st = later_sr(sr1())
    st.apply(0, SellShares("Est", 1))
    refused(st, 0, BuyShares("Est", "pool"), "sold_this_round")
    refused(st, 0, BuyShares("Est", "treasury"), "sold_this_round")


def test_pool_limit_and_selling_moves_the_price_down():
    """§Shares: each share sold moves the price one row down; the pool holds at most 50%."""
    st = later_sr(sr1())
    st.pool[BELGE] = 40
    row = st.row[BELGE]
    st.apply(0, SellShares("Belge", 1))
    assert st.pool[BELGE] == 50 and st.row[BELGE] == row + 1 and st.cash[0] == 370 + 100
    st.apply(0, Pass())
    refused(st, 1, SellShares("Belge", 1), "cannot_sell")


def test_presidency_changes_hands_on_a_sale():
    """§Shares: the president's certificate never goes to the pool: a president may sell below
    20% only when another player holds at least 20%, who then becomes president."""
    st = later_sr(sr1())
    st.apply(0, Pass())
    st.apply(1, Pass())
    assert st.president[EST] == 2 and st.holdings[EST][2] == 30
    refused(st, 2, SellShares("Est", 2), "cannot_sell")  # nobody else has 20%
    st.apply(2, SellShares("Est", 1))
    assert st.president[EST] == 2 and st.holdings[EST][2] == 20
    st.holdings[EST][3] = 30
    st.ipo[EST] -= 20
    st.apply(2, SellShares("Est", 1))
    assert st.president[EST] == 3 and st.holdings[EST][2] == 10


def test_first_to_pass_order_and_idle_players_pass_automatically():
    """§Setup and auction: later SRs use first-to-pass priority; a player who can do nothing
    passes at once."""
    st = sr1()
    st.apply(0, BuyShares("Est", "treasury"))
    st.apply(1, Pass())
    for seat in (2, 3, 0):
        st.cash[seat] = 0
    st.apply(st.active_seats()[0], Pass())
    assert st.round == "operating"
    assert st.order[0] == 1


def test_sold_out_corporations_rise_at_the_end():
    """§Shares: sold out (players and redeemed shares hold 100%): up one row, one more in the
    gray zone, one more when president + redeemed hold 80% or more."""
    st = later_sr(sr1())
    belge = BELGE
    st.holdings[belge] = [10, 10, 0, 80]
    st.ipo[belge] = 0
    st.row[belge], st.col[belge] = 5, 3  # 71
    est = EST
    st.holdings[est] = [10, 10, 80, 0]
    st.ipo[est] = 0
    st.row[est], st.col[est] = 7, 1  # 50, gray
    while st.round == "stock":
        st.apply(st.active_seats()[0], Pass())
    assert (st.row[belge], st.col[belge]) == (3, 3)  # two rows: sold out + 80%
    assert (st.row[est], st.col[est]) == (4, 1)  # three rows: sold out + gray + 80%


def _sr1_three_players():
    """SR 1 of a 3-player game: every player buys the cheapest private in turn, pars at 100."""
    st = new(3, SEED)
    while st.round == "auction":
        seat = st.active_seats()[0]
        legal = st.legal_actions(seat)
        st.apply(seat, next(a for a in legal if isinstance(a, (Par, Bid))))
    return st


def test_three_player_limits():
    """§Setup and auction / §Shares with 3 players: 570 francs each, a share of both starting
    corporations per player plus one in the pool, and a certificate limit of 18."""
    st = _sr1_three_players()
    assert st.round == "stock"
    for ci in (EST, BELGE):
        assert st.pool[ci] == 10 and all(st.holdings[ci][s] >= 10 for s in range(3))
    seat = st.active_seats()[0]
    st.cash[seat] = 10_000
    fill = [CORP_INDEX[s] for s in ("PLM", "Nord", "CFOR", "Ouest", "AG")]
    for ci in fill:
        st.par[ci] = 80
        st.row[ci], st.col[ci] = MARKET.par_cells[80]
    need = 17 - cert_count(st, seat)
    for ci in fill:  # plain 10% shares (the president's certificates unsold)
        take = min(need, 4)
        st.holdings[ci][seat] += 10 * take
        st.ipo[ci] -= 10 * take
        need -= take
    assert need == 0 and cert_count(st, seat) == 17
    probe = st.clone()
    probe.apply(seat, BuyShares("Nord", "treasury"))
    assert cert_count(probe, seat) == 18
    nord = CORP_INDEX["Nord"]
    st.holdings[nord][seat] += 10
    st.ipo[nord] -= 10
    assert "18" in refused(st, seat, BuyShares("Belge", "pool"), "certificate_limit")


def test_selling_into_the_presidents_certificate_option():
    """Option ``presidents_certificate_sale``: the reference lets a president sell into his
    20% certificate when another player holding 20% takes over (errata A2); the designer's
    rules §6.3 forbid selling the president's certificate (False)."""
    from ..shares import can_sell_count

    st = new(4, 1)
    belge = CORP_INDEX["Belge"]
    st.holdings[belge] = [20, 20, 10, 10]  # synthetic: seat 0 president with 20%
    st.president[belge] = 0
    st.pool[belge] = 0
    assert can_sell_count(st, belge, 0, 1) is None
    st.options = st.options.model_copy(update={"presidents_certificate_sale": False})
    assert "cannot be sold" in can_sell_count(st, belge, 0, 1)
