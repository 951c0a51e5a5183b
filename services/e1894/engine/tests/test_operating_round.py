"""Operating rounds (spec "Shares and the stock market" redeem/reissue, "Map, track and tokens",
"London, ferries and bonuses", "Trains and phases", "Game end"), on positions of the recorded
games (``tests/fixtures/e1894``) and small variations of them."""

from __future__ import annotations

from services.kernel.engine import ActionRange

from ..actions import (
    Bankrupt,
    BuyCompany,
    BuyFerry,
    BuyTrain,
    DiscardTrain,
    Dividend,
    LayTile,
    Pass,
    PlaceToken,
    RedeemShare,
    ReissueShares,
    SellShares,
)
from ..data import CORP_INDEX, PRIVATE_INDEX, PRIVATES
from ..market import price
from ..privates import CORP_OWNER, pay_revenue, revenue
from .flow_helpers import FINAL, at, before, new, refused, seat_of

C = CORP_INDEX


def test_private_revenue_at_the_start_of_each_or():
    """§Setup: every private pays its owner at the start of an OR (BMS 60, EMS 40, NMinorS
    20, LS 15, SAC 10, LRC/AR 5, SQG 0 while Saint-Quentin is not green)."""
    st = before(FINAL, 31)
    cash = list(st.cash)
    st.apply(st.active_seats()[0], Pass())  # last pass of SR 1: OR 1.1 starts
    gained = [st.cash[s] - cash[s] for s in range(4)]
    assert gained == [70, 20, 25, 40]  # seats 8544, 14359, 10573, 11653


def test_ar_pays_10_to_a_corporation_and_sqg_follows_saint_quentin():
    """§Setup: AR pays 5 to a player, 10 to a corporation; SQG 70 when G10 is green, 100
    when brown."""
    st = new()
    ar, sqg = PRIVATE_INDEX["AR"], PRIVATE_INDEX["SQG"]
    st.private_owner[ar] = 0
    assert revenue(st, ar) == 5
    st.private_owner[ar] = CORP_OWNER + C["Nord"]
    assert revenue(st, ar) == 10
    st.private_owner[sqg] = 1
    assert revenue(st, sqg) == 0
    st.board.put_tile("G10", "57", 0)
    st.board.put_tile("G10", "14", 0)
    assert revenue(st, sqg) == 70
    st.board.put_tile("G10", "X16", 0)
    assert revenue(st, sqg) == 100
    cash = st.corp_cash[C["Nord"]]
    pay_revenue(st)
    assert st.corp_cash[C["Nord"]] == cash + 10 and st.cash[1] == 480 + 100


def test_home_token_and_major_shareholding_closing():
    """§Map and §Setup: the home token is placed when the corporation first operates; its
    major shareholding closes when it has operated (its first dividend step)."""
    st = before(FINAL, 32)
    assert st.acting_corporation() == "Belge"
    assert st.board.corporation_tokens("Belge") == [("E16", 0)]
    assert st.private_owner[PRIVATE_INDEX["BMS"]] == 0
    st.apply(0, LayTile("E16", "57", 2))
    st.apply(0, LayTile("F17", "7", 1))  # no train: withheld at once, BMS closes
    assert st.private_owner[PRIVATE_INDEX["BMS"]] == -2
    assert st.step == "buy_train" and price(st, C["Belge"]) == 103


def test_trains_without_a_route_skip_the_route_step():
    """Errata A3: a corporation with trains but no route (no two connected revenue locations
    from its tokens) skips its route step: revenue 0, withheld, the price moves left at once."""
    st = before(FINAL, 32)
    belge = C["Belge"]
    st.trains[belge] = ["2-0"]  # synthetic: Belge owns a 2 but can reach no second stop
    st.apply(0, LayTile("E16", "57", 2))
    st.apply(0, LayTile("F17", "7", 1))
    while st.step == "token":
        st.apply(0, Pass())
    assert st.step == "buy_train" and st.t_revenue == 0 and st.operated[belge]
    assert price(st, belge) == 103


