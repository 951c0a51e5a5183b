"""The actions of each title as typed models (generated: do not edit).

Made by ``python -m services.web.sdk_types`` from the engines' own action classes, the same
source as the OpenAPI document's ``<Title>Action`` schemas (``/api/openapi.json``). Each model
is one action type: ``type`` is fixed, the fields are the action's, nothing else is allowed, and
values are not converted (``"7"`` is not ``7``). ``ACTIONS[title]`` is the title's union,
discriminated on ``type``; :func:`parse_action` validates one action's canonical JSON, and
``model.model_dump()`` is what ``Client.move`` sends.

>>> parse_action("railbarons", {"type": "bid", "amount": 7})
RailbaronsBid(type='bid', amount=7)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class RailbaronsChooseDial(_Action):
    """Advance the needle of one dial (§5). ``dial``: ``"auction"``, ``"develop"`` or
        ``"expand"``. Illegal (``dial_in_red``) when that dial is in its red zone."""

    type: Literal["choose_dial"] = "choose_dial"
    dial: str

class RailbaronsStartAuction(_Action):
    """Put one share of ``company`` (``"PRR"``, ``"BO"``, ``"CO"``, ``"NYC"``, ``"WAB"``) up
        for auction (§6); the acting player is the auctioneer and bids first."""

    type: Literal["auction"] = "auction"
    company: str

class RailbaronsBid(_Action):
    """Bid ``amount`` dollars in the running auction (§6): at least the minimum bid
        (first bid) or the high bid plus the increment, at most the bidder's cash."""

    type: Literal["bid"] = "bid"
    amount: int

class RailbaronsPass(_Action):
    """Pass in the running auction; a pass is final for this auction (§6.4)."""

    type: Literal["pass"] = "pass"

class RailbaronsBuild(_Action):
    """Place one locomotive of ``company`` on ``hex`` (a hex id such as ``"Q5"``) (§7).
        The company's treasury pays the hex's cost; the company gains the hex's income."""

    type: Literal["build"] = "build"
    company: str
    hex: str

class RailbaronsDone(_Action):
    """End an expansion after one or two locomotives (§7: 1 to 3 per action)."""

    type: Literal["done"] = "done"

class RailbaronsDevelop(_Action):
    """Develop ``hex`` (a city, mountain or forest with a locomotive, or Wheeling /
        Pittsburgh) (§8)."""

    type: Literal["develop"] = "develop"
    hex: str

class RailbaronsDecline(_Action):
    """Carry out nothing after choosing a dial: the null action (§5)."""

    type: Literal["decline"] = "decline"

class TranssibStartBonus(_Action):
    """Pick a starting bonus card and carry it out (§3.3)."""

    type: Literal["start_bonus"] = "start_bonus"
    card: str

class TranssibPlace(_Action):
    """Place workers on an action space (§4.2), or on one's own hired engineer (§10.2).

        ``coins`` is the number of coins standing in for workers (§4.3); coins a space
        requires on top (T-ANY, E-HIRE, coin-cost engineers) are paid automatically."""

    type: Literal["place"] = "place"
    space: str
    coins: int = 0

class TranssibPass(_Action):
    """Pass for the rest of the round and score the pass points (§4.1, §11.4)."""

    type: Literal["pass"] = "pass"

class TranssibTrack(_Action):
    """One rail-marker step of ``colour`` on ``line`` (§5.1)."""

    type: Literal["track"] = "track"
    line: str
    colour: str

class TranssibLoco(_Action):
    """Put the locomotive in hand on ``line``'s slot ``slot`` (0, or 0/1 on the
        Trans-Siberian), displacing a lower one if the slot is taken (§7.2, §7.3).
        When the pending choice is a locomotive *or* a factory, this takes the lowest
        locomotive of the supply."""

    type: Literal["loco"] = "loco"
    line: str
    slot: int

class TranssibLocoToFactory(_Action):
    """Flip the displaced locomotive to its factory side and return it to the supply
        (§7.3; only when every locomotive slot is full)."""

    type: Literal["loco_to_factory"] = "loco_to_factory"

