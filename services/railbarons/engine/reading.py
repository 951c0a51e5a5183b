"""A small typed read-only API of a Chicago Express position, for heuristics and tools.

:func:`read` returns a :class:`Reading` of immutable records named in the rulebook's
terms (companies, players, holdings, the running auction), so a bot never reads the
engine's internals (the flat ``held[seat * 5 + company]`` array, bit-mask networks).
:func:`board_geometry` gives the printed map and companies a board drawing needs.

Example::

    r = read(state)
    r.players[seat].cash, r.players[seat].shares[r.companies[0].index]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from services.railbarons.engine import data, phases

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

_NC = data.NUM_COMPANIES
_DIST = data.CHICAGO_DISTANCE
_IDS = data.COMPANY_IDS
_new = tuple.__new__  # a record from its field tuple, without the Python-level __new__


class Company(NamedTuple):
    """One railroad company (§3)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    id: str
    shares_sold: int
    treasury: int
    income: int
    reached_chicago: bool
    chicago_distance: int | None
    """Hexes from the company's nearest network hex to Chicago (None: no network)."""


class PlayerHoldings(NamedTuple):
    """One player's cash (the score, §11) and shares per company (company index order)."""

    seat: int
    cash: int
    shares: tuple[int, ...]


class Auction(NamedTuple):
    """The running auction with a high bid (§6)."""

    company: int
    high_bidder: int
    high_bid: int


class Reading(NamedTuple):
    """A position of Chicago Express, read-only."""

    over: bool
    end_triggered: bool
    """An end condition has been met (§11): this is the last dividend."""
    dividends_paid: int
    """Operating rounds (dividends) so far (``rounds``)."""
    companies: tuple[Company, ...]
    players: tuple[PlayerHoldings, ...]
    auction: Auction | None


def _distance(net: int) -> int | None:
    best = None
    while net:
        low = net & -net
        h = low.bit_length() - 1
        net ^= low
        d = _DIST[h]
        if best is None or d < best:
            best = d
    return best


def read(st: RailbaronsState) -> Reading:
    """The :class:`Reading` of state ``st``."""
    sold, treasury, income, net, chicago = st.sold, st.treasury, st.income, st.net, st.chicago
    companies = tuple(
        [
            _new(
                Company,
                (
                    c,
                    _IDS[c],
                    sold[c],
                    treasury[c],
                    income[c],
                    bool((chicago >> c) & 1),
                    _distance(net[c]) if net[c] else None,
                ),
            )
            for c in range(_NC)
        ]
    )
    held, cash = st.held, st.cash
    players = tuple(
        [
            _new(PlayerHoldings, (seat, cash[seat], tuple(held[seat * _NC : seat * _NC + _NC])))
            for seat in range(st.num_players)
        ]
    )
    auction = None
    if st.phase == phases.BIDDING and st.a_bidder >= 0:
        auction = Auction(st.a_company, st.a_bidder, st.a_high)
    return Reading(
        over=st.phase == phases.OVER,
        end_triggered=bool(st.end_reason),
        dividends_paid=st.rounds,
        companies=companies,
        players=players,
        auction=auction,
    )


def board_geometry() -> dict[str, Any]:
    """The static board a drawing needs, as plain JSON values read from the packaged data
    (``data/railbarons_data.json``): ``{"hexes": [hex], "companies": {id: company},
    "income_max": int}`` (the map's hexes in file order, the companies by id, the last
    printed income, 50 when the data names none). A fresh copy per call."""
    raw = data.load_data()
    return {
        "hexes": raw["map"]["hexes"],
        "companies": {c["id"]: c for c in raw["companies"]},
        "income_max": raw["income_track"].get("max_printed", 50),
    }
