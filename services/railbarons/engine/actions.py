"""The moves of Chicago Express (spec §5-§9, §14).

A turn is decomposed into small steps so that every legal action is exactly one move:

1. ``choose_dial(dial)``: advance one dial not in its red zone (§5);
2. then, for the chosen dial, either ``decline`` (the null action, §5) or:

   * Auction: ``auction(company)`` puts one share up (§6); then, seat by seat clockwise,
     ``bid(amount)`` or ``pass`` until the auction ends (also used for the opening
     auction §4 and the Wabash auction §9);
   * Expand: ``build(company, hex)`` places one locomotive (§7); up to three per action,
     all for the same company; ``done`` ends the action after one or two;
   * Develop: ``develop(hex)`` (§8).

Action objects are immutable; the engine keeps one shared instance per possible move
(:func:`bid_action`, :data:`BUILD_ACTIONS` ...), so ``legal_actions`` allocates nothing.

>>> Build("PRR", "Q5").to_json()
{'type': 'build', 'company': 'PRR', 'hex': 'Q5'}
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from services.kernel.engine import Action, ActionCodec
from services.railbarons.engine import data
from services.railbarons.engine.options import DIAL_NAMES


@dataclasses.dataclass(frozen=True, slots=True)
class ChooseDial(Action):
    """Advance the needle of one dial (§5). ``dial``: ``"auction"``, ``"develop"`` or
    ``"expand"``. Illegal (``dial_in_red``) when that dial is in its red zone."""

    TYPE: ClassVar[str] = "choose_dial"
    dial: str


@dataclasses.dataclass(frozen=True, slots=True)
class StartAuction(Action):
    """Put one share of ``company`` (``"PRR"``, ``"BO"``, ``"CO"``, ``"NYC"``, ``"WAB"``) up
    for auction (§6); the acting player is the auctioneer and bids first."""

    TYPE: ClassVar[str] = "auction"
    company: str


@dataclasses.dataclass(frozen=True, slots=True)
class Bid(Action):
    """Bid ``amount`` dollars in the running auction (§6): at least the minimum bid
    (first bid) or the high bid plus the increment, at most the bidder's cash."""

    TYPE: ClassVar[str] = "bid"
    amount: int


@dataclasses.dataclass(frozen=True, slots=True)
class Pass(Action):
    """Pass in the running auction; a pass is final for this auction (§6.4)."""

    TYPE: ClassVar[str] = "pass"


@dataclasses.dataclass(frozen=True, slots=True)
class Build(Action):
    """Place one locomotive of ``company`` on ``hex`` (a hex id such as ``"Q5"``) (§7).
    The company's treasury pays the hex's cost; the company gains the hex's income."""

    TYPE: ClassVar[str] = "build"
    company: str
    hex: str


@dataclasses.dataclass(frozen=True, slots=True)
class Done(Action):
    """End an expansion after one or two locomotives (§7: 1 to 3 per action)."""

    TYPE: ClassVar[str] = "done"


@dataclasses.dataclass(frozen=True, slots=True)
class Develop(Action):
    """Develop ``hex`` (a city, mountain or forest with a locomotive, or Wheeling /
    Pittsburgh) (§8)."""

    TYPE: ClassVar[str] = "develop"
    hex: str


@dataclasses.dataclass(frozen=True, slots=True)
class Decline(Action):
    """Carry out nothing after choosing a dial: the null action (§5)."""

    TYPE: ClassVar[str] = "decline"


ACTION_CLASSES: tuple[type[Action], ...] = (
    ChooseDial,
    StartAuction,
    Bid,
    Pass,
    Build,
    Done,
    Develop,
    Decline,
)
CODEC = ActionCodec(ACTION_CLASSES)

# ----------------------------------------------------------------------------- shared instances

PASS = Pass()
DONE = Done()
DECLINE = Decline()
DIAL_ACTIONS: tuple[ChooseDial, ...] = tuple(ChooseDial(d) for d in DIAL_NAMES)
AUCTION_ACTIONS: tuple[StartAuction, ...] = tuple(StartAuction(c) for c in data.COMPANY_IDS)
DEVELOP_ACTIONS: tuple[Develop, ...] = tuple(Develop(h) for h in data.HEX_IDS)
BUILD_ACTIONS: tuple[Build, ...] = tuple(
    Build(c, h) for c in data.COMPANY_IDS for h in data.HEX_IDS
)
"""``BUILD_ACTIONS[c * NUM_HEXES + h]`` is ``Build(company c, hex h)``."""

_BIDS: list[Bid] = [Bid(i) for i in range(512)]


def bids(lo: int, hi: int) -> list[Bid]:
    """The shared ``Bid`` actions for amounts ``lo .. hi`` inclusive (empty if ``lo > hi``)."""
    if hi >= len(_BIDS):
        _BIDS.extend(Bid(i) for i in range(len(_BIDS), hi + 1))
    return _BIDS[lo : hi + 1]