class TranssibFactory(_Action):
    """Build the factory ``number`` (the lowest locomotive of the supply, or a
        returned factory) in factory gap ``gap`` (0..4): the leftmost empty gap, or any
        gap when all five are full (replacing that factory) (§7.1, §7.4)."""

    type: Literal["factory"] = "factory"
    number: int
    gap: int

class TranssibIndustry(_Action):
    """Which industry marker (0 first, 1 second) takes the next step (§8.3)."""

    type: Literal["industry"] = "industry"
    marker: int

class TranssibQuestionToken(_Action):
    """Use one of your "?" tokens for the pending "?" bonus (§12.1, §12.2)."""

    type: Literal["question_token"] = "question_token"
    token: str

class TranssibQuestionCard(_Action):
    """Take a shared "?" card for the pending "?" bonus (§12.1, §12.4)."""

    type: Literal["question_card"] = "question_card"
    card: str

class TranssibCopySpace(_Action):
    """Carry out the action of an occupied board space (engineer/factory "reuse a
        space", §7.5, §10.4)."""

    type: Literal["copy_space"] = "copy_space"
    space: str

class TranssibRelocate(_Action):
    """Move your turn-order worker onto an empty 1-worker space, or your own
        engineer, and carry it out (§11.3)."""

    type: Literal["relocate"] = "relocate"
    space: str

class TranssibEndBonus(_Action):
    """Take the end bonus card at position ``index`` of the face-down pile
        (§15.1). The pile is shown to the choosing seat only and reshuffled after."""

    type: Literal["end_bonus"] = "end_bonus"
    index: int

class TranssibDone(_Action):
    """Stop the pending optional (or "up to") action here (§4.4)."""

    type: Literal["done"] = "done"

class E1894Bid(_Action):
    """Waterfall auction: buy the cheapest private at its price, or bid on another one
        (at least its face value + 5, or the highest bid + 5; a multiple of 5), or raise in the
        auction of a private that several players bid on."""

    type: Literal["bid"] = "bid"
    company: str
    price: int

class E1894Par(_Action):
    """Set a corporation's par price (francs): 100/95/80/67 for the buyer of a major
        shareholding, 95/80/67 when opening a corporation in a stock round (buying its 20%
        president's certificate at twice the par)."""

    type: Literal["par"] = "par"
    corporation: str
    price: int

class E1894ChooseHome(_Action):
    """The president of a late corporation (LF/LB) chooses its home hex right after the par."""

    type: Literal["choose_home"] = "choose_home"
    hex: str

class E1894BuyShares(_Action):
    """Buy one 10% share in a stock round, from the Treasury (``source="treasury"``, at the
        par price) or from the pool (``source="pool"``, at the market price)."""

    type: Literal["buy_shares"] = "buy_shares"
    corporation: str
    source: str

class E1894SellShares(_Action):
    """Sell ``count`` 10% shares of a corporation to the pool at the market price (in a stock
        round, or as the president's emergency sale during a forced train purchase)."""

    type: Literal["sell_shares"] = "sell_shares"
    corporation: str
    count: int

class E1894RedeemShare(_Action):
    """The operating corporation buys ``count`` of its shares from the pool at the market
        price, in one action that ends its redeem step (errata A6): 1, or 2 in the first OR of a
        set."""

    type: Literal["redeem_share"] = "redeem_share"
    count: int = 1

class E1894ReissueShares(_Action):
    """The operating corporation reissues all its redeemed shares at 100 each; its par
        becomes 100."""

    type: Literal["reissue_shares"] = "reissue_shares"

class E1894LayTile(_Action):
    """Lay or upgrade a tile (``tile`` is the tile name, e.g. ``"57"``, ``"X16"``), rotated
        ``rotation`` (0-5). ``company`` names a private whose power is used (``"LRC"`` for the
        extra yellow tile, ``"GLG"``/``"SAC"`` for the teleport), else ``None``."""

    type: Literal["lay_tile"] = "lay_tile"
    hex: str
    tile: str
    rotation: int
    company: str | None = None