def test_a_corporation_with_a_route_must_buy_a_train():
    """§Trains and phases: a corporation without trains but with a route must buy one; without
    a route it need not."""
    st = before(FINAL, 838)
    est = C["Est"]
    assert not st.trains[est]
    refused(st, 3, Pass(), "must_buy_train")
    st.apply(3, BuyTrain("7-0", 200))
    assert st.trains[est] == ["7-0"]
    early = at(FINAL, 33)  # Belge cannot reach another stop yet: passing is allowed
    early.apply(0, Pass())
    assert early.acting_corporation() == "Est"


def test_redeem_and_reissue():
    """§Shares: redeem a pool share at market price (not Belge nor the starting French
    corporation); reissue all redeemed shares at 100 each when they outnumber the Treasury's:
    the par becomes 100."""
    st = before(FINAL, 577)
    cfor = C["CFOR"]
    cash, p = st.corp_cash[cfor], price(st, cfor)
    st.apply(3, RedeemShare())
    assert st.corp_cash[cfor] == cash - p and st.redeemed[cfor] == 10 and st.pool[cfor] == 0
    assert st.step == "track"
    st = before(FINAL, 845)
    assert st.redeemed[cfor] == 10 and st.ipo[cfor] == 0
    refused(st, 3, RedeemShare(), "none_in_pool")
    cash = st.corp_cash[cfor]
    st.apply(3, ReissueShares())
    assert st.corp_cash[cfor] == cash + 100 and st.ipo[cfor] == 10 and st.par[cfor] == 100


def test_starting_corporations_may_not_redeem():
    """§Shares: Belge and the drawn French starting corporation never redeem or reissue."""
    from ..operating_round import REDEEM, can_redeem, can_reissue

    st = at(FINAL, 33)
    belge = C["Belge"]
    st.pool[belge] = 10
    st.step = REDEEM
    assert not can_redeem(st, belge) and not can_reissue(st, belge)
    refused(st, 0, RedeemShare(), "may_not_redeem")


def test_redeem_limit_two_in_the_first_or_then_one():
    """§Shares: up to 2 redeemed shares in the first OR of a set, 1 otherwise."""
    from ..operating_round import redeem_limit

    st = before(FINAL, 577)
    assert st.or_num == 1 and redeem_limit(st) == 2
    st.or_num = 2
    assert redeem_limit(st) == 1


def test_redemption_is_one_action_that_ends_the_step():
    """Errata A6: a corporation redeems once in its redeem step: 1 share, or 2 shares as a
    single action in the first OR of a set; then the step is over."""
    st = before(FINAL, 577)
    cfor = C["CFOR"]
    st.pool[cfor] = 20
    st.corp_cash[cfor] = 10 * price(st, cfor)
    assert st.or_num == 1 and st.step == "redeem"
    assert [a for a in st.legal_actions(3) if isinstance(a, RedeemShare)] == [
        RedeemShare(1),
        RedeemShare(2),
    ]
    refused(st, 3, RedeemShare(3), "redeem_limit")
    cash = st.corp_cash[cfor]
    st.apply(3, RedeemShare(2))
    assert st.redeemed[cfor] == 20 and st.pool[cfor] == 0
    assert st.corp_cash[cfor] == cash - 2 * price(st, cfor)
    assert st.step == "track"
    st = before(FINAL, 577)
    st.pool[cfor] = 20
    st.or_num = 2
    assert [a for a in st.legal_actions(3) if isinstance(a, RedeemShare)] == [RedeemShare(1)]
    refused(st, 3, RedeemShare(2), "redeem_limit")
    st.apply(3, RedeemShare(1))
    assert st.step == "track" and st.pool[cfor] == 10


