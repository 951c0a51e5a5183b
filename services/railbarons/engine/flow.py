"""Sequencing of the turn structure (spec §4, §5, §9, §10): which step follows which.

* Opening auction (§4): one share each of PRR, B&O, C&O, NYC in that order; the buyer of a
  share opens the next auction (same starter when unsold, ``initial_auction_no_bid`` [U]);
  the buyer of the PRR share takes the first turn (§4 [V]). If the PRR share stayed unsold
  the first buyer of the opening auction starts, or the banker if nothing sold [U, engine].
* A turn (§5): ``choose_dial`` then the action or ``decline``. When the action is finished
  (:func:`end_of_turn`): a pending Chicago phase (§9) - possibly with its Wabash auction -
  then a General Dividend phase if two dials are in red (§5, §10), then the next seat
  clockwise.

The steps use the vocabulary every title shares (:mod:`services.kernel.steps`): each is a
:class:`services.kernel.steps.TableStep` with a ``NAME``, the action classes it ``HANDLES``
(each with its handler), its ``legal`` moves, its ``apply`` (validate, then change) and its
``skip`` predicate; :data:`STEPS` lists them, a move goes to the step that takes its class
(:func:`services.kernel.steps.by_action`), and :func:`legal` / :func:`apply` are the flow's
entry points, as in 1894's ``flow.py``. A step here is one :mod:`.phases` code (its
``key``). No step of Chicago Express is ever skipped: the phases without a decision
(Chicago, General Dividend) are resolved inside ``apply`` (:func:`end_of_turn`).

Every handler validates completely before it changes anything (the contract of ``apply``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, MalformedAction
from services.kernel.steps import TableStep, by_action, wrong_step
from services.railbarons.engine import (
    auction,
    chicago,
    data,
    development,
    dials,
    dividends,
    end,
    expansion,
    phases,
)
from services.railbarons.engine.actions import (
    AUCTION_ACTIONS,
    DECLINE,
    Bid,
    Build,
    ChooseDial,
    Decline,
    Develop,
    Done,
    Pass,
    StartAuction,
)
from services.railbarons.engine.options import DIAL_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES

_EXPECTED = {
    phases.BIDDING: "bid or pass in the running auction (§6)",
    phases.DIAL: "choose a dial (§5)",
    phases.AUCTION: "put a share up for auction or decline (§5, §6)",
    phases.EXPAND: "build, done or decline (§7)",
    phases.DEVELOP: "develop a hex or decline (§8)",
}


_SECTION = {
    "choose_dial": "§5",
    "auction": "§6",
    "bid": "§6",
    "pass": "§6",
    "build": "§7",
    "done": "§7",
    "develop": "§8",
    "decline": "§5",
}


def _wrong_step(st: RailbaronsState, action: Action) -> IllegalAction:
    return wrong_step(
        f"'{action.TYPE}' ({_SECTION[action.TYPE]}) is not possible now: seat {st.active} "
        f"must {_EXPECTED.get(st.phase, 'wait')}"
    )


def company_index(cid: str) -> int:
    """Index of a company id. Raises :class:`MalformedAction` (``unknown_company``)."""
    c = data.COMPANY_INDEX.get(cid) if isinstance(cid, str) else None
    if c is None:
        raise MalformedAction(
            "unknown_company",
            f"unknown company {cid!r}; expected one of {', '.join(data.COMPANY_IDS)}",
        )
    return c


def hex_index(hid: str) -> int:
    """Index of a hex id. Raises :class:`MalformedAction` (``unknown_hex``)."""
    h = data.HEX_INDEX.get(hid) if isinstance(hid, str) else None
    if h is None:
        raise MalformedAction("unknown_hex", f"unknown hex {hid!r} (ids like 'A2' .. 'S5')")
    return h


# ----------------------------------------------------------------------------- sequencing


def end_of_turn(st: RailbaronsState, ev: list[Event]) -> None:
    """The turn's action is finished: Chicago phase, dividend phase, next turn (§5, §9)."""
    end.check(st, ev)
    st.x_company = -1
    st.x_hexes = ()
    c = st.chi_pending
    if c >= 0:
        st.chi_pending = -1
        if chicago.chicago_phase(st, c, st.turn, ev):
            return  # the Wabash auction runs; after_chicago follows it
    after_chicago(st, ev)


