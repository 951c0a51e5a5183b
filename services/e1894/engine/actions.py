"""The typed actions of 1894 (one move each), with their canonical JSON ``type``.

Spec: the 1894 rules summary ("Action JSON format" lists the 18xx.games actions these map
onto; :mod:`.interchange` converts both ways).

Who acts: in the auction and stock rounds the player (seat) whose turn it is; in an operating
round the president of the corporation that must act (the operating one, or another one
re-placing a token after a split, or discarding a train over the limit). The acting
corporation is never a field: it is the one the state says must act.

Price fields are whole francs. ``bid`` prices are multiples of 5. ``bid`` (other than buying
the cheapest private), ``buy_train`` from another corporation and ``buy_company`` take any
price in a range; ``legal_actions`` lists each such choice as one
:class:`~services.kernel.engine.ActionRange` of its ``price`` (see :mod:`.auction`,
:mod:`.operating_round`).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from services.kernel.engine import Action, ActionCodec


@dataclasses.dataclass(frozen=True, slots=True)
class Bid(Action):
    """Waterfall auction: buy the cheapest private at its price, or bid on another one
    (at least its face value + 5, or the highest bid + 5; a multiple of 5), or raise in the
    auction of a private that several players bid on."""

    TYPE: ClassVar[str] = "bid"
    company: str
    price: int


@dataclasses.dataclass(frozen=True, slots=True)
class Par(Action):
    """Set a corporation's par price (francs): 100/95/80/67 for the buyer of a major
    shareholding, 95/80/67 when opening a corporation in a stock round (buying its 20%
    president's certificate at twice the par)."""

    TYPE: ClassVar[str] = "par"
    corporation: str
    price: int


@dataclasses.dataclass(frozen=True, slots=True)
class ChooseHome(Action):
    """The president of a late corporation (LF/LB) chooses its home hex right after the par."""

    TYPE: ClassVar[str] = "choose_home"
    hex: str


@dataclasses.dataclass(frozen=True, slots=True)
class BuyShares(Action):
    """Buy one 10% share in a stock round, from the Treasury (``source="treasury"``, at the
    par price) or from the pool (``source="pool"``, at the market price)."""

    TYPE: ClassVar[str] = "buy_shares"
    corporation: str
    source: str


@dataclasses.dataclass(frozen=True, slots=True)
class SellShares(Action):
    """Sell ``count`` 10% shares of a corporation to the pool at the market price (in a stock
    round, or as the president's emergency sale during a forced train purchase)."""

    TYPE: ClassVar[str] = "sell_shares"
    corporation: str
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class RedeemShare(Action):
    """The operating corporation buys ``count`` of its shares from the pool at the market
    price, in one action that ends its redeem step (errata A6): 1, or 2 in the first OR of a
    set."""

    TYPE: ClassVar[str] = "redeem_share"
    count: int = 1


@dataclasses.dataclass(frozen=True, slots=True)
class ReissueShares(Action):
    """The operating corporation reissues all its redeemed shares at 100 each; its par
    becomes 100."""

    TYPE: ClassVar[str] = "reissue_shares"


@dataclasses.dataclass(frozen=True, slots=True)
class LayTile(Action):
    """Lay or upgrade a tile (``tile`` is the tile name, e.g. ``"57"``, ``"X16"``), rotated
    ``rotation`` (0-5). ``company`` names a private whose power is used (``"LRC"`` for the
    extra yellow tile, ``"GLG"``/``"SAC"`` for the teleport), else ``None``."""

    TYPE: ClassVar[str] = "lay_tile"
    hex: str
    tile: str
    rotation: int
    company: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class PlaceToken(Action):
    """Place a station token in city ``city`` (the city's index on the tile) of ``hex``.
    Also used to re-place a token removed by a split (brown) upgrade, to choose the city of a
    home token, and with ``company="LS"`` for London shipping's free token on A12 (or with
    ``company="GLG"``/``"SAC"`` for the teleport's free token)."""

    TYPE: ClassVar[str] = "place_token"
    hex: str
    city: int
    company: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class BuyFerry(Action):
    """Buy a ferry marker (80, 40 for the owner of London shipping)."""

    TYPE: ClassVar[str] = "buy_ferry"


@dataclasses.dataclass(frozen=True, slots=True)
class RunRoutes(Action):
    """Run the trains: one string per route, ``"<train id>:<route>"`` (the route encoding of
    :mod:`.routes`). The engine recomputes and checks every route; the revenue is never
    taken from the action."""

    TYPE: ClassVar[str] = "run_routes"
    routes: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Dividend(Action):
    """``kind="payout"`` (share price right) or ``"withhold"`` (left)."""

    TYPE: ClassVar[str] = "dividend"
    kind: str


@dataclasses.dataclass(frozen=True, slots=True)
class BuyTrain(Action):
    """Buy a train: ``train`` is a train id (``"3-1"``). From the depot at its price, less the
    trade-in discount when ``exchange`` names an own train traded in; from another
    corporation at any price from 1."""

    TYPE: ClassVar[str] = "buy_train"
    train: str
    price: int
    exchange: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class DiscardTrain(Action):
    """A corporation over its train limit discards one (it leaves the game)."""

    TYPE: ClassVar[str] = "discard_train"
    train: str


@dataclasses.dataclass(frozen=True, slots=True)
class BuyCompany(Action):
    """The operating corporation buys a private from a player, at half to double its face
    value (Green, Blue and Brown phases)."""

    TYPE: ClassVar[str] = "buy_company"
    company: str
    price: int


@dataclasses.dataclass(frozen=True, slots=True)
class Pass(Action):
    """End the current step or turn (auction: pass; stock round: end the turn; operating
    round: skip the rest of the current step)."""

    TYPE: ClassVar[str] = "pass"


@dataclasses.dataclass(frozen=True, slots=True)
class Bankrupt(Action):
    """The president declares bankruptcy when the corporation cannot get a train even with all
    his money and every share he may sell. Ends the game at once."""

    TYPE: ClassVar[str] = "bankrupt"


ACTION_CLASSES: tuple[type[Action], ...] = (
    Bid,
    Par,
    ChooseHome,
    BuyShares,
    SellShares,
    RedeemShare,
    ReissueShares,
    LayTile,
    PlaceToken,
    BuyFerry,
    RunRoutes,
    Dividend,
    BuyTrain,
    DiscardTrain,
    BuyCompany,
    Pass,
    Bankrupt,
)

CODEC = ActionCodec(ACTION_CLASSES)
