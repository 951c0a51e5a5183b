"""The map and the companies, loaded once from ``data/railbarons_data.json``.

Implements the static parts of spec §2 (company data) and §12 (the map). Everything here is
immutable and shared by every state; states refer to hexes and companies by integer index.

* Hexes are numbered ``0 .. 159`` in the data file's order (``A2, A3, A4, B2 ...``);
  :data:`HEX_IDS` maps index -> id (``"A2"``) and :data:`HEX_INDEX` id -> index.
* Hex sets are Python ints used as bit masks (bit ``h`` = hex ``h``), e.g. :data:`NB_MASK`.
* Companies are numbered in the data file's order: ``PRR 0, BO 1, CO 2, NYC 3, WAB 4``.

>>> HEX_IDS[CHICAGO], COMPANY_IDS[WABASH], HEX_IDS[START_HEX[WABASH]]
('A2', 'WAB', 'D3')
>>> sorted(HEX_IDS[h] for h in NEIGHBOURS[CHICAGO])
['A3', 'B2']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DATA_PATH = Path(__file__).parent / "data" / "railbarons_data.json"
"""The packaged copy of the spec's machine-readable data (``railbarons_data.json``)."""


def load_data() -> dict[str, Any]:
    """The raw data file as a dict (read from the package, never from elsewhere)."""
    with DATA_PATH.open(encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


DATA: dict[str, Any] = load_data()

# ----------------------------------------------------------------------------- terrain codes

PLAIN, FOREST, MOUNTAIN, CITY, INDUSTRIAL, START = range(6)
TERRAIN_NAMES = ("plain", "forest", "mountain", "city", "industrial_city", "start")
_TERRAIN_CODE = {name: code for code, name in enumerate(TERRAIN_NAMES)}

# ----------------------------------------------------------------------------- companies (§2)

_companies = DATA["companies"]
COMPANY_IDS: tuple[str, ...] = tuple(c["id"] for c in _companies)
"""Company ids by index: ``("PRR", "BO", "CO", "NYC", "WAB")``."""
COMPANY_INDEX: dict[str, int] = {cid: i for i, cid in enumerate(COMPANY_IDS)}
COMPANY_NAMES: tuple[str, ...] = tuple(c["name"] for c in _companies)
NUM_COMPANIES = len(COMPANY_IDS)
SHARES: tuple[int, ...] = tuple(c["shares"] for c in _companies)
"""Shares per company (§2 [V]): PRR 3, BO 4, CO 6, NYC 5, WAB 2."""
LOCOMOTIVES: tuple[int, ...] = tuple(c["locomotives"] for c in _companies)
"""Locomotives per company including the one on its start hex (§2 [V])."""
START_INCOME_DATA: tuple[int | None, ...] = tuple(c["start_income"] for c in _companies)
"""Start incomes from the data file (§2 [C]); the Wabash's is ``None`` (an option)."""
OPEN_AT_START: tuple[bool, ...] = tuple(bool(c["open_at_start"]) for c in _companies)
PRR, BO, CO, NYC, WABASH = (COMPANY_INDEX[c] for c in ("PRR", "BO", "CO", "NYC", "WAB"))
INITIAL_ORDER: tuple[int, ...] = tuple(COMPANY_INDEX[c] for c in DATA["initial_auction"]["order"])
"""The opening auction's company order (§4 [V]): PRR, B&O, C&O, NYC."""

# ----------------------------------------------------------------------------- hexes (§12)

_hexes = DATA["map"]["hexes"]
HEX_IDS: tuple[str, ...] = tuple(h["id"] for h in _hexes)
"""Hex ids by index, e.g. ``HEX_IDS[0] == "A2"``."""
HEX_INDEX: dict[str, int] = {hid: i for i, hid in enumerate(HEX_IDS)}
NUM_HEXES = len(HEX_IDS)
TERRAIN: tuple[int, ...] = tuple(_TERRAIN_CODE[h["terrain"]] for h in _hexes)
BASE_COST: tuple[int, ...] = tuple(int(h["base_cost"]) for h in _hexes)
"""Printed build cost in dollars (§7)."""
BASE_INCOME: tuple[int, ...] = tuple(int(h["income"] or 0) for h in _hexes)
"""Income a company gains on entering an undeveloped ordinary hex (§7). For industrial
cities the current track value is used instead; start hexes give their company's start income."""
DEV_BONUS: tuple[int, ...] = tuple(int(h["development_bonus"] or 0) for h in _hexes)
"""Income added by a development (cities, mountains); 0 where none is printed (§8)."""
HEX_NAMES: tuple[str | None, ...] = tuple(h.get("name") for h in _hexes)
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(HEX_INDEX[n] for n in h["neighbours"])) for h in _hexes
)
NB_MASK: tuple[int, ...] = tuple(sum(1 << n for n in nbs) for nbs in NEIGHBOURS)
"""Neighbour set of each hex as a bit mask."""
START_OWNER: tuple[int, ...] = tuple(
    COMPANY_INDEX[h["start_of"]] if h.get("start_of") else -1 for h in _hexes
)
"""Company whose start hex this is, or -1."""

