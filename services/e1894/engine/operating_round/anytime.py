"""Moves open in every step of a corporation's own turn (the steps whose unit has
``OWN_TURN``): buy a private from a player, buy a ferry marker, use London shipping's token,
declare bankruptcy.

Spec: the 1894 rules summary, "Trains and phases" (privates bought in the Green, Blue and
Brown phases), "London, ferries and bonuses" (ferry markers, LS's A12 token), "Game end" and
:mod:`..bankruptcy` (the reference's condition for a bankruptcy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import (
    Action,
    ActionRange,
    Event,
    IllegalAction,
    LegalAction,
    MalformedAction,
)

from .. import tokens as tokens_mod
from ..actions import BuyCompany, BuyFerry, PlaceToken
from ..data import CORPS, FERRY_COST, FERRY_COST_LS, PHASES, PRIVATE_INDEX, PRIVATES
from ..privates import CORP_OWNER, buyable_by_corps, price_range
from .buy_train import depot_price, liquidation_value, president_cash
from .common import BUY_TRAIN, S_LONDON, S_TRAINS, cached, owns

if TYPE_CHECKING:
    from ..state import E1894State


def is_anytime(action: Action) -> bool:
    """A private purchase, a ferry marker or LS's token (bankruptcy is :func:`can_go_bankrupt`)."""
    return isinstance(action, (BuyCompany, BuyFerry)) or (
        isinstance(action, PlaceToken) and action.company == "LS"
    )


def ferry_cost(st: E1894State, ci: int) -> int:
    """Price of a ferry marker for ``ci`` (less with LS)."""
    return FERRY_COST_LS if owns(st, ci, "LS") else FERRY_COST


def can_buy_ferry(st: E1894State, ci: int) -> bool:
    """True if the corporation may take a ferry marker (:func:`..tokens.check_ferry_purchase`),
    cached."""

    def compute() -> bool:
        try:
            tokens_mod.check_ferry_purchase(st.board, CORPS[ci].sym)
        except IllegalAction:
            return False
        return True

    return cached(st, "ferry", ci, compute)


def can_go_bankrupt(st: E1894State, ci: int) -> bool:
    """Bankruptcy is allowed (reference engine, :mod:`..bankruptcy`) in a step of the
    corporation's own turn when its cash and its president's cash, plus in the buy-train step
    all he could sell by the emergency rules, are below the depot's cheapest train. Neither a
    train it must buy nor another corporation's train matters. The caller checks that the
    step is one of the corporation's own."""
    funds = st.corp_cash[ci] + president_cash(st, ci)
    if st.step == BUY_TRAIN:
        funds += liquidation_value(st, ci)
    return funds < depot_price(st)


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """A price range per private the corporation may buy, the ferry marker, LS's token."""
    out: list[LegalAction] = []
    sym = CORPS[ci].sym
    cash = st.corp_cash[ci]
    if PHASES[st.phase].can_buy:
        for pi in buyable_by_corps(st):
            lo, hi = price_range(pi)
            prices = ActionRange.of(BuyCompany(PRIVATES[pi].sym, lo), "price", lo, min(hi, cash))
            if prices is not None:
                out.append(prices)
    if cash >= ferry_cost(st, ci) and can_buy_ferry(st, ci):
        out.append(BuyFerry())
    if owns(st, ci, "LS") and not st.final_set:
        try:
            tokens_mod.check_ls_token(st.board, sym)
            out.append(PlaceToken("A12", 0, "LS"))
        except IllegalAction:
            pass
    return out


def apply(st: E1894State, ci: int, action: Action) -> list[Event]:
    """A private purchase, a ferry marker or LS's token; the step goes on.

    Raises:
        MalformedAction: ``unknown_company``.
        IllegalAction: ``no_company_buying``, ``not_player_owned``, ``no_buy``, ``bad_price``,
            ``insufficient_cash``, ``not_owner``, ``last_set``, ``ls_a12``, and the ferry and
            LS token rules' codes (:mod:`..tokens`).
    """
    sym = CORPS[ci].sym
    if isinstance(action, BuyCompany):
        return _buy_company(st, ci, action)
    if isinstance(action, BuyFerry):
        cost = ferry_cost(st, ci)
        tokens_mod.check_ferry_purchase(st.board, sym)
        if st.corp_cash[ci] < cost:
            raise IllegalAction("insufficient_cash", f"{S_LONDON}: a ferry marker costs {cost}")
        st.corp_cash[ci] -= cost
        st.board.give_ferry(sym)
        return [{"type": "ferry", "corporation": sym, "cost": cost}]
    assert isinstance(action, PlaceToken)
    if not owns(st, ci, "LS"):
        raise IllegalAction("not_owner", f"{S_LONDON}: {sym} does not own LS")
    if st.final_set:
        raise IllegalAction("last_set", "§Game end: no tokens in the last OR set")
    if action.hex != "A12" or action.city != 0:
        raise IllegalAction("ls_a12", f"{S_LONDON}: LS's token goes on A12")
    tokens_mod.place_ls_token(st.board, sym)
    return [{"type": "token", "corporation": sym, "hex": "A12", "city": 0}]


def _buy_company(st: E1894State, ci: int, action: BuyCompany) -> list[Event]:
    sym = CORPS[ci].sym
    pi = PRIVATE_INDEX.get(action.company)
    if pi is None:
        raise MalformedAction("unknown_company", f"no private named {action.company!r}")
    if not PHASES[st.phase].can_buy:
        raise IllegalAction(
            "no_company_buying",
            f"{S_TRAINS}: corporations buy privates only in the Green, Blue and Brown phases",
        )
    owner = st.private_owner[pi]
    if not 0 <= owner < CORP_OWNER:
        raise IllegalAction(
            "not_player_owned", f"{S_TRAINS}: {action.company} is not owned by a player"
        )
    if PRIVATES[pi].major_of:
        raise IllegalAction(
            "no_buy", f"§Setup and auction: {action.company} may not be sold to a corporation"
        )
    lo, hi = price_range(pi)
    if not lo <= action.price <= hi:
        raise IllegalAction("bad_price", f"{S_TRAINS}: {action.company} sells for {lo} to {hi}")
    if st.corp_cash[ci] < action.price:
        raise IllegalAction("insufficient_cash", f"{S_TRAINS}: {sym} has {st.corp_cash[ci]}")
    st.corp_cash[ci] -= action.price
    st.cash[owner] += action.price
    st.private_owner[pi] = CORP_OWNER + ci
    st.t_bought_company = True
    return [
        {
            "type": "bought_private",
            "corporation": sym,
            "company": action.company,
            "price": action.price,
        }
    ]
