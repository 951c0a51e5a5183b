"""Generic contract tests every registered title must pass (OpenSpiel's
``random_sim_test`` and serialisation round-trips, adapted).

For each title and each player count:

* random full games never raise anything but ``IllegalAction`` for illegal input;
* every legal action is accepted, a sample of non-legal ones is refused and
  the refusal leaves the state unchanged;
* replaying the log gives an identical state;
* ``clone()`` is independent;
* actions round-trip through their canonical JSON form;
* views are JSON-able and never contain the seed.
"""

from __future__ import annotations

import json

import pytest

from services.common.engine import Action, IllegalAction, MalformedAction, Result
from services.common.playout import playout_actions
from services.common.registry import available_titles, get_game
from services.common.rng import SeededRandom

CASES = [
    (title, n)
    for title in available_titles()
    for n in range(get_game(title).min_players, get_game(title).max_players + 1)
]

SEED = 20261129


def _ids(case):
    return f"{case[0]}-{case[1]}p"


@pytest.fixture(params=CASES, ids=_ids)
def case(request):
    return request.param


def _random_game(title: str, n: int, seed: int, probe_illegal: bool = True):
    """Play a random game; return (final state, log). Probes illegal actions
    along the way when asked."""
    game = get_game(title)
    state = game.new_state(n, seed)
    rng = SeededRandom(seed)
    log: list[tuple[int, dict]] = []
    seen: dict[str, Action] = {}
    steps = 0
    while not state.is_terminal():
        steps += 1
        assert steps < 200_000, "game does not end"
        seats = state.active_seats()
        assert seats, "a live game must have an active seat"
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        legal = state.legal_actions(seat)
        assert legal, f"active seat {seat} has no legal action at version {state.version}"
        legal_keys = {json.dumps(a.to_json(), sort_keys=True) for a in legal}
        assert len(legal_keys) == len(legal), "legal_actions lists duplicates"
        for a in legal:
            seen.setdefault(json.dumps(a.to_json(), sort_keys=True), a)
        if probe_illegal and steps % 7 == 0:
            before = state.to_json()
            # an action legal somewhere else in this game but not here
            for key, other in list(seen.items())[-40:]:
                if key in legal_keys:
                    continue
                with pytest.raises(IllegalAction):
                    state.apply(seat, other)
                break
            # a seat that is not active
            idle = [s for s in range(n) if s not in seats]
            if idle:
                with pytest.raises(IllegalAction) as err:
                    state.apply(idle[0], legal[0])
                assert err.value.code == "not_your_turn"
            assert state.to_json() == before, "a refused action changed the state"
        action = rng.choice(playout_actions(state, seat))
        assert action in legal, "a play-out action must be legal"
        # round trip through canonical JSON on every step
        assert game.parse_action(json.loads(json.dumps(action.to_json()))) == action
        events = state.apply(seat, action)
        assert isinstance(events, list)
        json.dumps(events)
        log.append((seat, action.to_json()))
        assert state.version == len(log)
    return state, log


def test_random_games_end_with_a_result(case):
    title, n = case
    for k in range(2):
        state, log = _random_game(title, n, SEED + k)
        result = state.result()
        assert isinstance(result, Result)
        assert len(result.scores) == n and len(result.ranks) == n
        assert min(result.ranks) == 1
        assert result.end_reason
        assert state.active_seats() == ()
        with pytest.raises(IllegalAction) as err:
            state.apply(0, get_game(title).parse_action(log[-1][1]))
        assert err.value.code == "game_over"


def test_replaying_the_log_gives_an_identical_state(case):
    title, n = case
    game = get_game(title)
    state, log = _random_game(title, n, SEED + 11, probe_illegal=False)
    replayed = game.replay(n, SEED + 11, None, log)
    assert replayed.to_json() == state.to_json()
    assert replayed.result() == state.result()


def test_same_seed_same_state_and_seeds_differ(case):
    title, n = case
    game = get_game(title)
    a = game.new_state(n, 5)
    b = game.new_state(n, 5)
    assert a.to_json() == b.to_json()


def test_clone_is_independent(case):
    title, n = case
    game = get_game(title)
    state = game.new_state(n, SEED)
    rng = SeededRandom(3)
    for _ in range(30):
        if state.is_terminal():
            break
        seat = state.active_seats()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    before = state.to_json()
    twin = state.clone()
    assert twin.to_json() == before
    for _ in range(30):
        if twin.is_terminal():
            break
        seat = twin.active_seats()[0]
        twin.apply(seat, rng.choice(twin.legal_actions(seat)))
    assert state.to_json() == before, "playing the clone changed the original"


def test_views_are_json_and_hide_the_seed(case):
    title, n = case
    game = get_game(title)
    seed = 987654321987
    state = game.new_state(n, seed)
    rng = SeededRandom(1)
    for step in range(200):
        if state.is_terminal():
            break
        if step % 10 == 0:
            for seat in [None, *range(n)]:
                view = state.view(seat)
                assert str(seed) not in json.dumps(view)
                # nor anything that looks like a generator state or a seed (64-bit integers)
                assert not [x for x in _integers(view) if abs(x) >= 2**32], "a huge integer"
        seat = state.active_seats()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))


def _integers(obj):
    if isinstance(obj, bool):
        return
    if isinstance(obj, int):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _integers(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _integers(v)


def test_malformed_actions_are_refused(case):
    title, _ = case
    game = get_game(title)
    for bad in ({"type": "no_such_action"}, {}, [], "not json", {"type": 3}):
        with pytest.raises(MalformedAction):
            game.parse_action(bad)


def test_state_from_view_matches_what_the_seat_sees(case):
    """Determinisation (Game.state_from_view): the bots' only way to simulate.
    The rebuilt state shows the seat the same view, the same active seats and
    the same legal actions, and can be played on."""
    title, n = case
    game = get_game(title)
    state = game.new_state(n, SEED)
    rng = SeededRandom(17)
    step = 0
    while not state.is_terminal():
        if step % 5 == 0:
            seat = state.active_seats()[0]
            view = state.view(seat)
            rebuilt = game.state_from_view(json.loads(json.dumps(view)), seat, seed=step)
            assert rebuilt.view(seat) == view
            assert rebuilt.active_seats() == state.active_seats()
            legal = state.legal_actions(seat)
            assert rebuilt.legal_actions(seat) == legal
            probe = rebuilt.clone()
            probe.apply(seat, legal[0])
        seat = state.active_seats()[0]
        state.apply(seat, rng.choice(playout_actions(state, seat)))
        step += 1