def test_payout_pays_treasury_shares_to_the_corporation():
    """§Shares: dividends per 10% = revenue / 10; Treasury (and redeemed) shares pay the
    corporation, pool shares nobody; payout moves the price right."""
    st = at(FINAL, 73)  # Est ran 30
    est = C["Est"]
    assert st.t_revenue == 30
    cash = list(st.cash)
    ccash = st.corp_cash[est]
    st.apply(3, Dividend("payout"))
    assert st.corp_cash[est] == ccash + 30 * (st.ipo[est] + st.redeemed[est]) // 100
    for s in range(4):
        assert st.cash[s] - cash[s] == 3 * st.holdings[est][s] // 10


def test_withhold_keeps_the_revenue_and_moves_left():
    """§Shares: withholding gives the corporation the whole revenue; price one step left."""
    st = before(FINAL, 190)
    nord = C["Nord"]
    cash, col = st.corp_cash[nord], st.col[nord]
    st.apply(1, Dividend("withhold"))
    assert st.corp_cash[nord] == cash + st.t_revenue and st.col[nord] == col - 1


def test_trade_in_once_per_buy_step():
    """§Trains: a 3 takes a 2 in for 40; only one trade-in per buy step."""
    st = before(FINAL, 126)
    belge = C["Belge"]
    st.apply(0, BuyTrain("3-1", 80, "2-0"))
    assert st.trains[belge] == ["2-1", "3-1"]
    refused(st, 0, BuyTrain("3-2", 80, "2-1"), "one_trade_in")
    refused(st, 0, BuyTrain("3-2", 120, "3-1"), "one_trade_in")


def test_train_limit_and_buying_from_another_corporation():
    """§Trains: no train over the limit; another corporation's train for any price from 1."""
    st = before(FINAL, 156)
    plm, nord = C["PLM"], C["Nord"]
    refused(st, 1, BuyTrain("2-3", 0), "bad_price")
    st.apply(1, BuyTrain("2-3", 13))
    assert st.trains[plm] == ["2-3"] and st.corp_cash[nord] == 25 + 13
    st.trains[plm] = ["2-3", "2-4", "3-2", "3-1"]
    refused(st, 1, BuyTrain("3-3", 120), "train_limit")


def test_emergency_purchase_with_the_presidents_money():
    """§Trains (emergency): the president pays what the corporation lacks for the depot's
    cheapest train, selling shares if needed: never more than needed, never passing the
    operating corporation's presidency on."""
    st = before(FINAL, 841)
    lf, pres = C["LF"], seat_of(FINAL, 14359)
    assert st.corp_cash[lf] == 119 and st.cash[pres] == 518
    refused(st, pres, Pass(), "must_buy_train")
    refused(st, pres, BuyTrain("D-1", 800), "insufficient_cash")
    refused(st, pres, SellShares("PLM", 3), "cannot_sell")  # two suffice
    probe = st.clone()
    probe.holdings[lf][seat_of(FINAL, 10573)] = 40  # 60/40: selling 2 would pass LF on
    probe.holdings[lf][pres] = 50
    probe.ipo[lf], probe.pool[lf] = 0, 10
    refused(probe, pres, SellShares("LF", 2), "cannot_sell")
    st.apply(pres, SellShares("PLM", 2))
    st.apply(pres, BuyTrain("D-1", 800))
    assert st.corp_cash[lf] == 0 and st.cash[pres] == 518 + 194 - 681
    assert st.trains[lf] == ["D-1"]


def _bankrupt_position():
    """FINAL before action 841 (LF must buy a train), its president left with no cash and
    no shares but LF's; no other corporation has a train."""
    st = before(FINAL, 841)
    pres = seat_of(FINAL, 14359)
    for ci in range(len(st.trains)):
        if ci != C["LF"]:
            st.trains[ci] = []
    st.cash[pres] = 0
    for ci in range(len(st.holdings)):
        if ci != C["LF"]:
            st.pool[ci] += st.holdings[ci][pres]
            st.holdings[ci][pres] = 0
    return st, pres


