"""Expansion (building track) (spec §7).

* The player must own at least one share of the company (§7 [V]).
* One action places 1 to 3 of that company's locomotives from its charter, one ``build`` at
  a time, each adjacent to a hex already holding one of its locomotives (§7 [V]).
* One locomotive per company per hex (§7 [U, implied]); forests and mountains hold one
  company only (§7 [V]); other companies' start hexes are closed (``start_hexes_exclusive``
  §7 [S]).
* Cost: the hex's printed cost, raised in shared hexes by ``build_cost_formula`` (§7 [C]),
  paid in full from the company's treasury (§7 [V]).
* Income: the company gains the hex's current income (§7 [V]); entering Chicago triggers a
  Chicago phase after the turn (§9).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction
from services.railbarons.engine import data
from services.railbarons.engine.actions import BUILD_ACTIONS, DECLINE, DONE

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES
NH = data.NUM_HEXES
MAX_PER_ACTION = 3
"""Locomotives per expansion action (§7 [V])."""
_EXCL = data.EXCLUSIVE_MASK
_NB = data.NB_MASK
_SLOT = data.INDUSTRIAL_SLOT
_BASE_INCOME = data.BASE_INCOME
_DEV_BONUS = data.DEV_BONUS
_CHICAGO = data.CHICAGO


def hex_income(st: RailbaronsState, h: int) -> int:
    """Income a company gains entering hex ``h`` now (§7): the printed income plus the
    development bonus if developed; an industrial city's current track value (§8)."""
    slot = _SLOT[h]
    if slot >= 0:
        return st.ind[slot]
    if (st.developed >> h) & 1:
        return _BASE_INCOME[h] + _DEV_BONUS[h]
    return _BASE_INCOME[h]


def build_cost(st: RailbaronsState, h: int) -> int:
    """Dollars to enter hex ``h`` for a company not yet there (§7, ``build_cost_formula``)."""
    return st.rules.cost[h * 6 + st.count[h]]


def candidates(st: RailbaronsState, c: int) -> int:
    """Bit mask of hexes company ``c`` may enter now and can pay for (§7)."""
    m = st.front[c] & ~(_EXCL & st.occ)
    if not m:
        return 0
    tr = st.treasury[c]
    cost = st.rules.cost
    count = st.count
    out = 0
    while m:
        low = m & -m
        h = low.bit_length() - 1
        m ^= low
        if cost[h * 6 + count[h]] <= tr:
            out |= low
    return out


def legal(st: RailbaronsState, seat: int) -> list[Action]:
    """``decline`` (before the first locomotive) or ``done`` (after one), then every
    ``build(company, hex)``, companies in index order, hexes in index order."""
    xc = st.x_company
    out: list[Action] = [DECLINE if xc < 0 else DONE]
    comps: Sequence[int]
    if xc >= 0:
        comps = (xc,) if st.locos[xc] > 0 else ()
    else:
        base = seat * NC
        held = st.held
        locos = st.locos
        comps = [c for c in range(NC) if held[base + c] and locos[c]]
    for c in comps:
        m = candidates(st, c)
        off = c * NH
        while m:
            low = m & -m
            m ^= low
            out.append(BUILD_ACTIONS[off + low.bit_length() - 1])
    return out


def check_build(st: RailbaronsState, seat: int, c: int, h: int) -> None:
    """Raise the rule's refusal for ``build(c, h)`` by ``seat`` now (§7)."""
    cid = data.COMPANY_IDS[c]
    if st.x_company >= 0 and c != st.x_company:
        raise IllegalAction(
            "other_company",
            f"§7: this expansion builds for {data.COMPANY_IDS[st.x_company]}; one action "
            "expands one company",
        )
    if not (st.opened >> c) & 1:
        raise IllegalAction("company_not_open", f"§9: {cid} is not open yet")
    if st.held[seat * NC + c] <= 0:
        raise IllegalAction(
            "no_share", f"§7: the player must own at least one {cid} share to expand it"
        )
    if st.locos[c] <= 0:
        raise IllegalAction("no_locomotives", f"§7: {cid} has no locomotives left on its charter")
    bit = 1 << h
    hid = data.HEX_IDS[h]
    if st.net[c] & bit:
        raise IllegalAction(
            "already_there", f"§7: {cid} already has a locomotive in {hid} (one per hex)"
        )
    if not (st.rules.allowed[c] & bit):
        raise IllegalAction(
            "start_hex_reserved",
            f"§7: {hid} is the start hex of {data.COMPANY_IDS[data.START_OWNER[h]]}; "
            "other companies may not enter it",
        )
    if not (st.net[c] & _NB[h]):
        raise IllegalAction(
            "not_adjacent", f"§7: {hid} is not adjacent to a hex with a {cid} locomotive"
        )
    if _EXCL & bit and st.occ & bit:
        raise IllegalAction(
            "exclusive_terrain",
            f"§7: {hid} is a {data.TERRAIN_NAMES[data.TERRAIN[h]]}; forests and mountains "
            "hold one company's locomotive only",
        )
    cost = build_cost(st, h)
    if cost > st.treasury[c]:
        raise IllegalAction(
            "insufficient_treasury",
            f"§7: entering {hid} costs ${cost}; {cid}'s treasury holds ${st.treasury[c]} "
            "and must pay in full",
        )


def build(st: RailbaronsState, seat: int, c: int, h: int, ev: list[Event]) -> bool:
    """Place a (checked) locomotive; returns True when the action is complete (3 placed)."""
    bit = 1 << h
    cost = st.rules.cost[h * 6 + st.count[h]]
    gain = hex_income(st, h)
    st.treasury[c] -= cost
    net = st.net[c] | bit
    st.net[c] = net
    st.front[c] = (st.front[c] | _NB[h]) & ~net & st.rules.allowed[c]
    st.occ |= bit
    st.count[h] += 1
    st.locos[c] -= 1
    st.income[c] += gain
    st.x_company = c
    st.x_hexes = st.x_hexes + (h,)
    ev.append(
        {
            "type": "built",
            "seat": seat,
            "company": data.COMPANY_IDS[c],
            "hex": data.HEX_IDS[h],
            "cost": cost,
            "income_gain": gain,
        }
    )
    if h == _CHICAGO:
        st.chi_pending = c
    return len(st.x_hexes) >= MAX_PER_ACTION


def place_start_locomotive(st: RailbaronsState, c: int) -> None:
    """Put company ``c``'s start locomotive on its start hex and set its frontier (§3.2)."""
    h = data.START_HEX[c]
    bit = 1 << h
    st.net[c] = bit
    st.front[c] = data.NB_MASK[h] & st.rules.allowed[c] & ~bit
    st.occ |= bit
    st.count[h] += 1
    st.locos[c] -= 1
    st.opened |= 1 << c
