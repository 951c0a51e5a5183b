"""Game end and scores (spec "Game end", "Replay semantics" step 5)."""

from __future__ import annotations

import pytest

from services.kernel.engine import choose_per_entry
from services.kernel.playout import playout_actions
from services.kernel.rng import SeededRandom

from ..actions import Bankrupt, LayTile, PlaceToken
from ..data import MARKET, PRIVATES
from ..market import price
from .flow_helpers import FINAL, at, fixture, new
from .flow_helpers import MARKET as MARKET_GAME


def _score(st, seat):
    total = st.cash[seat]
    for ci in range(len(st.holdings)):
        if st.row[ci] >= 0:
            total += st.holdings[ci][seat] // 10 * price(st, ci)
    total += sum(PRIVATES[pi].value for pi, o in enumerate(st.private_owner) if o == seat)
    return total


def test_450_ends_the_game_at_once():
    """§Game end: a share price on the 450 cell ends the game immediately."""
    st = at(MARKET_GAME)
    assert st.is_terminal() and st.result().end_reason == "stock_market"
    assert any(
        st.row[ci] >= 0 and MARKET.is_endgame(st.row[ci], st.col[ci]) for ci in range(len(st.row))
    )
    assert st.active_seats() == () and st.legal_actions(0) == []


def test_one_more_full_or_set_after_the_first_d():
    """§Game end: the set with the first D finishes, then a SR, then one more full OR set
    without track and tokens; then the game ends (final_phase)."""
    st = at(FINAL)
    assert st.is_terminal() and st.result().end_reason == "final_phase"
    assert st.final_set and st.or_num == st.or_total == 3


def test_scores_are_cash_shares_and_privates():
    """§Game end: cash + shares at market value + face value of privates still held; the
    recorded results are reproduced."""
    for name in (FINAL, MARKET_GAME):
        st = at(name)
        ids = [p["id"] for p in fixture(name)["players"]]
        assert [_score(st, s) for s in range(st.num_players)] == list(st.result().scores)
        assert {str(ids[s]): v for s, v in enumerate(st.result().scores)} == {
            str(k): v for k, v in fixture(name)["result"].items()
        }


@pytest.mark.parametrize("players,seed", [(3, 15), (4, 11)])
def test_final_set_timing_in_random_games(players, seed):
    """§Game end (outside the recorded games, 3 and 4 players): the set in which the first D
    is bought finishes with track and tokens still allowed, then one stock round, then one
    more full OR set (3 ORs in Purple) without track or token steps; then the game ends
    (final_phase)."""
    st = new(players, seed)
    rng = SeededRandom(seed)
    seen: list[tuple[str, int, bool]] = []
    steps_in_final: set[str] = set()
    triggered = False
    while not st.is_terminal():
        seat = st.active_seats()[0]
        legal = st.legal_actions(seat)
        if st.final_set:
            assert not [a for a in legal if isinstance(a, LayTile)]
            assert not [a for a in legal if isinstance(a, PlaceToken) and st.step == "token"]
            steps_in_final.add(st.step)
        # players who may go bankrupt keep playing when they can: the game must reach Purple
        moves = [a for a in playout_actions(st, seat) if not isinstance(a, Bankrupt)]
        st.apply(seat, choose_per_entry(moves or legal, rng))
        if st.last_set_triggered and not triggered:
            triggered = True
            assert not st.final_set and st.round == "operating"
        if triggered and not st.is_terminal():
            key = (st.round, st.or_num, st.final_set)
            if not seen or seen[-1] != key:
                seen.append(key)
    assert st.end_reason == "final_phase"
    rounds = [r for r, _, _ in seen]
    k = rounds.index("stock")
    assert all(not f for r, _, f in seen[:k])  # the current set finishes normally
    assert rounds[k + 1 :].count("stock") == 0  # exactly one stock round follows
    final = seen[k + 1 :]
    assert final and all(f for _, _, f in final)
    assert [n for _, n, _ in final] == [1, 2, 3] and st.or_num == st.or_total == 3
    assert not steps_in_final & {"track", "token"}


def test_450_ends_the_game_after_the_automatic_steps_that_follow():
    """§Game end, reference engine: a payout that reaches 450 ends the game once the action's
    automatic consequences are done: here (synthetic: last OR set, Belge without cash) Belge's
    turn ends and Ouest, with no train, withholds at once, its price moving left, before the
    game ends; no later round starts."""
    from ..actions import Dividend
    from ..data import CORP_INDEX
    from ..market import price
    from .flow_helpers import MARKET, before

    st = before(MARKET, 842)  # Belge's payout reaches 450
    st.final_set = True
    st.corp_cash[CORP_INDEX["Belge"]] = 0
    ouest = CORP_INDEX["Ouest"]
    was = price(st, ouest)
    st.apply(st.active_seats()[0], Dividend("payout"))
    assert st.is_terminal() and st.end_reason == "stock_market"
    assert price(st, ouest) < was