def test_bankruptcy_liquidates_the_president_and_ends_the_game():
    """§Game end, reference bankruptcy: a president who cannot get the train even with all
    his money and sales goes bankrupt; he sells every share he may by the emergency-sale
    rules (prices drop; the corporation's presidency stays), his cash
    becomes 0, what he could not sell and his privates still count; the game ends at once."""
    st = before(FINAL, 841)
    refused(st, seat_of(FINAL, 14359), Bankrupt(), "not_bankrupt")
    st, pres = _bankrupt_position()
    lf = C["LF"]
    held, before_price = st.holdings[lf][pres], price(st, lf)
    assert Bankrupt() in st.legal_actions(pres)
    events = st.apply(pres, Bankrupt())
    assert st.is_terminal() and st.result().end_reason == "bankrupt"
    sold = sum(e["count"] for e in events if e["type"] == "sold")
    assert st.cash[pres] == 0 and st.holdings[lf][pres] == held - 10 * sold
    assert sold and price(st, lf) < before_price
    assert st.president[lf] == pres  # the sales never pass on the needy corporation's presidency
    privates = sum(p.value for pi, p in enumerate(PRIVATES) if st.private_owner[pi] == pres)
    assert st.result().scores[pres] == st.holdings[lf][pres] * price(st, lf) // 10 + privates


def test_bankrupt_score_options():
    """Option ``bankrupt_score``: ``zero`` liquidates and scores 0, ``holdings`` keeps
    everything and scores it normally."""
    st, pres = _bankrupt_position()
    st.options = st.options.model_copy(update={"bankrupt_score": "zero"})
    st.apply(pres, Bankrupt())
    assert st.result().scores[pres] == 0 and st.cash[pres] == 0
    st, pres = _bankrupt_position()
    st.options = st.options.model_copy(update={"bankrupt_score": "holdings"})
    worth = st.scores()[pres]
    st.apply(pres, Bankrupt())
    assert st.result().scores[pres] == worth


def test_bankruptcy_is_allowed_even_if_another_corporations_train_could_be_bought():
    """Reference bankruptcy: the condition is the corporation's and the president's money
    plus his possible sales below the depot's cheapest train; another corporation's train
    (which a sale could pay) does not prevent it, and buying it stays possible too."""
    st = before(FINAL, 841)
    lf, pres = C["LF"], seat_of(FINAL, 14359)
    st.cash[pres] = 0
    st.corp_cash[lf] = 0
    keep = C["CFOR"]  # one plain 10% share
    for ci in range(len(st.holdings)):
        if ci not in (lf, keep):
            st.pool[ci] += st.holdings[ci][pres]
            st.holdings[ci][pres] = 0
    assert st.holdings[keep][pres] and st.president[keep] != pres
    others = [t for ci, ts in enumerate(st.trains) if ci != lf for t in ts]
    assert others
    assert Bankrupt() in st.legal_actions(pres)
    sale = next(a for a in st.legal_actions(pres) if isinstance(a, SellShares))
    st.apply(pres, sale)
    # one share sold, all of it needed: the train may cost 1 (cash + sale - sale price + 1)
    st.apply(pres, BuyTrain(others[0], 1))
    assert st.trains[lf] == [others[0]] and not st.is_terminal()


def test_a_corporation_over_the_new_limit_discards():
    """§Trains: when a phase lowers the limit, corporations over it discard (the trains leave
    the game)."""
    st = before(FINAL, 760)  # Belge buys the first D: limit 2
    ouest = C["Ouest"]
    st.trains[ouest] = ["6-1", "7-1", "7-2"]
    st.trains[C["Nord"]] = []
    st.trains[C["AG"]] = []
    st.apply(0, BuyTrain("D-0", 800))
    assert st.discard == [ouest]
    seat = st.president[ouest]
    assert st.active_seats() == (seat,)
    assert set(st.legal_actions(seat)) == {
        DiscardTrain("6-1"),
        DiscardTrain("7-1"),
        DiscardTrain("7-2"),
    }
    refused(st, seat, Pass(), "must_discard")
    st.apply(seat, DiscardTrain("7-1"))
    assert st.trains[ouest] == ["6-1", "7-2"] and not st.discard


