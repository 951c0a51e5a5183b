"""1894 rule data for the game flow: corporations, privates, trains, phases and the market.

Loaded once at import time from the packaged ``data/`` folder (a copy of the shared data extract,
see its README) into small immutable records shared by every state.

Spec: the 1894 rules summary, "Setup and auction", "Shares and the stock market",
"Trains and phases"; data: ``data/corporations.json``, ``privates.json``, ``trains.json``,
``phases.json``, ``stock_market.json``, ``game.json``.

>>> CORP_INDEX["PLM"], CORPS[CORP_INDEX["PLM"]].token_prices
(5, (0, 40, 100, 100, 100))
>>> MARKET.price(3, 5), MARKET.is_gray(7, 0)
(100, True)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def load(name: str) -> Any:
    """A fresh parse of the packaged data file ``name`` (``"tiles.json"``), as plain JSON
    values the caller may keep or change. Raises OSError for a file the package lacks."""
    with open(DATA / name, encoding="utf-8") as fh:
        return json.load(fh)


_GAME = load("game.json")

STARTING_CASH: dict[int, int] = {int(k): v for k, v in _GAME["starting_cash"].items()}
"""Players -> starting cash in francs (570 / 480)."""

CERT_LIMIT: dict[int, int] = {int(k): v for k, v in _GAME["cert_limit"].items()}
"""Players -> certificate limit (18 / 14)."""

MARKET_SHARE_LIMIT = int(_GAME["market_share_limit_percent"])
"""The pool may hold at most this percent of a corporation (50)."""

MIN_BID_INCREMENT = int(_GAME["min_bid_increment"])
"""Auction bids rise by at least 5 and are multiples of 5."""

FERRY_MARKERS = int(_GAME["ferry"]["markers"])
FERRY_COST = int(_GAME["ferry"]["cost"])
FERRY_COST_LS = int(_GAME["ferry"]["cost_if_owning_LS"])

# --------------------------------------------------------------------------- corporations


class CorpInfo:
    """One corporation's printed facts (immutable).

    Attributes:
        index: position in :data:`CORPS` (data order: Ouest, Nord, AG, CFOR, Belge, PLM, Est,
            LF, LB; the reference's order, used for ties and listings).
        sym: symbol (``"PLM"``). name: full name.
        kind: ``regular_french`` / ``regular_belgian`` / ``late_french`` / ``late_belgian``.
        homes: home hex ids (two for Ouest, Nord and CFOR, none for LF/LB).
        token_prices: price of each token, home token(s) first (francs).
        late_candidates: home hexes LF/LB may choose.
        max_ownership: the most a player may hold outside the gray zone (percent, 60).
        float_percent: the percent sold that floats it (60: the Treasury holds at most 40).
    """

    __slots__ = (
        "index",
        "sym",
        "name",
        "kind",
        "homes",
        "token_prices",
        "late_candidates",
        "max_ownership",
        "float_percent",
    )

    def __init__(self, index: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.sym: str = raw["sym"]
        self.name: str = raw["name"]
        self.kind: str = raw["kind"]
        self.homes: tuple[str, ...] = tuple(raw.get("home_coordinates", ()))
        self.token_prices: tuple[int, ...] = tuple(raw["token_prices"])
        self.late_candidates: tuple[str, ...] = tuple(raw.get("late_home_candidates", ()))
        self.max_ownership: int = int(raw["max_ownership_percent"])
        self.float_percent: int = int(raw["float_percent"])

    @property
    def is_late(self) -> bool:
        """True for LF and LB."""
        return self.kind.startswith("late")

    def __repr__(self) -> str:
        return f"CorpInfo({self.sym})"


_CORPS_RAW = load("corporations.json")["corporations"]
CORPS: tuple[CorpInfo, ...] = tuple(CorpInfo(i, c) for i, c in enumerate(_CORPS_RAW))
CORP_INDEX: dict[str, int] = {c.sym: c.index for c in CORPS}
NUM_CORPS = len(CORPS)

FRENCH_REGULAR = ("PLM", "Ouest", "Nord", "Est", "CFOR")
"""Draw order of the French starting corporation (one LCG number each, smallest wins)."""

LATE_CORPS = frozenset({"LF", "LB"})

SHARE_PERCENTS = (20, 10, 10, 10, 10, 10, 10, 10, 10)
"""Certificates of every corporation: the president's 20% (index 0) and eight 10% shares."""

# --------------------------------------------------------------------------- privates


class PrivateInfo:
    """One private company (immutable).

    Attributes:
        index: position in :data:`PRIVATES` (data order).
        sym, name: ``"LRC"``, full name.
        value: face value (francs): the auction's starting price, and the base of the
            half-to-double price range when a corporation buys it.
        revenue: revenue paid at the start of each OR (AR: 10 once a corporation owns it;
            SQG: 0 / 70 / 100 by the colour of Saint-Quentin, see :mod:`.privates`).
        major_of: the corporation whose president's certificate it carries (``xMS``/``BMS``), or
            ``""``. Such privates cannot be sold to corporations and close when that
            corporation first operates.
    """

    __slots__ = ("index", "sym", "name", "value", "revenue", "major_of")

    def __init__(self, index: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.sym: str = raw["sym"]
        self.name: str = raw["name"]
        self.value: int = raw["value"]
        self.revenue: int = raw["revenue"]
        major = ""
        for ab in raw["abilities"]:
            if ab.get("type") == "shares":
                major = ab["shares"].split("_")[0]
        self.major_of: str = major

    def __repr__(self) -> str:
        return f"PrivateInfo({self.sym})"


_PRIV_RAW = load("privates.json")["privates"]
PRIVATES: tuple[PrivateInfo, ...] = tuple(PrivateInfo(i, p) for i, p in enumerate(_PRIV_RAW))
PRIVATE_INDEX: dict[str, int] = {p.sym: p.index for p in PRIVATES}
MAJOR_PRIVATE_OF: dict[str, str] = {p.major_of: p.sym for p in PRIVATES if p.major_of}
"""Corporation -> its major-shareholding private (``"PLM"`` -> ``"PLMMS"``, ``"Belge"`` ->
``"BMS"``)."""

TELEPORT_PRIVATES = ("GLG", "SAC")
TELEPORT_HEX = {"GLG": "H17", "SAC": "D17"}
BLOCKED_HEX_WHILE_PLAYER_OWNED = {"LRC": "I14", "GLG": "H17", "SAC": "D17"}

# --------------------------------------------------------------------------- trains


class TrainInfo:
    """One train type (immutable).

    Attributes:
        index: 0 for ``2`` ... 6 for ``D`` (also the depot order).
        name: ``"2"``, ``"5+1"``, ``"D"``.
        price: depot price (francs).
        count: copies in the depot, ``None`` for the unlimited D.
        rusts_on: the train name whose first purchase rusts this one, or ``""``.
        discount: old train name -> price reduction when traded in for this one.
        events: event names triggered by the first purchase.
    """

    __slots__ = ("index", "name", "price", "count", "rusts_on", "discount", "events")

    def __init__(self, index: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.name: str = raw["name"]
        self.price: int = raw["price"]
        self.count: int | None = None if raw["num"] == "unlimited" else int(raw["num"])
        self.rusts_on: str = raw.get("rusts_on") or ""
        self.discount: dict[str, int] = dict(raw.get("discount", {}))
        self.events: tuple[str, ...] = tuple(e["type"] for e in raw.get("events", ()))

    def __repr__(self) -> str:
        return f"TrainInfo({self.name})"


TRAINS: tuple[TrainInfo, ...] = tuple(
    TrainInfo(i, t) for i, t in enumerate(load("trains.json")["trains"])
)
TRAIN_INDEX: dict[str, int] = {t.name: t.index for t in TRAINS}


def train_name(train_id: str) -> str:
    """``"5+1-2"`` -> ``"5+1"``."""
    return train_id.rsplit("-", 1)[0]


# --------------------------------------------------------------------------- phases


class PhaseInfo:
    """One phase (immutable): ``name``, ``on`` (train starting it), ``train_limit``,
    ``tiles`` (colours), ``operating_rounds`` per set, ``can_buy_companies``."""

    __slots__ = ("index", "name", "on", "train_limit", "tiles", "operating_rounds", "can_buy")

    def __init__(self, index: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.name: str = raw["name"]
        self.on: str = raw.get("on", "")
        self.train_limit: int = raw["train_limit"]
        self.tiles: tuple[str, ...] = tuple(raw["tiles"])
        self.operating_rounds: int = raw["operating_rounds"]
        self.can_buy: bool = "can_buy_companies" in raw.get("status", ())


PHASES: tuple[PhaseInfo, ...] = tuple(
    PhaseInfo(i, p) for i, p in enumerate(load("phases.json")["phases"])
)
PHASE_ON: dict[str, int] = {p.on: p.index for p in PHASES if p.on}
"""Train name -> index of the phase its first purchase starts."""
PURPLE = len(PHASES) - 1

# --------------------------------------------------------------------------- market


class Market:
    """The 2-D stock market (immutable).

    Cells are ``(row, col)``, rows from the top, columns from the left. Row lengths differ
    (lower rows are shorter). ``price(row, col)``; ``is_gray`` for the ``o`` cells (the
    "unlimited" zone: no certificate limit, no 60% limit, the president may buy two per turn,
    an extra step up when sold out); ``is_endgame`` for the 450 cell.
    """

    __slots__ = ("prices", "gray", "endgame", "par_cells", "by_id")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.prices: tuple[tuple[int, ...], ...] = tuple(
            tuple(c["price"] for c in row) for row in raw["cells"]
        )
        self.gray: frozenset[tuple[int, int]] = frozenset(
            (c["row"], c["col"]) for row in raw["cells"] for c in row if "unlimited" in c["types"]
        )
        self.endgame: frozenset[tuple[int, int]] = frozenset(
            (c["row"], c["col"]) for row in raw["cells"] for c in row if "endgame" in c["types"]
        )
        pars: dict[int, tuple[int, int]] = {}
        for row in raw["cells"]:
            for c in row:
                if "par" in c["types"]:
                    pars[c["price"]] = (c["row"], c["col"])
        self.par_cells: dict[int, tuple[int, int]] = pars
        self.by_id: dict[str, tuple[int, int]] = {
            c["id"]: (c["row"], c["col"]) for row in raw["cells"] for c in row
        }

    def exists(self, row: int, col: int) -> bool:
        """True if ``(row, col)`` is a cell of the market."""
        return 0 <= row < len(self.prices) and 0 <= col < len(self.prices[row])

    def price(self, row: int, col: int) -> int:
        """Share price of a cell (francs)."""
        return self.prices[row][col]

    def is_gray(self, row: int, col: int) -> bool:
        """True for a gray ("unlimited") cell."""
        return (row, col) in self.gray

    def is_endgame(self, row: int, col: int) -> bool:
        """True for the 450 cell."""
        return (row, col) in self.endgame

    def cell_id(self, row: int, col: int) -> str:
        """The 18xx.games share-price id ``"price,row,col"``."""
        return f"{self.prices[row][col]},{row},{col}"


_MARKET_RAW = load("stock_market.json")
MARKET = Market(_MARKET_RAW)
PAR_PRICES_ALL: tuple[int, ...] = tuple(int(x.split(",")[0]) for x in _MARKET_RAW["par_prices_all"])
"""Par prices offered to the buyer of a major shareholding (100, 95, 80, 67)."""
PAR_PRICES_SR: tuple[int, ...] = tuple(
    int(x.split(",")[0]) for x in _MARKET_RAW["par_prices_offered_in_stock_round"]
)
"""Par prices offered in stock rounds (95, 80, 67): the 100 cell is kept for the starting
corporations and reissues."""