CHICAGO: int = HEX_INDEX["A2"]
START_HEX: tuple[int, ...] = tuple(HEX_INDEX[c["start_hex"]] for c in _companies)

_ind = DATA["industrial_track"]
INDUSTRIAL_KEYS: tuple[str, ...] = ("detroit", "wheeling", "pittsburgh")
"""Industrial cities in slot order: 0 Detroit, 1 Wheeling, 2 Pittsburgh (§8)."""
INDUSTRIAL_HEX: tuple[int, ...] = tuple(HEX_INDEX[_ind[k]["hex"]] for k in INDUSTRIAL_KEYS)
INDUSTRIAL_START: tuple[int, ...] = tuple(int(_ind[k]["start"]) for k in INDUSTRIAL_KEYS)
"""Track values at setup (§3.4 [V]): Detroit 1, Wheeling 3, Pittsburgh 4."""
DETROIT, WHEELING, PITTSBURGH = 0, 1, 2
INDUSTRIAL_SLOT: tuple[int, ...] = tuple(
    INDUSTRIAL_HEX.index(h) if h in INDUSTRIAL_HEX else -1 for h in range(NUM_HEXES)
)
"""Industrial slot of each hex (0 Detroit, 1 Wheeling, 2 Pittsburgh) or -1."""

EXCLUSIVE: tuple[bool, ...] = tuple(t in (FOREST, MOUNTAIN) for t in TERRAIN)
"""Hexes that may hold one company's locomotive only (§7 [V]): forests and mountains."""
EXCLUSIVE_MASK: int = sum(1 << h for h in range(NUM_HEXES) if EXCLUSIVE[h])
ORDINARY_DEVELOPABLE_MASK: int = sum(
    1 << h
    for h in range(NUM_HEXES)
    if TERRAIN[h] == FOREST or (TERRAIN[h] in (CITY, MOUNTAIN) and DEV_BONUS[h] > 0)
)
"""Hexes a house can be put on once (§8): forests, mountains and cities with a printed
development bonus (Chicago has none in the data and is therefore not developable)."""
START_MASK: int = sum(1 << h for h in START_HEX)

_comp = DATA["components"]
HOUSES_IN_SUPPLY: int = int(_comp["houses_in_general_supply_at_setup"])
"""Houses in the general supply at setup (§3.4): 23 - 3 on the industrial track = 20."""
STARTING_MONEY: dict[int, int] = {
    int(k): v for k, v in DATA["starting_money"]["by_players"].items()
}
"""Starting cash per player by player count (§3.6 [V]): 2 -> 60 ... 6 -> 20."""
DETROIT_MAX: int = int(_ind["detroit"]["max"])
"""Detroit's maximum track value; reaching it is an end condition (§11 [V])."""

_end = DATA["end_game"]
END_LOCOMOTIVES_COMPANIES = 3
"""§11 [V]: 3 or more companies without locomotives on their charters end the game."""
END_SHARES_COMPANIES = 3
"""§11 [V]: 3 or more companies without unsold shares end the game."""
END_HOUSES = 3
"""§11 [V]: 3 or fewer houses in the general supply end the game."""


def hex_index(hex_id: str) -> int:
    """Index of a hex id such as ``"A2"``; -1 if unknown."""
    return HEX_INDEX.get(hex_id, -1)


def iter_bits(mask: int) -> Iterator[int]:
    """Indices of the set bits of ``mask``, lowest first.

    >>> list(iter_bits(0b10110))
    [1, 2, 4]
    """
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _distances_from(source: int) -> tuple[int, ...]:
    dist = [-1] * NUM_HEXES
    dist[source] = 0
    frontier = [source]
    while frontier:
        nxt = []
        for h in frontier:
            for n in NEIGHBOURS[h]:
                if dist[n] < 0:
                    dist[n] = dist[h] + 1
                    nxt.append(n)
        frontier = nxt
    return tuple(dist)


CHICAGO_DISTANCE: tuple[int, ...] = _distances_from(CHICAGO)
"""Hex steps from each hex to Chicago over the whole map (for bots and tests; §12 gives
B&O and C&O 16, PRR 17, NYC 18, Wabash 3)."""
