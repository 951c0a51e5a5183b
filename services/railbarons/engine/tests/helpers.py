"""Shared helpers for the railbarons rule tests: scripted openings, track laying that
bypasses the turn structure (to reach a position quickly), refusal checks, and a
deterministic "steered" policy that plays like a beginner heading for Chicago (used by the
golden playthrough and the proto mapping test, so that Chicago phases and the Wabash occur).
"""

from __future__ import annotations

import pytest

from services.kernel.engine import IllegalAction
from services.kernel.rng import SeededRandom
from services.railbarons.engine import GAME, data, expansion, phases
from services.railbarons.engine.actions import (
    Bid,
    Build,
    ChooseDial,
    Decline,
    Develop,
    Done,
    Pass,
    StartAuction,
)

CI = data.COMPANY_INDEX
HI = data.HEX_INDEX


def new(n: int = 4, **options):
    """A fresh state with ``options``."""
    return GAME.new_state(n, 1, options)


def opening(st, winners: list[tuple[int, int] | None]):
    """Run the opening auction: ``winners[i] = (seat, price)`` for the i-th share (PRR, B&O,
    C&O, NYC) or ``None`` for nobody. Everybody else passes. Returns ``st``."""
    for want in winners:
        assert st.phase == phases.BIDDING and st.a_kind == phases.KIND_OPENING
        company = st.a_company
        while st.phase == phases.BIDDING and st.a_kind == phases.KIND_OPENING:
            if st.a_company != company:
                break
            seat = st.active
            if want is not None and seat == want[0] and st.a_bidder < 0:
                st.apply(seat, Bid(want[1]))
            else:
                st.apply(seat, Pass())
    return st


def standard_opening(n: int = 4, **options):
    """A game after an opening where seat ``i % n`` buys share i at its minimum bid:
    PRR -> 0 ($7), B&O -> 1 ($6), C&O -> 2 ($5), NYC -> 3 % n ($8). Seat 0 starts."""
    st = new(n, **options)
    return opening(st, [(0, 7), (1 % n, 6), (2 % n, 5), (3 % n, 8)])


def lay_track(st, company: str, hexes: list[str]) -> None:
    """Place locomotives of ``company`` on ``hexes`` in order, as builds do (bookkeeping,
    costs and incomes included) but without the turn structure or the legality checks."""
    c = CI[company]
    for hid in hexes:
        st.treasury[c] += expansion.build_cost(st, HI[hid])  # keep the treasury unchanged
        expansion.build(st, 0, c, HI[hid], [])
    st.x_company = -1
    st.x_hexes = ()
    st.chi_pending = -1


def path(company: str, target: str, avoid: tuple[str, ...] = ()) -> list[str]:
    """A shortest chain of hexes from ``company``'s start hex to ``target`` (excluding the
    start hex), through hexes it may enter and avoiding ``avoid``."""
    start = data.START_HEX[CI[company]]
    goal = HI[target]
    blocked = {HI[h] for h in avoid} | {
        data.START_HEX[o] for o in range(data.NUM_COMPANIES) if o != CI[company]
    }
    prev = {start: None}
    frontier = [start]
    while frontier and goal not in prev:
        nxt = []
        for h in frontier:
            for nb in data.NEIGHBOURS[h]:
                if nb not in prev and nb not in blocked:
                    prev[nb] = h
                    nxt.append(nb)
        frontier = nxt
    out = []
    h = goal
    while h != start:
        out.append(data.HEX_IDS[h])
        h = prev[h]
    return out[::-1]


def refuse(st, seat, action, code: str, section: str) -> IllegalAction:
    """Assert ``action`` by ``seat`` is refused with ``code``, a reason citing ``section``
    (e.g. ``"§7"``), and that the state did not change at all."""
    before = st.to_json()
    version = st.version
    with pytest.raises(IllegalAction) as err:
        st.apply(seat, action)
    assert err.value.code == code, err.value
    assert section in err.value.reason, err.value.reason
    assert st.to_json() == before
    assert st.version == version
    return err.value


def turn(st, dial: str):
    """The active seat chooses ``dial``; returns that seat."""
    seat = st.active
    st.apply(seat, ChooseDial(dial))
    return seat


def decline_turn(st, dial: str) -> int:
    """The active seat chooses ``dial`` and declines; returns that seat."""
    seat = turn(st, dial)
    st.apply(seat, Decline())
    return seat


def steered_policy(seed: int):
    """A deterministic beginner: expands mostly, always towards Chicago, bids the minimum
    or a dollar more, develops whatever it can. Reaches Chicago in most games."""
    rng = SeededRandom(seed)

    def choose(st, seat):
        legal = st.legal_actions(seat)
        if len(legal) == 1:
            return legal[0]
        p = st.phase
        if p == phases.DIAL:
            names = [a.dial for a in legal]
            weights = {"expand": 6, "auction": 3, "develop": 2}
            total = sum(weights[n] for n in names)
            r = rng.randbelow(total)
            for a in legal:
                r -= weights[a.dial]
                if r < 0:
                    return a
        if p == phases.AUCTION:
            choices = [a for a in legal if isinstance(a, StartAuction)]
            return rng.choice(choices) if choices and rng.randbelow(10) else legal[0]
        if p == phases.BIDDING:
            bids = [a for a in legal if isinstance(a, Bid)]
            if bids and rng.randbelow(10) < (7 if st.a_bidder < 0 else 3):
                return bids[0]
            return Pass() if any(isinstance(a, Pass) for a in legal) else bids[0]
        if p == phases.EXPAND:
            builds = [a for a in legal if isinstance(a, Build)]
            if not builds:
                return legal[0]
            best = min(data.CHICAGO_DISTANCE[HI[a.hex]] for a in builds)
            near = [a for a in builds if data.CHICAGO_DISTANCE[HI[a.hex]] == best]
            if isinstance(legal[0], Done) and rng.randbelow(6) == 0:
                return legal[0]
            return rng.choice(near)
        if p == phases.DEVELOP:
            devs = [a for a in legal if isinstance(a, Develop)]
            return rng.choice(devs) if devs else legal[0]
        return rng.choice(legal)

    return choose


def play(st, policy, max_steps: int = 20_000, record=None):
    """Play ``st`` to the end with ``policy(state, seat)``; ``record(seat, action, events)``
    is called after every step. Returns ``st``."""
    for _ in range(max_steps):
        if st.is_terminal():
            return st
        seat = st.active_seats()[0]
        action = policy(st, seat)
        events = st.apply(seat, action)
        if record is not None:
            record(seat, action, events)
    raise AssertionError("game did not end")


__all__ = [
    "Bid",
    "Build",
    "ChooseDial",
    "Decline",
    "Develop",
    "Done",
    "Pass",
    "StartAuction",
]
