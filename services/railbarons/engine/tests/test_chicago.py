"""The Chicago phase and the Wabash (spec §9, with §5 for the order of phases)."""

from __future__ import annotations

from services.railbarons.engine import auction, data, phases
from services.railbarons.engine.tests.helpers import (
    Bid,
    Build,
    Done,
    Pass,
    StartAuction,
    decline_turn,
    lay_track,
    new,
    opening,
    path,
    refuse,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX
HI = data.HEX_INDEX
PRR, BO, WAB = CI["PRR"], CI["BO"], CI["WAB"]


def _at_the_gates(n=4, **options):
    """Seat 0 holds PRR whose network reaches B2 (next to Chicago) avoiding South Bend."""
    st = standard_opening(n, **options)
    lay_track(st, "PRR", path("PRR", "B2", avoid=("C2",)))
    st.treasury[PRR] = 40
    return st


def _types(events):
    return [e["type"] for e in events]


def test_reaching_chicago_pays_a_chicago_dividend_and_opens_the_wabash():
    """§9.1-§9.2: after the turn, that company alone pays a dividend with its income after
    the build; the first time, the Wabash opens on Fort Wayne and the player who reached
    Chicago opens the Wabash auction."""
    st = _at_the_gates()
    income = st.income[PRR]
    cash = list(st.cash)
    turn(st, "expand")
    events = st.apply(0, Build("PRR", "A2"))
    assert _types(events) == ["built"]  # the turn goes on: Chicago phase after it
    assert st.phase == phases.EXPAND and st.chi_pending == PRR
    events = st.apply(0, Build("PRR", "C2"))  # South Bend: city income 1
    events = st.apply(0, Done())
    assert _types(events) == [
        "expansion_done",
        "chicago_phase",
        "dividend",
        "wabash_opened",
    ]
    assert st.income[PRR] == income + 7 + 1
    assert events[2]["kind"] == "chicago" and events[2]["company"] == "PRR"
    assert st.cash[0] - cash[0] == income + 8  # 1 share sold: the whole income
    assert [st.cash[s] - cash[s] for s in (1, 2, 3)] == [0, 0, 0]
    assert st.chicago == 1 << PRR
    assert st.opened >> WAB & 1 and st.net[WAB] == 1 << HI["D3"]
    assert st.income[WAB] == 1 and st.locos[WAB] == 10
    assert st.phase == phases.BIDDING and st.a_kind == phases.KIND_WABASH
    assert data.COMPANY_IDS[st.a_company] == "WAB" and st.active == 0
    assert auction.min_bid(st, WAB) == 1
    assert st.dials == [0, 0, 1]  # the Wabash auction does not move the Auction dial


def test_wabash_auction_then_the_next_player():
    """§9.2/§9.4: the Wabash auction runs like the opening auction; then play resumes with
    the player after the one who reached Chicago. The Wabash is an ordinary open company
    from then on."""
    st = _at_the_gates()
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    st.apply(0, Done())
    st.apply(0, Pass())
    st.apply(1, Bid(3))
    st.apply(2, Pass())
    st.apply(3, Pass())
    assert st.shares_of(1, WAB) == 1 and st.treasury[WAB] == 3
    assert st.phase == phases.DIAL and st.active == 1
    turn(st, "auction")
    assert StartAuction("WAB") in st.legal_actions(1)
    st.apply(1, StartAuction("WAB"))
    assert auction.min_bid(st, WAB) == 1  # ceil(1 / 2)
    st.apply(1, Bid(1))
    for s in (2, 3, 0):
        st.apply(s, Pass())
    assert st.sold[WAB] == 2 and st.shares_of(1, WAB) == 2
    for _ in range(3):
        decline_turn(st, "develop")
    assert st.active == 1
    turn(st, "expand")
    assert Build("WAB", "C3") in st.legal_actions(1)
    st.apply(1, Build("WAB", "C3"))
    assert st.net[WAB] >> HI["C3"] & 1


def test_chicago_phase_comes_before_the_dividend_phase():
    """§5/§9.3: if the Chicago turn also put a second dial in red, the Chicago phase (and
    its Wabash auction) come first, then the General Dividend phase."""
    st = _at_the_gates()
    st.dials = [3, 0, 4]  # Auction in red; this expansion puts Expand in red
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    events = st.apply(0, Done())
    assert "general_dividend" not in _types(events)
    assert st.a_kind == phases.KIND_WABASH
    st.apply(0, Bid(1))
    events = []
    for s in (1, 2, 3):
        events += st.apply(s, Pass())
    kinds = _types(events)
    assert kinds.index("share_sold") < kinds.index("general_dividend")
    assert st.rounds == 1 and st.dials == [0, 0, 0]
    assert st.active == 1 and st.phase == phases.DIAL


def test_later_arrivals_only_pay_their_chicago_dividend():
    """§9: every company's first arrival triggers a Chicago phase (dividend); the Wabash
    opens only the first time."""
    st = _at_the_gates()
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    st.apply(0, Done())
    st.apply(0, Bid(1))
    for s in (1, 2, 3):
        st.apply(s, Pass())
    lay_track(st, "BO", path("BO", "A3", avoid=("A2",)))
    st.treasury[BO] = 20
    cash = st.cash[1]
    turn(st, "expand")  # seat 1 holds B&O
    st.apply(1, Build("BO", "A2"))
    events = st.apply(1, Done())
    assert _types(events) == ["expansion_done", "chicago_phase", "dividend"]
    assert events[1]["first"] is False
    assert st.cash[1] - cash == st.income[BO]
    assert st.chicago == (1 << PRR) | (1 << BO)
    assert st.phase == phases.DIAL and st.active == 2


def test_third_build_into_chicago_ends_the_turn_with_the_phase():
    """§7/§9: a Chicago build as the third locomotive ends the action; the phase follows."""
    st = standard_opening(4)
    chain = path("PRR", "A2")
    lay_track(st, "PRR", chain[:-3])
    st.treasury[PRR] = 40
    turn(st, "expand")
    st.apply(0, Build("PRR", chain[-3]))
    st.apply(0, Build("PRR", chain[-2]))
    events = st.apply(0, Build("PRR", "A2"))
    assert _types(events)[:2] == ["built", "chicago_phase"]


def test_wabash_options():
    """§2/§9 [U]: wabash_start_income, wabash_start_locomotive_from_supply and
    wabash_auction_uses_dial."""
    st = _at_the_gates(
        wabash_start_income=4,
        wabash_start_locomotive_from_supply=False,
        wabash_auction_uses_dial=True,
    )
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    st.apply(0, Done())
    assert st.income[WAB] == 4 and st.locos[WAB] == 11
    assert st.dials == [1, 0, 1]
    assert st.legal_actions(0)[1] == Bid(4)


def test_wabash_is_closed_before_chicago():
    """§9: the Wabash cannot be auctioned or built before the first Chicago phase."""
    st = standard_opening(4)
    turn(st, "auction")
    refuse(st, 0, StartAuction("WAB"), "company_not_open", "§9")


def test_starter_must_bid_also_binds_the_wabash_auction():
    """§9.2 + §4 [U] (initial_auction_no_bid = starter_must_bid): the Wabash auction is
    "run like the initial auction", so its starter (the player who reached Chicago) must
    open at the minimum when he can pay, exactly as an opening-auction starter must."""
    st = opening(
        new(4, initial_auction_no_bid="starter_must_bid"), [(0, 7), (0, 6), (0, 5), (0, 8)]
    )
    lay_track(st, "PRR", path("PRR", "B2", avoid=("C2",)))
    st.treasury[PRR] = 40
    assert st.cash[0] == 30 - 26
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    st.apply(0, Done())
    assert st.a_kind == phases.KIND_WABASH and st.active == 0
    assert Pass() not in st.legal_actions(0)
    refuse(st, 0, Pass(), "must_open", "§6.3/§4")
    st.apply(0, Bid(1))
    assert Pass() in st.legal_actions(1)  # only the starter is bound
    default = _at_the_gates()
    turn(default, "expand")
    default.apply(0, Build("PRR", "A2"))
    default.apply(0, Done())
    assert Pass() in default.legal_actions(0)  # stays_unsold: the starter may pass


def test_unsold_wabash_share_stays_with_the_company():
    """§9.2 / §6.7 [U]: nobody bids for the Wabash share: it stays unsold, the Wabash is open
    all the same (it can be auctioned later with the Auction dial, minimum bid = its
    income), the Auction dial is untouched, and the next player plays (§9.4)."""
    st = _at_the_gates()
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    st.apply(0, Done())
    events = []
    for s in (0, 1, 2, 3):
        events += st.apply(s, Pass())
    assert {"type": "share_unsold", "company": "WAB"} in events
    assert st.sold[WAB] == 0 and st.treasury[WAB] == 0 and st.opened >> WAB & 1
    assert st.dials == [0, 0, 1]
    assert st.phase == phases.DIAL and st.active == 1
    turn(st, "auction")
    assert StartAuction("WAB") in st.legal_actions(1)
    st.apply(1, StartAuction("WAB"))
    assert st.legal_actions(1)[1] == Bid(1)


def test_wabash_auction_putting_the_auction_dial_in_red_starts_the_dividend_phase():
    """§5/§9.2/§9.3 (wabash_auction_uses_dial = True): when the Wabash auction moves the
    Auction dial into its red zone and the Chicago turn had put another dial in red, two
    dials are in red: the General Dividend phase follows the Wabash auction."""
    st = _at_the_gates(wabash_auction_uses_dial=True)
    st.dials = [2, 0, 4]
    turn(st, "expand")  # Expand reaches 5: in red
    st.apply(0, Build("PRR", "A2"))
    st.apply(0, Done())
    assert st.dials == [3, 0, 5] and st.a_kind == phases.KIND_WABASH
    events = st.apply(0, Bid(1))
    for s in (1, 2, 3):
        events += st.apply(s, Pass())
    assert "general_dividend" in _types(events)
    assert st.rounds == 1 and st.dials == [0, 0, 0]
    assert st.phase == phases.DIAL and st.active == 1


def test_the_wabash_cannot_be_built_before_it_opens():
    """§9: the Wabash is not open before the first Chicago phase; a build is refused."""
    st = standard_opening(4)
    turn(st, "expand")
    refuse(st, 0, Build("WAB", "C3"), "company_not_open", "§9")
