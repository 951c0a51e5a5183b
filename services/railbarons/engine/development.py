"""Development of hexes and industrial cities (spec §8).

* Ordinary targets: a city with a printed development bonus, a mountain or a forest that
  holds at least one locomotive (§8 [V]); each only once (§8 [V]); one house from the
  general supply goes on it (§8).
  - city / mountain: the hex's income rises by its bonus; every company there gains it now,
    later arrivals gain the higher value (§8 [V]);
  - forest: the bank pays ``forest_development_cash`` ($2, §8 [S]) to the company there.
* Industrial cities: Wheeling and Pittsburgh (with a locomotive) advance their track by
  their step up to their maximum, repeatable (§8 [S]); every company there gains the
  difference. Detroit cannot be developed: it advances automatically at the end of every
  dividend phase (:func:`advance_industrial`, §8 / §10.3 [V]).
* Development is free (``development_cost`` §8 [S]); no share is needed
  (``develop_requires_share`` §8 [U]).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction
from services.railbarons.engine import data
from services.railbarons.engine.actions import DECLINE, DEVELOP_ACTIONS

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES
_ORD = data.ORDINARY_DEVELOPABLE_MASK
_SLOT = data.INDUSTRIAL_SLOT
_DETROIT_HEX = data.INDUSTRIAL_HEX[data.DETROIT]
_WHEELING_HEX = data.INDUSTRIAL_HEX[data.WHEELING]
_PITTSBURGH_HEX = data.INDUSTRIAL_HEX[data.PITTSBURGH]


def companies_in(st: RailbaronsState, h: int) -> list[int]:
    """Company indices with a locomotive in hex ``h``."""
    bit = 1 << h
    net = st.net
    return [c for c in range(NC) if net[c] & bit]


def _seat_may(st: RailbaronsState, seat: int, h: int) -> bool:
    if not st.rules.dev_needs_share:
        return True
    base = seat * NC
    return any(st.held[base + c] for c in companies_in(st, h))


def candidates(st: RailbaronsState, seat: int) -> int:
    """Bit mask of hexes ``seat`` may develop now (§8)."""
    rules = st.rules
    if st.cash[seat] < rules.dev_cost:
        return 0
    occ = st.occ
    m = 0
    if st.houses > 0:
        m = occ & _ORD & ~st.developed
    if st.houses > 0 or not rules.ind_uses_house:
        ind = st.ind
        mx = rules.ind_max
        if occ >> _WHEELING_HEX & 1 and ind[1] < mx[1]:
            m |= 1 << _WHEELING_HEX
        if occ >> _PITTSBURGH_HEX & 1 and ind[2] < mx[2]:
            m |= 1 << _PITTSBURGH_HEX
    if m and rules.dev_needs_share:
        keep = 0
        for h in data.iter_bits(m):
            if _seat_may(st, seat, h):
                keep |= 1 << h
        m = keep
    return m


def legal(st: RailbaronsState, seat: int) -> list[Action]:
    """``decline`` then ``develop(hex)`` for every candidate hex in index order."""
    out: list[Action] = [DECLINE]
    m = candidates(st, seat)
    while m:
        low = m & -m
        m ^= low
        out.append(DEVELOP_ACTIONS[low.bit_length() - 1])
    return out


def check(st: RailbaronsState, seat: int, h: int) -> None:
    """Raise the rule's refusal for ``develop(h)`` by ``seat`` now (§8)."""
    hid = data.HEX_IDS[h]
    rules = st.rules
    if h == _DETROIT_HEX:
        raise IllegalAction(
            "detroit_automatic",
            "§8: Detroit cannot be developed by players; it advances automatically at the "
            "end of every dividend phase",
        )
    slot = _SLOT[h]
    if slot < 0 and not (_ORD >> h) & 1:
        raise IllegalAction(
            "not_developable",
            f"§8: {hid} cannot be developed (only cities with a development symbol, "
            "mountains, forests, Wheeling and Pittsburgh)",
        )
    if not (st.occ >> h) & 1:
        raise IllegalAction(
            "no_locomotive_in_hex", f"§8: {hid} must contain at least one locomotive"
        )
    if slot < 0:
        if (st.developed >> h) & 1:
            raise IllegalAction(
                "already_developed", f"§8: {hid} is already developed; each hex only once"
            )
        if st.houses <= 0:
            raise IllegalAction("no_houses", "§8: the general supply has no house left")
    else:
        if st.ind[slot] >= rules.ind_max[slot]:
            raise IllegalAction(
                "industrial_at_max",
                f"§8: {hid}'s track is at its maximum ({rules.ind_max[slot]})",
            )
        if rules.ind_uses_house and st.houses <= 0:
            raise IllegalAction(
                "no_houses",
                "§8 (industrial_development_uses_house): the general supply has no house left",
            )
    if st.cash[seat] < rules.dev_cost:
        raise IllegalAction(
            "insufficient_cash",
            f"§8 (development_cost): developing costs ${rules.dev_cost}; "
            f"the player has ${st.cash[seat]}",
            cost=rules.dev_cost,
            cash=st.cash[seat],
        )
    if not _seat_may(st, seat, h):
        raise IllegalAction(
            "no_share",
            f"§8 (develop_requires_share): the player owns no share of a company in {hid}",
        )


def develop(st: RailbaronsState, seat: int, h: int, ev: list[Event]) -> None:
    """Develop a (checked) hex (§8)."""
    rules = st.rules
    if rules.dev_cost:
        st.cash[seat] -= rules.dev_cost
    slot = _SLOT[h]
    if slot >= 0:
        if rules.ind_uses_house:
            st.houses -= 1
        advance_industrial(st, slot, ev, seat)
        return
    st.houses -= 1
    st.developed |= 1 << h
    present = companies_in(st, h)
    # §8: every company present gains: treasury cash in a forest, income elsewhere
    if data.TERRAIN[h] == data.FOREST:
        gains, gain_key, amount = st.treasury, "treasury_gain", rules.forest_cash
    else:
        gains, gain_key, amount = st.income, "income_gain", data.DEV_BONUS[h]
    for c in present:
        gains[c] += amount
    ev.append(
        {
            "type": "developed",
            "seat": seat,
            "hex": data.HEX_IDS[h],
            gain_key: amount,
            "companies": [data.COMPANY_IDS[c] for c in present],
        }
    )


def advance_industrial(
    st: RailbaronsState, slot: int, ev: list[Event], seat: int | None = None
) -> None:
    """Move industrial track ``slot`` (0 Detroit, 1 Wheeling, 2 Pittsburgh) one step up to
    its maximum; companies in that city gain the difference (§8)."""
    rules = st.rules
    old = st.ind[slot]
    new = min(rules.ind_max[slot], old + rules.ind_step[slot])
    if new == old:
        return
    st.ind[slot] = new
    h = data.INDUSTRIAL_HEX[slot]
    present = companies_in(st, h)
    for c in present:
        st.income[c] += new - old
    event = {
        "type": "industrial_advanced",
        "hex": data.HEX_IDS[h],
        "city": data.INDUSTRIAL_KEYS[slot],
        "value": new,
        "companies": [data.COMPANY_IDS[c] for c in present],
    }
    if seat is not None:
        event["seat"] = seat
    ev.append(event)
