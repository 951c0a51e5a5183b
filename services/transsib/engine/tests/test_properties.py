"""Invariants under any sequence of legal moves (hypothesis):

* §5.1: a marker never catches up with or overtakes the colour ahead of it, stays on its
  line, and lines only carry their own colours (§6.1);
* §4.2/§13: nothing gained is ever lost, so no player's points ever decrease;
* workers are conserved: own workers free + on the board = owned; the black worker likewise;
  the two turquoise workers are on their space, with a player, or on the board;
* locomotive/factory tiles are conserved (supply + returned + on boards).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.kernel.rng import SeededRandom
from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine.frames import LocoInHand


def check_invariants(state, previous_scores: list[int]) -> None:
    for seat, p in enumerate(state.players):
        for line in range(len(D.LINES)):
            pos = p.pos[line * 5 : line * 5 + 5]
            assert 1 <= pos[0] <= D.LINE_LENGTH[line]
            for c in range(1, 5):
                if not (D.LINE_COLOURS_MASK[line] >> c & 1):
                    assert pos[c] == 0
                if pos[c]:
                    assert p.unlocked >> c & 1
                    assert pos[c - 1] > pos[c], (seat, line, pos)
                else:
                    assert all(x == 0 for x in pos[c:]), (seat, line, pos)
        assert p.score >= previous_scores[seat]
        assert p.own >= 0 and p.placed_own >= 0 and p.own + p.placed_own == p.perm_own
        restricted = state.opts.black_worker_black_track_only
        assert p.black + p.placed_black == (1 if p.has_black and restricted else 0)
        assert p.coins >= 0
    turquoise = sum(p.temp + p.placed_temp for p in state.players)
    assert turquoise + (D.TEMP_WORKERS if state.temp_on_space else 0) == D.TEMP_WORKERS
    stack = D.PLAYER_COUNT[state.num_players]["loco_per_stack"]
    card9 = 0 if state.qcards[D.QUESTION_CARDS.index("QC-LOCO9")] else 1
    for number in range(1, D.MAX_LOCO + 1):
        on_boards = sum(p.locos.count(number) + p.factories.count(number) for p in state.players)
        in_hand = sum(
            1 for f in state.stack if isinstance(f, LocoInHand) and f.number == number
        )  # being placed
        total = state.supply[number] + state.pool[number] + on_boards + in_hand
        expected = state.num_players if number == 1 else stack
        if number == 9:
            expected += card9
        assert total == expected, (number, total, expected)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 2**32 - 1),
    choices=st.lists(st.integers(0, 1_000_000), min_size=0, max_size=300),
    restricted_black=st.booleans(),
    mixing=st.booleans(),
)
def test_invariants_hold_through_whole_games(n, seed, choices, restricted_black, mixing):
    """§5.1, §4.2, §13 and worker/tile conservation over whole games (module docstring)."""
    options = {
        "black_worker_black_track_only": restricted_black,
        "coins_mixing_allowed": mixing,
    }
    state = GAME.new_state(n, seed, options)
    rng = SeededRandom(seed)
    scores = [p.score for p in state.players]
    i = 0
    while not state.is_terminal():
        seat = state.active_seats()[0]
        legal = state.legal_actions(seat)
        if i < len(choices):
            action = legal[choices[i] % len(legal)]
        else:
            action = rng.choice(legal)
        i += 1
        state.apply(seat, action)
        check_invariants(state, scores)
        scores = [p.score for p in state.players]
    assert state.result().scores == tuple(scores)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 4]))
def test_legal_actions_are_all_accepted_and_unique(seed, n):
    """Every listed action is accepted on a clone; the list has no duplicates."""
    state = GAME.new_state(n, seed)
    rng = SeededRandom(seed)
    for _ in range(60):
        if state.is_terminal():
            break
        seat = state.active_seats()[0]
        legal = state.legal_actions(seat)
        assert len(set(legal)) == len(legal)
        for action in legal:
            state.clone().apply(seat, action)
        state.apply(seat, rng.choice(legal))