class E1894PlaceToken(_Action):
    """Place a station token in city ``city`` (the city's index on the tile) of ``hex``.
        Also used to re-place a token removed by a split (brown) upgrade, to choose the city of a
        home token, and with ``company="LS"`` for London shipping's free token on A12 (or with
        ``company="GLG"``/``"SAC"`` for the teleport's free token)."""

    type: Literal["place_token"] = "place_token"
    hex: str
    city: int
    company: str | None = None

class E1894BuyFerry(_Action):
    """Buy a ferry marker (80, 40 for the owner of London shipping)."""

    type: Literal["buy_ferry"] = "buy_ferry"

class E1894RunRoutes(_Action):
    """Run the trains: one string per route, ``"<train id>:<route>"`` (the route encoding of
        :mod:`.routes`). The engine recomputes and checks every route; the revenue is never
        taken from the action."""

    type: Literal["run_routes"] = "run_routes"
    routes: list[str]

class E1894Dividend(_Action):
    """``kind="payout"`` (share price right) or ``"withhold"`` (left)."""

    type: Literal["dividend"] = "dividend"
    kind: str

class E1894BuyTrain(_Action):
    """Buy a train: ``train`` is a train id (``"3-1"``). From the depot at its price, less the
        trade-in discount when ``exchange`` names an own train traded in; from another
        corporation at any price from 1."""

    type: Literal["buy_train"] = "buy_train"
    train: str
    price: int
    exchange: str | None = None

class E1894DiscardTrain(_Action):
    """A corporation over its train limit discards one (it leaves the game)."""

    type: Literal["discard_train"] = "discard_train"
    train: str

class E1894BuyCompany(_Action):
    """The operating corporation buys a private from a player, at half to double its face
        value (Green, Blue and Brown phases)."""

    type: Literal["buy_company"] = "buy_company"
    company: str
    price: int

class E1894Pass(_Action):
    """End the current step or turn (auction: pass; stock round: end the turn; operating
        round: skip the rest of the current step)."""

    type: Literal["pass"] = "pass"

class E1894Bankrupt(_Action):
    """The president declares bankruptcy when the corporation cannot get a train even with all
        his money and every share he may sell. Ends the game at once."""

    type: Literal["bankrupt"] = "bankrupt"

RailbaronsAction = Annotated[
    RailbaronsChooseDial
    | RailbaronsStartAuction
    | RailbaronsBid
    | RailbaronsPass
    | RailbaronsBuild
    | RailbaronsDone
    | RailbaronsDevelop
    | RailbaronsDecline,
    Field(discriminator="type"),
]
"""An action of Chicago Express (railbarons)."""

TranssibAction = Annotated[
    TranssibStartBonus
    | TranssibPlace
    | TranssibPass
    | TranssibTrack
    | TranssibLoco
    | TranssibLocoToFactory
    | TranssibFactory
    | TranssibIndustry
    | TranssibQuestionToken
    | TranssibQuestionCard
    | TranssibCopySpace
    | TranssibRelocate
    | TranssibEndBonus
    | TranssibDone,
    Field(discriminator="type"),
]
"""An action of Russian Railroads (transsib)."""

E1894Action = Annotated[
    E1894Bid
    | E1894Par
    | E1894ChooseHome
    | E1894BuyShares
    | E1894SellShares
    | E1894RedeemShare
    | E1894ReissueShares
    | E1894LayTile
    | E1894PlaceToken
    | E1894BuyFerry
    | E1894RunRoutes
    | E1894Dividend
    | E1894BuyTrain
    | E1894DiscardTrain
    | E1894BuyCompany
    | E1894Pass
    | E1894Bankrupt,
    Field(discriminator="type"),
]
"""An action of 1894 (e1894)."""

ACTIONS: dict[str, Any] = {"railbarons": RailbaronsAction, "transsib": TranssibAction, "e1894": E1894Action}
"""Title -> its action union."""
_ADAPTERS: dict[str, TypeAdapter[Any]] = {title: TypeAdapter(union) for title, union in ACTIONS.items()}


def parse_action(title: str, action: dict[str, Any]) -> BaseModel:
    """The typed model of one ``action`` (canonical JSON) of ``title``.

    Raises:
        KeyError: an unknown title.
        pydantic.ValidationError: not an action of that title (unknown type, a missing, extra
            or mistyped field).
    """
    return _ADAPTERS[title].validate_python(action)
