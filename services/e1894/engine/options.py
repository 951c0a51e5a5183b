"""Options of 1894: the rule choices the spec leaves open, each with the spec's default.

Spec: the 1894 rules summary; where it is silent the recorded games and the Czech player
summary (seed 004) decide the default.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from services.kernel.engine import Options


class E1894Options(Options):
    """Rule options of 1894 (all defaults are the reference engine's behaviour)."""

    strict_stock_round_par: bool = Field(
        True,
        description=(
            "§Setup and auction (caveat): in stock rounds a corporation may be parred only at "
            "95, 80 or 67 (the 100 cell is kept for the starting corporations and reissues). "
            "The reference engine does not check this (only its UI filters it); False also "
            "accepts 100."
        ),
    )
    auction_pass_discount: int = Field(
        5,
        ge=0,
        le=20,
        description=(
            "§Setup and auction, errata A1, designer's rules §5.1: when every player has "
            "passed while LRC is unsold, LRC's price drops by this many francs; at 0 the "
            "player to move gets it free (once LRC is sold, all passing pays the privates' "
            "revenue instead and lowers no price). The reference engine drops 5; 0 disables "
            "the drop."
        ),
    )
    presidents_certificate_sale: bool = Field(
        True,
        description=(
            "Errata A2 / designer's rules §6.3: the reference engine lets a president sell "
            "into his 20% certificate when another player holds 20% or more and takes the "
            "presidency over (True). The designer's rules say the president's certificate "
            "cannot be sold (False)."
        ),
    )
    trade_in_next_colour_only: bool = Field(
        False,
        description=(
            "Designer's rules §7.3.7: a train is traded in (upgraded) only to the next "
            "colour, so the D takes a 7 only (True). The reference engine gives the D its "
            "discount for a 5+1, a 6 or a 7 (False)."
        ),
    )
    reference_token_memo: bool = Field(
        True,
        description=(
            "Differential runs: the reference engine remembers, from a corporation's token "
            "step, whether it could token a city in reach, until its network is next "
            "cleared (a tile lay, a token placed by a choice, a ferry marker); a late "
            "corporation's home reservation or a home token placed without a choice does "
            "not clear it, so the corporation's next token step may wait for a pass although "
            "no city is left to token (True, the reference). False: the token step always "
            "looks at the board as it is."
        ),
    )
    bankrupt_score: Literal["liquidated", "zero", "holdings"] = Field(
        "liquidated",
        description=(
            "§Game end: what happens to a bankrupt president's holdings and score. The spec "
            "only says a bankruptcy ends the game at once. 'liquidated' (the reference "
            "engine): he sells every share he may (prices drop as for any sale) and his cash "
            "becomes 0; his unsold shares and his privates still count in his score. 'zero': "
            "liquidated, and he scores 0. 'holdings': no liquidation, scored like everybody "
            "else."
        ),
    )