def test_buying_privates_only_in_green_blue_brown_within_half_to_double():
    """§Trains and phases: corporations buy privates from players in Green, Blue and Brown,
    at half to double the face value; never a major shareholding."""
    st = before(FINAL, 87)
    nord = C["Nord"]
    refused(st, 1, BuyCompany("AR", 51), "bad_price")
    refused(st, 1, BuyCompany("AR", 12), "bad_price")
    refused(st, 1, BuyCompany("BMS", 200))
    st.apply(1, BuyCompany("AR", 50))
    assert st.private_owner[PRIVATE_INDEX["AR"]] == CORP_OWNER + nord
    yellow = before(FINAL, 83)
    refused(yellow, 1, BuyCompany("AR", 25), "no_company_buying")


def test_ferry_marker_costs_80_or_40_with_london_shipping():
    """§London: a ferry marker costs 80 (40 for LS's owner), one per corporation."""
    st = before(FINAL, 214)
    est = C["Est"]
    cash = st.corp_cash[est]
    st.apply(3, BuyFerry())
    assert st.corp_cash[est] == cash - 80 and st.board.has_ferry("Est")
    refused(st, 3, BuyFerry(), "ferry_owned")
    st2 = before(FINAL, 214)
    st2.private_owner[PRIVATE_INDEX["LS"]] = CORP_OWNER + est
    st2.apply(3, BuyFerry())
    assert st2.corp_cash[est] == cash - 40


def test_london_shipping_token_on_a12():
    """§London: LS lets its corporation put its cheapest token free on A12, once."""
    st = before(FINAL, 169)
    cash = st.corp_cash[C["Nord"]]
    st.apply(1, PlaceToken("A12", 0, "LS"))
    assert ("A12", 0) in st.board.corporation_tokens("Nord") and st.corp_cash[C["Nord"]] == cash
    refused(st, 1, PlaceToken("A12", 0, "LS"), "ls_used")


def test_lrc_keeps_the_track_step_open():
    """§Map (LRC): after two lays the track step stays open while LRC's extra lay could still
    be used (here: a player owns LRC and corporations may buy privates)."""
    st = before(FINAL, 121)
    st.apply(0, LayTile("B13", "8", 5))
    assert st.step == "track" and Pass() in st.legal_actions(0)
    assert not [a for a in st.legal_actions(0) if isinstance(a, LayTile)]


def test_last_or_set_skips_track_and_tokens():
    """§Game end: after the first D, one more full OR set without track and token steps."""
    st = before(FINAL, 838)
    assert st.final_set and st.acting_corporation() == "Est" and st.step == "buy_train"
    refused(st, 3, LayTile("B1", "8", 3), "wrong_step")


def test_lrc_extra_yellow_tile_once_per_game():
    """§Map (LRC): once per game its corporation pays 60 (plus terrain) for an extra yellow
    tile, on top of its two lays."""
    st = before(FINAL, 385)  # AG owns LRC
    ag = C["AG"]
    seat = st.active_seats()[0]
    cash = st.corp_cash[ag]
    st.apply(seat, LayTile("B7", "8", 4, "LRC"))
    assert st.corp_cash[ag] == cash - 60 - 60  # B7 is water (60)
    assert st.lrc_used and st.t_laid == []
    refused(st, seat, LayTile("E14", "8", 1, "LRC"), "lrc_used")
    assert not [a for a in st.legal_actions(seat) if getattr(a, "company", None) == "LRC"]


def test_teleport_lay_counts_as_a_lay_and_allows_a_free_token():
    """§Setup (GLG/SAC): the owning corporation lays or upgrades in its hex without connection
    (one of its two lays), then may place a free token there."""
    st = before(FINAL, 341)  # Belge owns SAC; D17 carries a yellow 57
    belge = C["Belge"]
    hex_id, city = st.board.corporation_tokens("Belge")[-1]
    st.board.remove_token("Belge", hex_id, city)  # give Belge a token to place
    cash = st.corp_cash[belge]
    st.apply(0, LayTile("D17", "619", 5, "SAC"))
    assert st.t_laid == [("D17", True)] and st.board.tile_name("D17") == "619"
    token = [a for a in st.legal_actions(0) if isinstance(a, PlaceToken) and a.company]
    assert token == [PlaceToken("D17", 0, "SAC")]
    left = len(st.board.corporation_tokens("Belge"))
    st.apply(0, token[0])
    assert len(st.board.corporation_tokens("Belge")) == left + 1
    assert st.corp_cash[belge] == cash and st.t_tokened
    refused(st, 0, PlaceToken("D17", 0, "SAC"), "no_teleport_token")


