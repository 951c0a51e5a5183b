"""A small typed read-only API of an 1894 position, for heuristics and tools.

:func:`read` returns a :class:`Reading` of immutable records named in the rulebook's terms
(corporations, players, holdings in percent, trains), so a bot never reads the engine's
internals (parallel per-corporation lists, train ids). :func:`train_price` and
:func:`private_prices` give the static prices a bot weighs for an action;
:func:`board_geometry` the printed map, tiles, charters and market a board drawing needs.

Example::

    r = read(state)
    [c.sym for c in r.corporations if c.floated], r.players[seat].worth
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from services.e1894.engine.data import CORPS, PRIVATE_INDEX, PRIVATES, TRAIN_INDEX, TRAINS, load
from services.e1894.engine.data import train_name as _train_name
from services.e1894.engine.privates import price_range
from services.e1894.engine.trains import depot_type

if TYPE_CHECKING:  # pragma: no cover
    from services.e1894.engine.state import E1894State

_new = tuple.__new__  # a record from its field tuple, without the Python-level __new__


class Train(NamedTuple):
    """A train a corporation owns (spec "Trains")."""

    id: str
    """``"3-2"``: type and copy."""
    name: str
    """The type: ``"2"``, ``"5+1"``, ``"D"``."""
    price: int
    """Depot price (francs)."""
    rusted_by: int | None
    """Index of the train type whose first purchase rusts this one (None: never rusts)."""


class Corporation(NamedTuple):
    """One corporation (spec "Corporations")."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    sym: str
    floated: bool
    treasury: int
    trains: tuple[Train, ...]
    shares: tuple[int, ...]
    """Percent held by each seat (10 = one share)."""


class Player(NamedTuple):
    """One player."""

    seat: int
    worth: int
    """Cash + shares at the market price + face value of privates (spec "Game end")."""


class Reading(NamedTuple):
    """A position of 1894, read-only."""

    over: bool
    players: tuple[Player, ...]
    corporations: tuple[Corporation, ...]
    depot_type: int
    """Index of the train type the depot sells now (-1: none left)."""
    depot_progress: int
    """Sum over train types of the number of the next copy: grows by one with every train
    the depot sells."""


_TRAINS: dict[str, Train] = {}
"""Train records by id (static data, memo)."""


def _train(train_id: str) -> Train:
    t = _TRAINS.get(train_id)
    if t is None:
        info = TRAINS[TRAIN_INDEX[_train_name(train_id)]]
        rusted_by = TRAIN_INDEX[info.rusts_on] if info.rusts_on else None
        t = _TRAINS[train_id] = Train(train_id, info.name, info.price, rusted_by)
    return t


def read(st: E1894State) -> Reading:
    """The :class:`Reading` of state ``st``."""
    floated, cash, trains, holdings = st.floated, st.corp_cash, st.trains, st.holdings
    corporations = tuple(
        [
            _new(
                Corporation,
                (
                    ci,
                    CORPS[ci].sym,
                    bool(floated[ci]),
                    cash[ci],
                    tuple([_train(t) for t in trains[ci]]),
                    tuple(holdings[ci]),
                ),
            )
            for ci in range(len(holdings))
        ]
    )
    return Reading(
        over=st.is_terminal(),
        players=tuple(Player(seat, w) for seat, w in enumerate(st.scores())),
        corporations=corporations,
        depot_type=depot_type(st),
        depot_progress=sum(st.depot_next),
    )


def train_price(train_id: str) -> int:
    """Depot price of the type of ``train_id`` (``"3-2"``: 3-trains' price)."""
    return TRAINS[TRAIN_INDEX[_train_name(train_id)]].price


def private_prices(company: str) -> tuple[int, int, int]:
    """(lowest, face value, highest) price a corporation may pay a player for the private
    ``company`` (spec "Private companies")."""
    pi = PRIVATE_INDEX[company]
    lo, hi = price_range(pi)
    return lo, PRIVATES[pi].value, hi


def board_geometry() -> dict[str, Any]:
    """The static board a drawing needs, as plain JSON values read from the packaged data:
    ``{"hexes": {coord: hex}, "tiles": {name: tile}, "corporations": {sym: corp},
    "market": [[cell]]}`` (the entries of ``map_hexes.json``, ``tiles.json``,
    ``corporations.json`` and the ``cells`` of ``stock_market.json``). A fresh copy per call."""
    return {
        "hexes": {h["coord"]: h for h in load("map_hexes.json")["hexes"]},
        "tiles": {t["name"]: t for t in load("tiles.json")["tiles"]},
        "corporations": {c["sym"]: c for c in load("corporations.json")["corporations"]},
        "market": load("stock_market.json")["cells"],
    }
