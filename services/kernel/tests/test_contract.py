"""Generic contract tests every registered title must pass (OpenSpiel's
``random_sim_test`` and serialisation round-trips, adapted).

For each title and each player count:

* random full games never raise anything but ``IllegalAction`` for illegal input;
* every legal action is accepted, a sample of non-legal ones is refused and
  the refusal leaves the state unchanged;
* every value of a range (:class:`ActionRange`) is accepted and the values just
  outside it (``min - 1``, ``max + 1``, off-step values) are refused, leaving the
  state unchanged: all values for the first state of each ranged action type in
  a game, the two ends and a middle value at every probed step;
* replaying the log gives an identical state;
* ``clone()`` is independent;
* actions round-trip through their canonical JSON form;
* views are JSON-able and never contain the seed;
* every view names its viewer (``"viewer"``: the seat, ``None`` for a spectator).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from services.kernel.engine import (
    Action,
    ActionRange,
    Game,
    IllegalAction,
    MalformedAction,
    Result,
    canonical_json,
    choose_per_entry,
    concrete_actions,
    is_listed,
    legal_from_json,
)
from services.kernel.playout import playout_actions
from services.kernel.rng import SeededRandom
from services.rules.titles import available_titles, get_game

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


def _check_entries(game, legal) -> None:
    """No duplicates, no plain action inside a listed range, JSON round trip of each entry."""
    keys = {canonical_json(e.to_json()) for e in legal}
    assert len(keys) == len(legal), "legal_actions lists duplicates"
    ranges = [e for e in legal if isinstance(e, ActionRange)]
    for entry in legal:
        assert legal_from_json(game.codec, json.loads(json.dumps(entry.to_json()))) == entry
        if ranges and not isinstance(entry, ActionRange):
            assert not [r for r in ranges if r.contains(entry)], f"{entry} is also in a range"


def _probe_ranges(state, seat: int, legal, all_values_of: set[str]) -> None:
    """Every value of each range (all of them for the ranged action types in
    ``all_values_of``, else both ends and a middle one) is accepted on a clone;
    ``min - 1``, ``max + 1`` and off-step values are refused (IllegalAction), and the
    refusals leave ``state`` unchanged."""
    before = state.to_json()
    for entry in legal:
        if not isinstance(entry, ActionRange):
            continue
        if entry.action.TYPE in all_values_of:
            values = list(entry.values())
        else:
            values = sorted({entry.min, entry.max, entry.values()[len(entry) // 2]})
        for value in values:
            state.clone().apply(seat, entry.at(value))
        outside = [entry.min - 1, entry.max + 1]
        if entry.step > 1:
            outside += [entry.min + 1, entry.max - 1, entry.min + entry.step // 2]
        for value in outside:
            wrong = dataclasses.replace(entry.action, **{entry.field: value})
            if is_listed(legal, wrong):
                continue  # legal through another entry
            with pytest.raises(IllegalAction):
                state.apply(seat, wrong)
    assert state.to_json() == before, "a refused value changed the state"


RANGED_TYPES = {"e1894": {"bid", "buy_train", "buy_company"}}
"""The action types a title lists as ranges: its random games must probe each (so the
range checks below are not vacuous); titles not named list none."""


def _random_game(title: str, n: int, seed: int, probe_illegal: bool = True, probed=None):
    """Play a random game (an entry of the play-out actions uniformly, a range's value
    uniformly within it; the checks use the full ``legal_actions``);
    return (final state, log). Probes illegal actions and the ranges' bounds along
    the way when asked, adding the ranged action types met to ``probed``."""
    game = get_game(title)
    state = game.new_state(n, seed)
    rng = SeededRandom(seed)
    log: list[tuple[int, dict]] = []
    seen: dict[str, Action] = {}
    fully_probed: set[str] = set()
    steps = 0
    while not state.is_terminal():
        steps += 1
        assert steps < 200_000, "game does not end"
        seats = state.active_seats()
        assert seats, "a live game must have an active seat"
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        legal = state.legal_actions(seat)
        assert legal, f"active seat {seat} has no legal action at version {state.version}"
        if probe_illegal:
            _check_entries(game, legal)
        ranged = {e.action.TYPE for e in legal if isinstance(e, ActionRange)}
        for e in legal:
            for a in (e.at(e.min), e.at(e.max)) if isinstance(e, ActionRange) else (e,):
                seen.setdefault(canonical_json(a.to_json()), a)
        if probe_illegal and (steps % 7 == 0 or ranged - fully_probed):
            before = state.to_json()
            # an action legal somewhere else in this game but not here
            for _key, other in list(seen.items())[-40:]:
                if is_listed(legal, other):
                    continue
                with pytest.raises(IllegalAction):
                    state.apply(seat, other)
                break
            # a seat that is not active
            idle = [s for s in range(n) if s not in seats]
            if idle:
                with pytest.raises(IllegalAction) as err:
                    state.apply(idle[0], next(concrete_actions(legal)))
                assert err.value.code == "not_your_turn"
            assert state.to_json() == before, "a refused action changed the state"
            _probe_ranges(state, seat, legal, ranged - fully_probed)
            fully_probed |= ranged
            if probed is not None:
                probed |= ranged
        hint = playout_actions(state, seat)
        assert hint, f"seat {seat} has no play-out action at version {state.version}"
        if probe_illegal:  # each play-out entry (a range: its ends) is legal
            for e in hint:
                for a in (e.at(e.min), e.at(e.max)) if isinstance(e, ActionRange) else (e,):
                    assert is_listed(legal, a), f"play-out entry {e} is not legal"
        action = choose_per_entry(hint, rng)
        assert is_listed(legal, action), "a play-out action must be legal"
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
    probed: set[str] = set()
    for k in range(2):
        state, log = _random_game(title, n, SEED + k, probed=probed)
        result = state.result()
        assert isinstance(result, Result)
        assert len(result.scores) == n and len(result.ranks) == n
        assert min(result.ranks) == 1
        assert result.end_reason
        assert state.active_seats() == ()
        with pytest.raises(IllegalAction) as err:
            state.apply(0, get_game(title).parse_action(log[-1][1]))
        assert err.value.code == "game_over"
    assert probed == RANGED_TYPES.get(title, set()), "ranged types met in random games"


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
        state.apply(seat, choose_per_entry(state.legal_actions(seat), rng))
    before = state.to_json()
    twin = state.clone()
    assert twin.to_json() == before
    for _ in range(30):
        if twin.is_terminal():
            break
        seat = twin.active_seats()[0]
        twin.apply(seat, choose_per_entry(twin.legal_actions(seat), rng))
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
        state.apply(seat, choose_per_entry(state.legal_actions(seat), rng))


def test_every_view_names_its_viewer(case):
    """The one view envelope of every title: ``view(seat)["viewer"]`` is ``seat``, and
    ``None`` for a spectator (the title template, docs/architecture.md)."""
    title, n = case
    game = get_game(title)
    state = game.new_state(n, 5)
    rng = SeededRandom(2)
    for _ in range(3):
        for seat in [None, *range(n)]:
            assert state.view(seat)["viewer"] == seat
            assert (state.view(seat)["viewer"] is None) == (seat is None)
        seat = state.active_seats()[0]
        state.apply(seat, choose_per_entry(state.legal_actions(seat), rng))


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
            probe.apply(seat, next(concrete_actions(legal)))
        seat = state.active_seats()[0]
        state.apply(seat, choose_per_entry(playout_actions(state, seat), rng))
        step += 1


def test_every_title_describes_its_moves_and_seats(case):
    """Every legal entry of a random game has a non-empty label, unique among the entries
    legal at once; a label never depends on what other seats cannot see (it is the same on
    a state rebuilt from a spectator's view); each seat gets a summary line, for every
    viewer."""
    title, n = case
    game = get_game(title)
    assert type(game).describe is not Game.describe, f"{title} does not describe its moves"
    assert type(game).summarize_view is not Game.summarize_view, f"{title} has no summaries"
    state = game.new_state(n, SEED + 23)
    rng = SeededRandom(SEED + 23)
    steps = 0
    while not state.is_terminal():
        steps += 1
        seat = state.active_seats()[0]
        legal = state.legal_actions(seat)
        labels = game.describe_all(state, legal)
        assert all(isinstance(t, str) and t.strip() for t in labels), labels
        dupes = {t for t in labels if labels.count(t) > 1}
        assert not dupes, f"{title} v{state.version}: labels {sorted(dupes)} name several moves"
        if steps % 25 == 1:
            public = game.state_from_view(state.view(None), None, seed=steps)
            assert game.describe_all(public, legal) == labels, "a label uses hidden information"
            for viewer in (None, *range(n)):
                lines = game.seat_summaries(state, viewer)
                assert len(lines) == n and all(line.strip() for line in lines)
        state.apply(seat, choose_per_entry(playout_actions(state, seat), rng))
    for viewer in (None, *range(n)):
        assert len(game.seat_summaries(state, viewer)) == n