def test_teleport_token_decision_comes_first_and_pass_keeps_the_track_step():
    """Errata A4: after a GLG/SAC teleport lay, with a token left, the private must place the
    free token or pass before anything else; the pass closes only the decision (the
    corporation stays in its track step). Errata A8: the teleport is once per game."""
    st = before(FINAL, 341)  # Belge owns SAC; D17 carries a yellow 57
    hex_id, city = st.board.corporation_tokens("Belge")[-1]
    st.board.remove_token("Belge", hex_id, city)  # give Belge a token to place
    st.apply(0, LayTile("D17", "619", 5, "SAC"))
    assert st.step == "teleport" and st.teleport_used
    assert st.legal_actions(0) == [PlaceToken("D17", 0, "SAC"), Pass()]
    second = next(a for a in before(FINAL, 341).legal_actions(0) if isinstance(a, LayTile))
    refused(st, 0, second, "wrong_step")
    refused(st, 0, BuyFerry())
    st.apply(0, Pass())
    assert st.step == "track" and not st.t_tokened and st.t_laid == [("D17", True)]
    assert not [a for a in st.legal_actions(0) if getattr(a, "company", None) == "SAC"]
    refused(st, 0, LayTile("D17", "X22", 0, "SAC"), "teleport_used")
    refused(st, 0, PlaceToken("D17", 0, "SAC"), "no_teleport_token")


def test_no_teleport_decision_without_a_token_left():
    """Errata A4: a corporation with no token on its charter gets no token decision; the
    teleport is spent all the same (A8)."""
    st = before(FINAL, 341)
    from ..tokens import tokens_left

    assert tokens_left(st.board, "Belge") == 0
    st.apply(0, LayTile("D17", "619", 5, "SAC"))
    assert st.step == "track" and st.teleport_used


def test_final_company_step_waits_only_for_an_affordable_private_or_an_unused_ls():
    """Errata A5: after buying trains the turn waits for a ``pass`` only when the corporation
    can buy a private now (the cheapest minimum price within its cash) or owns LS with the
    A12 token unused; having bought a private earlier in the turn does not hold it."""
    from ..operating_round import _company_step_open
    from ..tokens import tokens_left

    st = at(FINAL, 88)  # Nord in its final buy-company step, Green; players own privates
    nord = C["Nord"]
    assert st.step == "buy_company" and _company_step_open(st, nord)
    st.corp_cash[nord] = 9  # the cheapest minimum price is LRC's 10
    st.t_bought_company = True
    assert st.private_owner[PRIVATE_INDEX["LS"]] == CORP_OWNER + nord
    assert st.board.london_bonus_corporation() is None  # Nord's LS token is unused
    assert _company_step_open(st, nord)
    saved = st.board.clone()
    while tokens_left(st.board, "Nord"):  # synthetic: every Nord token on the map
        st.board.put_token("Nord", "E16", 0)
    assert not _company_step_open(st, nord)  # LS's token needs a token on the charter
    st.board = saved
    st.private_owner[PRIVATE_INDEX["LS"]] = -2  # without LS nothing holds the step
    assert not _company_step_open(st, nord)


