"""Rule options of Chicago Express (railbarons).

Every rule the spec (``railbarons.md``) tags as uncertain ([S] single source, [U] no source,
[C] sources disagree) is one field here; its default is the spec's choice and its
description names the tag and the spec section. ``docs/railbarons-rules.md`` lists them.

:class:`Rules` is the options compiled into lookup tables (costs, limits, masks) that the
hot paths use; it is built once per distinct options value and shared by states.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field

from services.kernel.engine import Options
from services.railbarons.engine import data


class RailbaronsOptions(Options):
    """Chicago Express rule options (all defaults follow the spec)."""

    # ---- §3 / §4 setup and opening auction
    first_auctioneer: int | None = Field(
        0,
        ge=0,
        le=5,
        description=(
            "§4 [S]: the banker opens the first auction of the opening auction; the engine "
            "lets seat `first_auctioneer` be the banker (data: 'seat 0 / configurable'). "
            "null = drawn from the game's seed. Must be < number of players."
        ),
    )
    start_incomes: Literal["condensed_rules", "digitisation"] = Field(
        "condensed_rules",
        description=(
            "§2 [C]: start incomes (= first minimum bids). 'condensed_rules' = PRR 7, B&O 6, "
            "C&O 5, NYC 8 (condensed rules, Polish summary); 'digitisation' = the pablonen "
            "digitisation's C&O 8, NYC 5 (judged a swap error by the spec)."
        ),
    )
    initial_auction_no_bid: Literal["stays_unsold", "starter_must_bid"] = Field(
        "stays_unsold",
        description=(
            "§4 [U]: nobody bids on an opening share. 'stays_unsold' = the share stays with "
            "the company and the same player opens the next opening auction; "
            "'starter_must_bid' = the starter of an opening auction must open at the minimum "
            "or more when his cash allows (so a share only stays unsold if he cannot pay). "
            "Also applies to the Wabash auction of §9.2, run like the initial auction."
        ),
    )
    initial_auction_next_starter: Literal["previous_buyer", "clockwise"] = Field(
        "previous_buyer",
        description=(
            "§4 [S]: who opens the next opening auction: 'previous_buyer' = the buyer of "
            "the previous share (condensed rules); 'clockwise' = the seat after the previous "
            "starter."
        ),
    )
    # ---- §5 dials
    auction_dial_uses: int = Field(
        3,
        ge=1,
        le=20,
        description="§5 [V value, U: same for every player count]: Auction dial uses per round.",
    )
    develop_dial_uses: int = Field(
        4,
        ge=1,
        le=20,
        description="§5 [V value, U: same for every player count]: Develop dial uses per round.",
    )
    expand_dial_uses: int = Field(
        5,
        ge=1,
        le=20,
        description="§5 [V value, U: same for every player count]: Expand dial uses per round.",
    )
    # ---- §6 auctions
    auctioneer_must_open: bool = Field(
        False,
        description=(
            "§6.3 [C]: the player who puts a share up for auction must open the bidding "
            "(when his cash allows). Condensed rules let him pass (default False); one "
            "review says he must open."
        ),
    )
    bid_increment: int = Field(
        1,
        ge=1,
        le=25,
        description="§6.4 [U]: smallest raise over the current high bid, in dollars.",
    )
    unsold_auction_spends_dial: bool = Field(
        True,
        description=(
            "§6.7 [U]: when nobody bids in an auction started with the Auction dial, the "
            "share stays with the company and the dial use is still spent (default True). "
            "False = the needle moves back one step. Opening and Wabash auctions are not "
            "concerned."
        ),
    )
    # ---- §7 expansion
    build_cost_formula: Literal[
        "multiply", "add_one_per_company", "count_multiplier", "doubling"
    ] = Field(
        "multiply",
        description=(
            "§7 [C]: cost of entering a shared hex where k other companies already are. "
            "'multiply' = base x (1 + k) (spec default); 'add_one_per_company' = base + k; "
            "'count_multiplier' = base x max(1, k) (literal BGA help text); "
            "'doubling' = base x 2^k (each payment added to the hex cost, as pablonen does)."
        ),
    )
    start_hexes_exclusive: bool = Field(
        True,
        description=(
            "§7 [S] / §15.6: start hexes (incl. Fort Wayne, also before the Wabash opens) "
            "belong to their company; other companies may not enter them."
        ),
    )
    # ---- §8 development
    develop_requires_share: bool = Field(
        False,
        description=(
            "§8 [U]: developing needs a share of a company with a locomotive in the hex "
            "(no source mentions it; default False)."
        ),
    )
    development_cost: int = Field(
        0,
        ge=0,
        le=50,
        description="§8 [S]: dollars the developing player pays the bank (development is free).",
    )
    forest_development_cash: int = Field(
        2,
        ge=0,
        le=20,
        description="§8 [S]: dollars the bank pays the company in a forest when it is developed.",
    )
    detroit_step: int = Field(
        1, ge=1, le=7, description="§8 [S]: Detroit track step per dividend phase (max 8 [V])."
    )
    wheeling_step: int = Field(1, ge=1, le=10, description="§8 [S]: Wheeling step per develop.")
    wheeling_max: int = Field(6, ge=3, le=20, description="§8 [S]: Wheeling track maximum.")
    pittsburgh_step: int = Field(2, ge=1, le=10, description="§8 [S]: Pittsburgh step per develop.")
    pittsburgh_max: int = Field(8, ge=4, le=20, description="§8 [S]: Pittsburgh track maximum.")
    industrial_development_uses_house: bool = Field(
        False,
        description=(
            "§8 [U] / §15.4: developing Wheeling or Pittsburgh takes a house from the general "
            "supply (default False: moving the track marker uses no house)."
        ),
    )
    # ---- §9 Chicago and the Wabash
    wabash_start_income: int = Field(
        1,
        ge=1,
        le=20,
        description=(
            "§2/§9 [U] / §15.1: the Wabash's income when it opens (= its first minimum bid); "
            "the digitisation uses Fort Wayne's value 1."
        ),
    )
    wabash_start_locomotive_from_supply: bool = Field(
        True,
        description=(
            "§2 [U, by analogy]: the Wabash's Fort Wayne locomotive comes from its own 11 "
            "(10 left on the charter). False = it is extra (11 left)."
        ),
    )
    wabash_auction_uses_dial: bool = Field(
        False,
        description=(
            "§9.2 [U] / §15.9: the Wabash share auction of the first Chicago phase moves the "
            "Auction dial one step (default False: it does not; never beyond its red zone)."
        ),
    )
    # ---- §10 / §11
    dividend_rounding: Literal["up", "down"] = Field(
        "up",
        description="§10.1 [S]: per-share dividend = income / shares sold, rounded up or down.",
    )
    tiebreak: Literal["shared", "shares_held"] = Field(
        "shared",
        description=(
            "§11 [S]: ties in cash share the victory (Polish summary, default); "
            "'shares_held' = more shares held ranks higher (tournament house rule)."
        ),
    )


_DIAL_NAMES = ("auction", "develop", "expand")


class Rules:
    """Options compiled into tables for the hot paths (shared, read-only).

    Attributes:
        opts: the options.
        dial_limits: uses per round of (auction, develop, expand) (§5).
        start_income: start income per company index (§2; Wabash from the option).
        cost: ``cost[h * 6 + k]`` = dollars to enter hex ``h`` with ``k`` other companies
            already there (§7, ``build_cost_formula``).
        allowed: per company, the mask of hexes it may ever enter (start hexes of other
            companies removed when ``start_hexes_exclusive``) (§7).
        ind_step / ind_max: per industrial slot (Detroit, Wheeling, Pittsburgh) (§8).
        round_up: dividend rounding (§10).
    """

    __slots__ = (
        "opts",
        "dial_limits",
        "start_income",
        "cost",
        "allowed",
        "ind_step",
        "ind_max",
        "round_up",
        "must_open",
        "initial_starter_must_bid",
        "next_starter_clockwise",
        "increment",
        "spend_on_unsold",
        "dev_cost",
        "forest_cash",
        "dev_needs_share",
        "ind_uses_house",
        "wabash_loco_from_supply",
        "wabash_uses_dial",
        "tiebreak_shares",
    )

    def __init__(self, opts: RailbaronsOptions) -> None:
        self.opts = opts
        self.dial_limits = (opts.auction_dial_uses, opts.develop_dial_uses, opts.expand_dial_uses)
        incomes = list(data.START_INCOME_DATA)
        if opts.start_incomes == "digitisation":
            incomes[data.CO], incomes[data.NYC] = 8, 5
        incomes[data.WABASH] = opts.wabash_start_income
        self.start_income = tuple(int(x) for x in incomes)  # type: ignore[arg-type]  # no None left
        formula = opts.build_cost_formula
        cost = []
        for h in range(data.NUM_HEXES):
            base = data.BASE_COST[h]
            for k in range(6):
                if formula == "multiply":
                    cost.append(base * (1 + k))
                elif formula == "add_one_per_company":
                    cost.append(base + k)
                elif formula == "count_multiplier":
                    cost.append(base * max(1, k))
                else:
                    cost.append(base * (1 << k))
        self.cost = tuple(cost)
        everything = (1 << data.NUM_HEXES) - 1
        allowed = []
        for c in range(data.NUM_COMPANIES):
            mask = everything
            if opts.start_hexes_exclusive:
                for o in range(data.NUM_COMPANIES):
                    if o != c:
                        mask &= ~(1 << data.START_HEX[o])
            allowed.append(mask)
        self.allowed = tuple(allowed)
        self.ind_step = (opts.detroit_step, opts.wheeling_step, opts.pittsburgh_step)
        self.ind_max = (data.DETROIT_MAX, opts.wheeling_max, opts.pittsburgh_max)
        self.round_up = opts.dividend_rounding == "up"
        self.must_open = opts.auctioneer_must_open
        self.initial_starter_must_bid = opts.initial_auction_no_bid == "starter_must_bid"
        self.next_starter_clockwise = opts.initial_auction_next_starter == "clockwise"
        self.increment = opts.bid_increment
        self.spend_on_unsold = opts.unsold_auction_spends_dial
        self.dev_cost = opts.development_cost
        self.forest_cash = opts.forest_development_cash
        self.dev_needs_share = opts.develop_requires_share
        self.ind_uses_house = opts.industrial_development_uses_house
        self.wabash_loco_from_supply = opts.wabash_start_locomotive_from_supply
        self.wabash_uses_dial = opts.wabash_auction_uses_dial
        self.tiebreak_shares = opts.tiebreak == "shares_held"


@lru_cache(maxsize=64)
def compile_rules(opts: RailbaronsOptions) -> Rules:
    """The :class:`Rules` tables for ``opts`` (cached: equal options share one object)."""
    return Rules(opts)


DIAL_NAMES = _DIAL_NAMES
"""Dial names by index: 0 auction, 1 develop, 2 expand (§5)."""
