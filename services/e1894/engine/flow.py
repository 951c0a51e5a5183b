"""The flow of a game of 1894: which round, which step of an operating turn and whose move
come next. The only place that sequences the rounds and the steps; the round and step modules
never start one another.

Spec: the 1894 rules summary, "Setup and auction", "Shares and the stock market", "Trains
and phases", "Game end"; designer's rules 1.0.3 sections 4 (game sequence), 7.1-7.3 (the
operating round and its steps) and 8.1 (game end).

* The private auction (:mod:`.auction`) is followed by the first stock round.
* A stock round (:mod:`.stock_round`) ends when every player has passed in a row; unless a
  price reached the 450 cell, an OR set follows: 1, 2 or 3 ORs by the phase when it starts
  (:data:`.data.PHASES`), the last set once the first D has been bought (the phases
  themselves change when a train is bought, :mod:`.trains`).
* An OR (:mod:`.operating_round`): private revenue, then each floated corporation's turn in
  operating order, re-sorted after every turn. A turn runs the steps of
  :data:`OPERATING_STEPS` in order, skipping each with nothing to decide (its unit's
  ``skip``); a step inside another (:data:`INNER_STEPS`) resumes the step it was entered
  from.
  A corporation over the train limit discards before anything else.
* After the last OR of a set: the next stock round, or the end of the game after the last
  set. A price at 450 ends the game once the current action and the automatic steps after it
  are done; a bankruptcy ends it at once (:mod:`.bankruptcy`).

The steps speak the kernel's vocabulary (:mod:`services.kernel.steps`): each is a
:class:`.operating_round.common.OperatingStep`, a move goes to the running step when the step
``HANDLES`` it (:func:`services.kernel.steps.handles`), a move of another step is refused
``wrong_step``, and :func:`advance` is the kernel's skip/advance loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel import steps
from services.kernel.engine import Action, Event, IllegalAction, LegalAction
from services.kernel.steps import handles

from . import auction, bankruptcy, stock_round
from .actions import (
    Bankrupt,
    BuyTrain,
    DiscardTrain,
    Dividend,
    LayTile,
    Pass,
    PlaceToken,
    RedeemShare,
    ReissueShares,
    RunRoutes,
    SellShares,
)
from .data import CORPS, PHASES
from .market import operating_order, order_key
from .operating_round import (
    anytime,
    buy_company,
    buy_train,
    dividend,
    home,
    redeem,
    replace,
    route,
    teleport_token,
    token,
    track,
    update,
)
from .operating_round.common import (
    DONE,
    S_TRACK,
    S_TRAINS,
    OperatingStep,
    clear_turn_record,
    operating_corp,
    wrong_step,
)
from .privates import pay_revenue

if TYPE_CHECKING:
    from .state import E1894State

OPERATING_STEPS: tuple[OperatingStep, ...] = (
    home,
    redeem,
    track,
    token,
    route,
    dividend,
    buy_train,
    buy_company,
    update,
)
"""The steps of a corporation's turn, in order (designer's rules 7.3.1-7.3.8 and the final
buy-companies step of the reference engine)."""

INNER_STEPS: dict[str, str] = {replace.NAME: track.NAME, teleport_token.NAME: track.NAME}
"""Steps entered from inside another one, and the step each resumes when done by default;
both return the step of the lay that opened them, ``t_teleport_step``: the track step or,
for a private's lay made early, the redeem step."""

STEPS: dict[str, OperatingStep] = {u.NAME: u for u in (*OPERATING_STEPS, replace, teleport_token)}
"""Every step unit by its name (the value of ``E1894State.step``)."""

_NEXT: dict[str, str] = {
    a.NAME: b.NAME for a, b in zip(OPERATING_STEPS, OPERATING_STEPS[1:], strict=False)
} | INNER_STEPS