def test_after_an_emergency_sale_another_corporations_train_costs_what_the_sale_needed():
    """Reference emergency buy: once the president has sold in the buy-train step, a train
    from another corporation (its face above the corporation's cash) costs at least the
    money of both less the last share's price, plus 1: no more may be sold than needed."""
    from ..operating_round import ebuy_min_price

    st = before(FINAL, 841)
    lf, pres = C["LF"], seat_of(FINAL, 14359)
    st.cash[pres] = 0
    st.corp_cash[lf] = 0
    sale = next(a for a in st.legal_actions(pres) if isinstance(a, SellShares))
    st.apply(pres, sale)
    st.cash[pres] += 50  # synthetic: more money than the sale alone brought
    other = next(t for ci, ts in enumerate(st.trains) if ci != lf for t in ts)
    low = ebuy_min_price(st, lf, 10_000)
    assert low == st.cash[pres] - st.t_sale_price + 1 > 1
    refused(st, pres, BuyTrain(other, low - 1), "sold_more_than_needed")
    # the listed range of its prices starts there (LF has nothing: up to the president's money)
    (prices,) = [
        e
        for e in st.legal_actions(pres)
        if isinstance(e, ActionRange) and isinstance(e.action, BuyTrain) and e.action.train == other
    ]
    assert (prices.min, prices.max) == (low, st.cash[pres])
    st.clone().apply(pres, prices.at(low))


def test_an_unused_ls_token_counts_as_a_free_token_for_the_token_step():
    """Reference engine: the token step waits when the corporation could token a reachable
    city; an unused LS token makes its cheapest token free, so even without the money for
    an ordinary token the step waits (``pass`` or the LS token)."""
    from ..operating_round import _token_step_open

    st = at(FINAL, 38)  # Est in its token step with a city in reach
    est = C["Est"]
    assert st.step == "token" and _token_step_open(st, est)
    st.corp_cash[est] = 0
    assert not _token_step_open(st, est)
    st.private_owner[PRIVATE_INDEX["LS"]] = CORP_OWNER + est
    assert st.board.london_bonus_corporation() is None and _token_step_open(st, est)


def test_no_second_lay_on_the_hex_lrc_laid_this_turn():
    """Reference engine: a turn's second lay may not be on any hex laid in the turn, LRC's
    included (the first lay may upgrade it)."""
    st = before(FINAL, 385)  # AG owns LRC
    seat = st.active_seats()[0]
    st.apply(seat, LayTile("B7", "8", 4, "LRC"))
    assert st.t_lrc_hex == "B7"
    first = next(a for a in st.legal_actions(seat) if isinstance(a, LayTile) and a.hex != "B7")
    st.apply(seat, first)
    assert not [a for a in st.legal_actions(seat) if isinstance(a, LayTile) and a.hex == "B7"]
    refused(st, seat, LayTile("B7", "19", 0), "same_hex")


def test_tokens_removed_by_a_split_come_back_in_the_current_operating_order():
    """Reference engine: at the end of the turn, the corporations whose tokens a split removed
    re-place them in the current operating order (by price now), not in the order the OR
    started with."""
    from ..hexmap import MAP
    from ..market import operating_order
    from ..operating_round import _update_corp

    st = before(FINAL, 577)
    order = operating_order(st)
    first, last = order[0], order[-1]
    d3 = MAP.index("D3")
    st.board.waiting = [(st.corp_sym(last), d3), (st.corp_sym(first), d3)]
    st.or_order = list(reversed(order))  # synthetic: the OR began in another order
    assert _update_corp(st) == first


def test_bankruptcy_outside_the_buy_train_step_sells_nothing():
    """Reference bankruptcy: the president may declare in any step of the corporation's turn
    when its and his cash cannot pay the depot's cheapest train; outside the buy-train step
    (no selling there) he sells nothing, his cash becomes 0 and his shares count."""
    st, pres = _bankrupt_position()
    st.step = "track"  # synthetic: LF still in its track step
    held = [h[pres] for h in st.holdings]
    assert Bankrupt() in st.legal_actions(pres)
    st.apply(pres, Bankrupt())
    assert st.end_reason == "bankrupt" and st.cash[pres] == 0
    assert [h[pres] for h in st.holdings] == held
    st = before(FINAL, 32)  # Belge in its track step with enough money
    refused(st, 0, Bankrupt(), "not_bankrupt")
