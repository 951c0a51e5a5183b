"""Operating rounds of 1894, one module per step of a corporation's turn.

Spec: designer's rules 1.0.3 section 7 "Operating Round" (the designer's rulebook);
the 1894 rules summary, "Shares and the stock market", "Map, track and tokens", "London,
ferries and bonuses", "Trains and phases", "Game end"; the 1894 errata. The
order of the steps is the reference engine's (``data/game.json`` ``operating_round_step_order``),
which is the rulebook's 7.3.1 to 7.3.8 plus a final buy-companies step.

An OR set has 1 (Yellow), 2 (Green, Blue) or 3 (Brown on) ORs, fixed when the set starts. At the
start of each OR every private pays its owner; the floated corporations then operate in order
of share price (:func:`..market.operating_order`); after each turn the corporations still to
operate are sorted again by their current prices (emergency sales may have moved them).
A corporation's turn, one unit per step:

====================  ===========================================================  ========
step                  what                                                         rules
====================  ===========================================================  ========
:mod:`.home`          home token(s) on the first turn (a choice only on a split    7.3.1
                      brown home)
:mod:`.redeem`        one redemption (1 share, 2 in a set's first OR) or a         7.3.2,
                      reissue; either, or ``pass``, ends the step                  A6
:mod:`.track`         up to two lays, LRC's extra lay, the teleport lay            7.3.3,
                                                                                   A8
:mod:`.replace`       (inside track) re-place its own token a split removed
:mod:`.teleport_token` (inside track) the GLG/SAC private's token decision         A4
:mod:`.token`         one station token                                            7.3.4
:mod:`.route`         run the trains; no train or route: revenue 0                 7.3.5,
                                                                                   A3
:mod:`.dividend`      pay out (price right) or withhold (left)                     7.3.6
:mod:`.buy_train`     depot, trade-ins, other corporations, emergency buying,      7.3.7
                      discarding over the limit
:mod:`.buy_company`   the final buy-companies step                                 A5
:mod:`.update`        other corporations re-place the tokens a split removed       7.3.8
====================  ===========================================================  ========

Each unit owns its legal moves (``legal``), its moves' validation and effects (``apply``) and
its "nothing to do here" predicate (``skip``): the contract is :class:`.common.OperatingStep`
(the kernel's :class:`services.kernel.steps.StepUnit` with 1894's arguments).
:mod:`.anytime` holds the moves open all turn long (privates, ferry, LS's token,
bankruptcy). Which step, which corporation and which round come next is decided in one place,
:mod:`..flow`. In the last OR set (after the first D) the track and token steps are skipped.
"""

from __future__ import annotations

from .buy_company import company_step_open
from .buy_train import ebuy_min_price
from .common import (
    BUY_COMPANY,
    BUY_TRAIN,
    DIVIDEND,
    HOME,
    REDEEM,
    REPLACE,
    ROUTE,
    TELEPORT,
    TOKEN,
    TRACK,
    UPDATE,
    clear_turn_record,
    operating_corp,
)
from .redeem import can_redeem, can_reissue, redeem_limit
from .token import token_step_open
from .update import update_corp

# The earlier single-module names some tests use.
_company_step_open = company_step_open
_token_step_open = token_step_open
_update_corp = update_corp

__all__ = [
    "BUY_COMPANY",
    "BUY_TRAIN",
    "DIVIDEND",
    "HOME",
    "REDEEM",
    "REPLACE",
    "ROUTE",
    "TELEPORT",
    "TOKEN",
    "TRACK",
    "UPDATE",
    "can_redeem",
    "can_reissue",
    "clear_turn_record",
    "company_step_open",
    "ebuy_min_price",
    "operating_corp",
    "redeem_limit",
    "token_step_open",
    "update_corp",
]
