"""Static evaluation of 1894 positions for the one-step ``greedy`` policy.

``evaluate(state, seat)`` estimates ``seat``'s final worth (the score is cash + shares at the
market price + face value of privates, spec "Game end") minus the best opponent's, adding to
each player's present worth his share of what the corporations hold that will turn into
revenue later:

* a corporation's treasury counts at half its value for its shareholders (money in a
  treasury earns nothing until it buys trains or track);
* its trains count at 1.5 times their face value while the phase lets them run (a train is
  what makes routes, dividends and price rises), trains about to rust at nothing;
* every train sold by the depot counts ``PROGRESS_BONUS`` for everybody's estimate of the
  seat to move: the game ends only after the first D, and trains passed between
  corporations for 1 franc would otherwise let a bot stall it.

It sees the engine only through its read API (:mod:`services.e1894.engine.reading`), uses
no search and no copies.

``candidate_values`` picks the prices worth evaluating in a range of ``legal_actions``: for a
train from another corporation 1, half and all of its face value; for a private half, once
and twice its face value (the ends of the rules' range, §Trains); for a bid the lowest one (a
bid's size changes nothing the evaluation sees until the private is sold).
"""

from __future__ import annotations

from collections.abc import Iterable

from services.e1894.engine.actions import BuyCompany, BuyTrain
from services.e1894.engine.reading import Corporation, private_prices, read, train_price
from services.kernel.engine import ActionRange

TREASURY_WEIGHT = 0.5
TRAIN_WEIGHT = 1.5
RUSTING_WEIGHT = 0.0
PROGRESS_BONUS = 2000.0


def _corp_worth(corp: Corporation, next_type: int) -> float:
    worth = corp.treasury * TREASURY_WEIGHT
    for t in corp.trains:
        soon = t.rusted_by is not None and t.rusted_by <= next_type + 1
        worth += t.price * (RUSTING_WEIGHT if soon else TRAIN_WEIGHT)
    return worth


def evaluate(state, seat: int) -> float:
    """Higher is better for ``seat`` (francs of estimated final worth over the best rival)."""
    r = read(state)
    values = [float(p.worth) for p in r.players]
    if r.over:
        me = values[seat]
        best = max(v for s, v in enumerate(values) if s != seat)
        return 100_000.0 * (me > best) + me - best
    next_type = max(r.depot_type, 0)
    for corp in r.corporations:
        if not corp.floated:
            continue
        worth = _corp_worth(corp, next_type)
        for s, pct in enumerate(corp.shares):
            if pct:
                values[s] += worth * pct / 100
    me = values[seat] + PROGRESS_BONUS * r.depot_progress
    best = max(v for s, v in enumerate(values) if s != seat)
    return me - best


def candidate_values(state, seat: int, entry: ActionRange) -> Iterable[int]:
    """The prices of ``entry`` the greedy policy evaluates (see the module docstring); the
    policy drops those outside the range."""
    action = entry.action
    if isinstance(action, BuyTrain):
        face = train_price(action.train)
        return (1, face // 2, face)
    if isinstance(action, BuyCompany):
        return private_prices(action.company)
    return (entry.min,)


# ---------------------------------------------------------------------- the search's estimate

TRAIN_REVENUE = {"2": 15.0, "3": 40.0, "4": 70.0, "5+1": 100.0, "6": 140.0, "7": 145.0, "D": 160.0}
"""Francs a train of each type runs per operating round, roughly (the mean revenue of
greedy-played 4-player games by train set, single trains; measured 2026-12-03 on 4 games)."""
EXTRA_TRAIN_SHARE = 0.6
"""A corporation's second and later trains run this share of their revenue (they share the
network's best stops with the first)."""
ORS_AT_START = 18.5
"""Operating rounds left at the start of a greedy-played 4-player game (same games)."""
SOON_RUSTED_ORS = 2.0
"""Operating rounds a train about to rust still runs."""
DIVIDEND_WEIGHT = 0.7
"""Share of the expected dividends counted (trains are bought and rust, corporations
withhold: an expectation, not a promise)."""


def operating_rounds_left(depot_progress: int) -> float:
    """Operating rounds expected before the end, from the trains the depot has sold (a fit to
    greedy-played games: ~18 at the start, ~9 when 21 trains are sold, ~2 at 28; the game ends
    with the OR set after the first D, spec "Game end")."""
    if depot_progress <= 15:
        return ORS_AT_START - 0.23 * depot_progress
    return max(1.5, 15.0 - (depot_progress - 15))


def _corp_revenue(corp: Corporation, next_type: int, ors_left: float) -> float:
    """Francs a corporation's trains should earn over the rest of the game."""
    runs = sorted(
        (
            (
                TRAIN_REVENUE.get(t.name, 0.0),
                SOON_RUSTED_ORS
                if t.rusted_by is not None and t.rusted_by <= next_type + 1
                else ors_left,
            )
            for t in corp.trains
        ),
        reverse=True,
    )
    total = 0.0
    for i, (rev, ors) in enumerate(runs):
        total += rev * min(ors, ors_left) * (1.0 if i == 0 else EXTRA_TRAIN_SHARE)
    return total


def estimates(state) -> list[float]:
    """Each seat's estimated final worth in francs (index = seat), for the search's cut-offs
    (the ``greedy`` bot keeps :func:`evaluate`): the worth now (cash, shares at the market
    price, privates at face value, spec "Game end") plus, per floated corporation, the seat's
    percentage of the dividends its trains should still pay (:data:`TRAIN_REVENUE` per
    operating round over :func:`operating_rounds_left`, times :data:`DIVIDEND_WEIGHT`) and of
    half its treasury. A finished game: the final scores."""
    r = read(state)
    values = [float(p.worth) for p in r.players]
    if r.over:
        return values
    next_type = max(r.depot_type, 0)
    ors_left = operating_rounds_left(r.depot_progress)
    for corp in r.corporations:
        if not corp.floated:
            continue
        worth = (
            _corp_revenue(corp, next_type, ors_left) * DIVIDEND_WEIGHT
            + corp.treasury * TREASURY_WEIGHT
        )
        for s, pct in enumerate(corp.shares):
            if pct:
                values[s] += worth * pct / 100
    return values
