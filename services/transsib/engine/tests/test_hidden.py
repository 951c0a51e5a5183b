"""Hidden information (§3.1 steps 3 and 9, §12.2, §15.1): the end bonus pile and the cards in
the box, the cards players hold, the engineers returned to the box (and, with the option,
the upcoming engineers) appear in no other seat's view, no spectator view and no event
before the game ends; ``to_json`` has them all."""

from __future__ import annotations

import json

import pytest

from services.kernel.rng import SeededRandom
from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine.engineers import slot_kinds
from services.transsib.engine.frames import EndBonus

EB = set(D.END_BONUS_IDS)


def _ids_in(text: str, ids: set[str]) -> set[str]:
    return {i for i in ids if f'"{i}"' in text}


def _play_checking(n: int, seed: int, options: dict) -> int:
    """Play a random game checking every view and event; returns how many end bonus cards
    the players held at the end (so callers can tell the secrets came into play)."""
    state = GAME.new_state(n, seed, options)
    rng = SeededRandom(seed)
    kinds = slot_kinds(n)
    hidden_upcoming = not state.opts.upcoming_engineers_visible
    revealed = {D.ENGINEERS[D.LETTERLESS].id}
    saw_choice = False
    step = 0
    while not state.is_terminal():
        # what is public so far
        for e, kind in zip(state.strip, kinds, strict=True):
            if e >= 0 and (kind != "upcoming" or not hidden_upcoming):
                revealed.add(D.ENGINEERS[e].id)
        for p in state.players:
            revealed.update(D.ENGINEERS[e].id for e in p.engineers)
        secret_engineers = {e.id for e in D.ENGINEERS} - revealed
        full = json.dumps(state.to_json())
        assert json.dumps([D.END_BONUS_IDS[c] for c in state.deck]) in full
        assert all(D.ENGINEERS[e].id in full for e in state.box)
        if step % 3 == 0 or state.stack and isinstance(state.stack[-1], EndBonus):
            spectator = json.dumps(state.view(None))
            assert not _ids_in(spectator, EB)
            assert not _ids_in(spectator, secret_engineers)
            for seat in range(n):
                text = json.dumps(state.view(seat))
                own = {D.END_BONUS_IDS[c] for c in state.players[seat].eb}
                choosing = bool(state.stack) and state.stack[-1] == EndBonus(seat)
                if choosing:
                    own |= {D.END_BONUS_IDS[c] for c in state.deck}
                    saw_choice = True
                assert _ids_in(text, EB) <= own, (seat, _ids_in(text, EB) - own)
                assert not _ids_in(text, secret_engineers)
        seat = state.active_seats()[0]
        action = rng.choice(state.legal_actions(seat))
        # prefer the end bonus token sometimes, so secret cards come into play
        for a in state.legal_actions(seat):
            if a.to_json() == {"type": "question_token", "token": "end_bonus"}:
                action = a
        # the action itself goes to the game's public log too (WatchGame)
        assert not _ids_in(json.dumps(action.to_json()), EB)
        events = state.apply(seat, action)
        text = json.dumps(events)
        if not state.is_terminal():
            assert not _ids_in(text, EB), events
            assert not _ids_in(
                text, secret_engineers - revealed_after(state, kinds, hidden_upcoming)
            )
        step += 1
    # at the end the cards are revealed
    final = json.dumps(state.view(None))
    held = {D.END_BONUS_IDS[c] for p in state.players for c in p.eb}
    assert held <= _ids_in(final, EB)
    if options.get("end_bonus_selection", "choose") == "choose" and held:
        assert saw_choice
    return len(held)


def revealed_after(state, kinds, hidden_upcoming) -> set[str]:
    """Engineer ids public after an action (an event may name an engineer that has
    just become visible, e.g. moving onto a variable space)."""
    out = {D.ENGINEERS[D.LETTERLESS].id}
    for e, kind in zip(state.strip, kinds, strict=True):
        if e >= 0 and (kind != "upcoming" or not hidden_upcoming):
            out.add(D.ENGINEERS[e].id)
    for p in state.players:
        out.update(D.ENGINEERS[e].id for e in p.engineers)
    return out


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize(
    "options",
    [{}, {"upcoming_engineers_visible": False}, {"end_bonus_selection": "draw_top"}],
    ids=["default", "upcoming_hidden", "draw_top"],
)
def test_secrets_never_leak_in_views_or_events(n, options):
    """Whole random games: views of other seats and spectators and all events before the
    end contain no secret card or engineer id, while to_json() does (§15.1, §3.1)."""
    held = sum(_play_checking(n, seed, options) for seed in (1, 2))
    assert held > 0  # secret cards did come into play


def test_upcoming_engineers_hidden_option_shows_placeholders():
    """§10.1 [P], option upcoming_engineers_visible=False: the strip shows 'hidden' for the
    upcoming engineers until they move onto a variable space."""
    state = GAME.new_state(4, 9, {"upcoming_engineers_visible": False})
    view = state.view(0)
    assert [s["engineer"] for s in view["strip"][:4]] == ["hidden"] * 4
    assert all(s["engineer"] not in ("", "hidden") for s in view["strip"][4:])
    visible = GAME.new_state(4, 9).view(0)
    assert all(s["engineer"] != "hidden" for s in visible["strip"])


@pytest.mark.parametrize("options", [{}, {"upcoming_engineers_visible": False}])
def test_state_from_view_samples_the_secrets_consistently(options):
    """Determinisation: the rebuilt state shows the same view and legal actions, keeps the
    counts of secret things, and does not copy the real secrets it could not see."""
    state = GAME.new_state(4, 21, options)
    rng = SeededRandom(4)
    differs = 0
    for step in range(400):
        if state.is_terminal():
            break
        seat = state.active_seats()[0]
        if step % 7 == 0:
            for viewer in (seat, (seat + 1) % 4, None):
                view = state.view(viewer)
                rebuilt = GAME.state_from_view(json.loads(json.dumps(view)), viewer, seed=step)
                assert rebuilt.view(viewer) == view
                assert len(rebuilt.deck) == len(state.deck)
                assert len(rebuilt.box) == len(state.box)
                assert [len(p.eb) for p in rebuilt.players] == [len(p.eb) for p in state.players]
                if viewer == seat:
                    assert rebuilt.legal_actions(seat) == state.legal_actions(seat)
                differs += rebuilt.deck != state.deck
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert differs > 0  # the pile order is sampled, not copied