def after_chicago(st: RailbaronsState, ev: list[Event]) -> None:
    """Second half of :func:`end_of_turn`: the General Dividend phase if two dials are in
    red (§5), then the next player clockwise (§9.4)."""
    end.check(st, ev)
    if dials.red_count(st) >= 2:
        if dividends.general_dividend_phase(st, ev):
            return
    next_turn(st)


def next_turn(st: RailbaronsState) -> None:
    """The seat after the turn player starts his turn (§5)."""
    s = st.turn + 1
    if s == st.num_players:
        s = 0
    st.turn = s
    st.active = s
    st.phase = phases.DIAL
    st.x_company = -1
    st.x_hexes = ()


def after_auction(st: RailbaronsState, ev: list[Event]) -> None:
    """An auction has been resolved (``a_bidder`` = winner or -1): continue by its kind."""
    kind = st.a_kind
    winner = st.a_bidder
    company = st.a_company
    starter = st.a_starter
    st.a_kind = phases.KIND_NONE
    if kind == phases.KIND_NORMAL:
        if winner < 0 and not st.rules.spend_on_unsold:
            st.dials[dials.AUCTION_DIAL] -= 1
        end_of_turn(st, ev)
    elif kind == phases.KIND_WABASH:
        after_chicago(st, ev)
    else:
        _after_opening_auction(st, winner, company, starter, ev)


def _after_opening_auction(
    st: RailbaronsState, winner: int, company: int, starter: int, ev: list[Event]
) -> None:
    rules = st.rules
    if winner >= 0 and st.first_player < 0:
        # PRR is sold first, so this is the PRR buyer unless that share stayed unsold
        st.first_player = winner
    st.opening_i += 1
    if rules.next_starter_clockwise:
        starter = (starter + 1) % st.num_players
    elif winner >= 0:
        starter = winner
    if st.opening_i < len(data.INITIAL_ORDER):
        auction.start(st, phases.KIND_OPENING, data.INITIAL_ORDER[st.opening_i], starter)
        return
    first = st.first_player if st.first_player >= 0 else st.turn
    st.first_player = first  # also when no opening share sold: the banker starts [U, engine]
    ev.append({"type": "play_begins", "seat": first})
    st.turn = first
    st.active = first
    st.phase = phases.DIAL


# ----------------------------------------------------------------------------- handlers


def _choose_dial(st: RailbaronsState, seat: int, action: ChooseDial, ev: list[Event]) -> None:
    d = dials.dial_index(action.dial)
    if st.phase != phases.DIAL:
        raise _wrong_step(st, action)
    dials.check_choose(st, d)
    dials.choose(st, seat, d, ev)


def _start_auction(st: RailbaronsState, seat: int, action: StartAuction, ev: list[Event]) -> None:
    c = company_index(action.company)
    if st.phase != phases.AUCTION:
        raise _wrong_step(st, action)
    if not (st.opened >> c) & 1:
        raise IllegalAction(
            "company_not_open",
            f"§6.1/§9: {action.company} is not open (the Wabash opens at the first Chicago phase)",
        )
    if st.sold[c] >= data.SHARES[c]:
        raise IllegalAction("sold_out", f"§6.1: {action.company} has no unsold shares")
    ev.append(
        {
            "type": "auction_started",
            "seat": seat,
            "company": action.company,
            "minimum_bid": auction.min_bid(st, c),
        }
    )
    auction.start(st, phases.KIND_NORMAL, c, seat)


def _bid(st: RailbaronsState, seat: int, action: Bid, ev: list[Event]) -> None:
    if st.phase != phases.BIDDING:
        raise _wrong_step(st, action)
    amount = action.amount
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise MalformedAction("bad_field", "bid.amount must be an integer")
    auction.check_bid(st, seat, amount)
    if auction.bid(st, seat, amount, ev):
        after_auction(st, ev)


def _pass(st: RailbaronsState, seat: int, action: Pass, ev: list[Event]) -> None:
    if st.phase != phases.BIDDING:
        raise _wrong_step(st, action)
    auction.check_pass(st, seat)
    if auction.pass_(st, seat, ev):
        after_auction(st, ev)