_STEP_MOVES = (RedeemShare, ReissueShares, LayTile, RunRoutes, Dividend, BuyTrain)
"""Operating moves that belong to one step: elsewhere they are ``wrong_step``."""


# ====================================================================== whose move


def acting_corp(st: E1894State) -> int:
    """The corporation that must act now in an OR (the operating one, one discarding a train,
    or one re-placing a token after a split)."""
    if st.discard:
        return st.discard[0]
    if st.step == update.NAME:
        return update.update_corp(st)
    return operating_corp(st)


def active_seats(st: E1894State) -> tuple[int, ...]:
    """The seat to move: the auction's or stock round's player, or the president of the
    acting corporation; none once the game is over."""
    r = st.round
    if r == "stock":
        return (stock_round.active_seat(st),)
    if r == "operating":
        return (st.president[acting_corp(st)],)
    if r == "auction":
        return (auction.active_seat(st),)
    return ()


# ====================================================================== legal moves and applying


def legal(st: E1894State, seat: int) -> list[LegalAction]:
    """Every legal move of ``seat``, the seat to move (the caller checks that)."""
    r = st.round
    if r == "stock":
        return stock_round.legal(st, seat)
    if r == "operating":
        return _operating_legal(st)
    return auction.legal(st, seat)


def apply(st: E1894State, seat: int, action: Action) -> list[Event]:
    """Check and apply ``action`` of ``seat`` in the current round (raising before any
    change), then run what follows without a decision: skipped steps, the next turns, rounds
    and sets, the end of the game."""
    r = st.round
    if r == "stock":
        events = stock_round.apply(st, seat, action)
    elif r == "operating":
        events = _operating_apply(st, seat, action)
    else:
        events = auction.apply(st, seat, action)
    _start_next_rounds(st)
    if r == "operating" and st.round == "operating":
        # the 450 cell ends the game once the action and the automatic steps after it are
        # done, within this OR (reference engine: the end check follows the round's own
        # processing)
        st.check_stock_market_end()
    return events


def _operating_legal(st: E1894State) -> list[LegalAction]:
    """The step's own moves; in a step of the corporation's own turn also bankruptcy (when
    allowed) and the moves open all turn long. A crowded corporation only discards."""
    if st.discard:
        return buy_train.discard_options(st)
    ci = operating_corp(st)
    unit = STEPS[st.step]
    out = unit.legal(st, ci)
    if unit.OWN_TURN:
        if anytime.can_go_bankrupt(st, ci):
            out.append(Bankrupt())
        out.extend(anytime.legal(st, ci))
    return out


def _operating_apply(st: E1894State, seat: int, action: Action) -> list[Event]:
    if st.discard:
        events = buy_train.discard(st, action)
        advance(st)
        return events
    ci = operating_corp(st)
    step = st.step
    unit = STEPS[step]
    if anytime.is_anytime(action):
        if not unit.OWN_TURN:
            raise wrong_step(action, step)
        events, outcome = anytime.apply(st, ci, action), None
    elif handles(unit, action):
        events, outcome = unit.apply(st, ci, seat, action)
    elif isinstance(action, PlaceToken):
        raise token.refuse(action, step)
    elif unit.WAITS_FOR_TOKEN:
        raise IllegalAction("token_pending", f"{S_TRACK}: a token must be placed first ({step})")
    elif isinstance(action, Bankrupt):
        if not (unit.OWN_TURN and anytime.can_go_bankrupt(st, ci)):
            raise IllegalAction(
                "not_bankrupt",
                f"{S_TRAINS}: bankruptcy only when the corporation's and its president's money "
                "(and, in the buy-train step, all he may sell) cannot pay the depot's cheapest "
                "train",
            )
        return bankruptcy.declare(st, ci)
    else:
        raise _refusal(st, ci, step, action)
    if outcome == DONE:
        st.step = _NEXT[step]
    elif outcome is not None:
        st.step = outcome
    advance(st)
    return events


