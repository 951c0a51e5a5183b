"""The engines' read-only APIs the heuristics use (issue 16, item 4) show the state in the
rules' terms."""

from __future__ import annotations

from services.e1894.engine import GAME as E1894
from services.e1894.engine import reading as ER
from services.kernel.rng import SeededRandom
from services.railbarons.engine import GAME as RB
from services.railbarons.engine import reading as RR
from services.transsib.engine import GAME as TS
from services.transsib.engine import reading as TR
from services.transsib.engine.tests.helpers import act, new_game


def _played(game, n, seed, steps):
    s = game.new_state(n, seed)
    rng = SeededRandom(seed)
    from services.kernel.engine import choose_uniform

    for _ in range(steps):
        if s.is_terminal():
            break
        seat = s.active_seats()[0]
        s.apply(seat, choose_uniform(s.legal_actions(seat), rng))
    return s


def test_transsib_reading_names_lines_markers_and_pending_decisions():
    s = new_game(4)
    act(s, 0, "place T-BLK-2")  # 3 black steps
    act(s, 0, "track transsib black")
    r = TR.read(s)
    me = r.player(0)
    assert [line.name for line in me.lines] == ["transsib", "stpetersburg", "kiev"]
    assert me.lines[0].markers == (2, 0, 0, 0, 0)
    assert r.pending[-1] == TR.Pending(0, "track", 2)
    assert r.scores == tuple(p.score for p in s.players)
    assert not r.over and r.round == 1
    assert TR.COLOURS[0] == "black"


def test_transsib_reading_changes_nothing():
    s = _played(TS, 3, 4, 90)
    before = s.to_json()
    r = TR.read(s)
    for seat in range(3):
        r.player(seat)
    assert s.to_json() == before


def test_railbarons_reading_holdings_and_auction():
    s = _played(RB, 3, 2, 40)
    r = RR.read(s)
    for p in r.players:
        assert sum(p.shares) == sum(s.held[p.seat * 5 : p.seat * 5 + 5])
    assert [c.shares_sold for c in r.companies] == list(s.sold)
    assert all(c.chicago_distance is None or c.chicago_distance >= 0 for c in r.companies)


def test_e1894_reading_corporations_in_percent():
    s = _played(E1894, 4, 3, 150)
    r = ER.read(s)
    for c in r.corporations:
        assert c.shares == tuple(s.holdings[c.index])
        assert all(t.price > 0 for t in c.trains)
    assert [p.worth for p in r.players] == list(s.scores())
    private = ER.PRIVATES[0]
    lo, face, hi = ER.private_prices(private.sym)
    assert lo < face == private.value < hi