def _build(st: RailbaronsState, seat: int, action: Build, ev: list[Event]) -> None:
    c = company_index(action.company)
    h = hex_index(action.hex)
    if st.phase != phases.EXPAND:
        raise _wrong_step(st, action)
    expansion.check_build(st, seat, c, h)
    if expansion.build(st, seat, c, h, ev):
        end_of_turn(st, ev)


def _done(st: RailbaronsState, seat: int, action: Done, ev: list[Event]) -> None:
    if st.phase != phases.EXPAND or st.x_company < 0:
        if st.phase == phases.EXPAND:
            raise IllegalAction(
                "nothing_built",
                "§7: 'done' ends an expansion after 1 or 2 locomotives; to build nothing, decline",
            )
        raise _wrong_step(st, action)
    ev.append({"type": "expansion_done", "seat": seat, "built": len(st.x_hexes)})
    end_of_turn(st, ev)


def _develop(st: RailbaronsState, seat: int, action: Develop, ev: list[Event]) -> None:
    h = hex_index(action.hex)
    if st.phase != phases.DEVELOP:
        raise _wrong_step(st, action)
    development.check(st, seat, h)
    development.develop(st, seat, h, ev)
    end_of_turn(st, ev)


def _decline(st: RailbaronsState, seat: int, action: Decline, ev: list[Event]) -> None:
    p = st.phase
    if p not in (phases.AUCTION, phases.EXPAND, phases.DEVELOP):
        raise _wrong_step(st, action)
    if p == phases.EXPAND and st.x_company >= 0:
        raise IllegalAction(
            "already_building", "§7: locomotives were placed in this action; finish with 'done'"
        )
    ev.append({"type": "declined", "seat": seat, "dial": DIAL_NAMES[_DIAL_OF[p]]})
    end_of_turn(st, ev)


_DIAL_OF = {phases.AUCTION: 0, phases.DEVELOP: 1, phases.EXPAND: 2}


def _legal_auction_choice(st: RailbaronsState, seat: int) -> list[Action]:
    out: list[Action] = [DECLINE]
    opened = st.opened
    sold = st.sold
    for c in range(NC):
        if (opened >> c) & 1 and sold[c] < data.SHARES[c]:
            out.append(AUCTION_ACTIONS[c])
    return out


STEPS: dict[int, TableStep] = {
    step.key: step
    for step in (
        TableStep("bidding", {Bid: _bid, Pass: _pass}, auction.legal, key=phases.BIDDING),
        TableStep("choose_dial", {ChooseDial: _choose_dial}, dials.legal, key=phases.DIAL),
        TableStep(
            "auction",
            {StartAuction: _start_auction, Decline: _decline},
            _legal_auction_choice,
            key=phases.AUCTION,
        ),
        TableStep(
            "expand",
            {Build: _build, Done: _done, Decline: _decline},
            expansion.legal,
            key=phases.EXPAND,
        ),
        TableStep(
            "develop", {Develop: _develop, Decline: _decline}, development.legal, key=phases.DEVELOP
        ),
    )
}
"""Phase code -> its step, in the order of the turn (§4-§8)."""

_STEP_OF: dict[type[Action], TableStep] = by_action(STEPS.values())
"""Action class -> the step that takes it, whichever step is running: its handler itself
refuses an action of another step (``wrong_step``), after checking the action's own fields."""


def legal(st: RailbaronsState, seat: int) -> list[Action]:
    """The moves of the running step for ``seat`` (the active seat; the caller checks)."""
    return STEPS[st.phase].legal(st, seat)


def apply(st: RailbaronsState, seat: int, action: Action) -> list[Event]:
    """Apply ``action`` of the active ``seat`` (the caller checks the seat and the game's end)
    and return its events.

    Raises:
        MalformedAction: ``unknown_action_type`` (not a Chicago Express action), or as the
            handler. IllegalAction: ``wrong_step`` or the rule's own code; nothing changed.
    """
    step = _STEP_OF.get(type(action))
    if step is None:
        raise MalformedAction("unknown_action_type", f"{action!r} is not a railbarons action")
    events: list[Event] = []
    step.apply(st, seat, action, events)
    return events