def _refusal(st: E1894State, ci: int, step: str, action: Action) -> Exception:
    """Why ``action`` is refused in ``step`` when the step does not take it."""
    if isinstance(action, Pass):
        return IllegalAction("cannot_pass", f"§Operating round: the {step} step cannot be passed")
    if isinstance(action, SellShares):
        return buy_train.refuse_sale(st, ci, action)
    if isinstance(action, DiscardTrain):
        return IllegalAction("no_discard", f"{S_TRAINS}: no corporation is over its train limit")
    if isinstance(action, _STEP_MOVES):
        return wrong_step(action, step)
    return IllegalAction(
        "not_in_operating_round",
        f"§Operating round: {action.TYPE} is not possible in an operating round",
    )


# ====================================================================== steps of a turn


def advance(st: E1894State) -> None:
    """Skip the steps with nothing to decide (each unit's ``skip`` does its automatic part),
    end the turns that are over and start the next ones; stop at the first decision, when a
    corporation must discard, or when the OR set is over."""
    steps.advance(
        st,
        running=_undecided,
        unit_of=_running_step,
        skip=_skips,
        still_running=_operating,
        move_on=_move_on,
    )


def _undecided(st: E1894State) -> bool:
    return st.round == "operating" and not st.discard


def _operating(st: E1894State) -> bool:
    return st.round == "operating"


def _running_step(st: E1894State) -> OperatingStep:
    return STEPS[st.step]


def _skips(unit: OperatingStep, st: E1894State) -> bool:
    return unit.skip(st, operating_corp(st))


def _move_on(st: E1894State, unit: OperatingStep) -> None:
    """After a skipped step: the next step, or the end of the turn after the last one."""
    if unit is update:
        _end_turn(st)
    else:
        st.step = _NEXT[st.step]


# ====================================================================== rounds


def _start_next_rounds(st: E1894State) -> None:
    """Start the round that follows a finished auction or stock round (and again, while the
    new round finishes at once)."""
    while True:
        if st.round == "auction" and auction.is_over(st):
            stock_round.start_stock_round(st)
        elif st.round == "stock" and stock_round.is_over(st):
            if st.check_stock_market_end():  # a sold-out rise reached 450
                return
            start_operating_set(st)
        else:
            return


def start_operating_set(st: E1894State) -> None:
    """After a stock round: the next OR set (the last one if the first D has been bought)."""
    st.final_set = st.last_set_triggered
    st.or_total = PHASES[st.phase].operating_rounds
    st.or_num = 1
    _start_operating_round(st)
    advance(st)


def _start_operating_round(st: E1894State) -> None:
    """One OR: private revenue, then the floated corporations in operating order."""
    st.round = "operating"
    st.or_events = pay_revenue(st)
    st.or_order = operating_order(st)
    st.or_pos = 0
    _start_turn(st)


def _start_turn(st: E1894State) -> None:
    st.step = home.NAME
    clear_turn_record(st)


def _end_turn(st: E1894State) -> None:
    """The operating corporation's turn is over: the next corporation, the next OR, the next
    stock round or the end of the game."""
    st.or_pos += 1
    # the corporations still to operate are re-sorted by their current share prices
    rest = st.or_order[st.or_pos :]
    rest.sort(key=lambda ci: order_key(st, ci))
    st.or_order[st.or_pos :] = rest
    if st.or_pos < len(st.or_order):
        _start_turn(st)
        return
    if st.check_stock_market_end():  # a price reached 450 in this OR: no next round
        return
    if st.or_num < st.or_total:
        st.or_num += 1
        _start_operating_round(st)
        return
    if st.final_set:
        st.end_game("final_phase")
        return
    stock_round.start_stock_round(st)


def acting_corporation(st: E1894State) -> str:
    """Symbol of the corporation that must act in an OR, else ``""``."""
    if st.round != "operating":
        return ""
    return CORPS[acting_corp(st)].sym
