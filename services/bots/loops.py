"""Loop avoidance for every bot policy: a bot must not keep a game in a loop that changes
nothing (issue 29; 1894's private auction once LRC is sold, where an all-pass pays the privates'
revenue and lowers no price, errata A1 and designer's rules v1.0.3 §5.1, so passing for ever is
legal).

A *position key* (:func:`services.kernel.positions.position_key`) is the state's JSON less the
move counter and the players' money: money that only accumulates is not progress. A policy wrapped
by :func:`avoid_loops` counts the keys of the positions it decides in; at a position seen
``repeats`` times or more it plays, instead of its own choice, a legal move whose resulting
position it has never seen (the play-out actions' first, then every legal entry, a range by its
lowest value), the policy's own choice still when that one leads somewhere new. A game without
a repeated position is played exactly as without the wrapper (no random draw, same moves).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from services.kernel.engine import Action, ActionRange, Seat, State
from services.kernel.playout import Policy, playout_actions
from services.kernel.positions import position_key

__all__ = ["REPEATS", "avoid_loops", "position_key"]

REPEATS = 3
"""A position decided in this many times (its key) is a loop (the default of
:func:`avoid_loops`)."""


def _moves(state: State, seat: Seat) -> Iterator[Action]:
    seen: set[Action] = set()
    for entries in (playout_actions(state, seat), state.legal_actions(seat)):
        for entry in entries:
            action = entry.action if type(entry) is ActionRange else entry
            if action not in seen:
                seen.add(action)
                yield action


def avoid_loops(
    policy: Policy, memory: Counter[str] | None = None, repeats: int = REPEATS
) -> Policy:
    """``policy`` that leaves a repeated position by a move to a position not seen before
    (module docstring). ``memory`` (position key -> times decided in) is shared by the seats
    of one game, so that a pass to the next seat's already seen position counts as no
    progress; a new one when not given (the returned policy's own memory).

    Raises:
        ValueError: ``repeats`` < 2.
    """
    if repeats < 2:
        raise ValueError(f"repeats must be at least 2, got {repeats}")
    seen: Counter[str] = Counter() if memory is None else memory

    def choose(state: State, seat: Seat) -> Action:
        key = position_key(state)
        seen[key] += 1
        action = policy(state, seat)
        if seen[key] < repeats:
            return action
        for move in (action, *_moves(state, seat)):
            child = state.clone()
            child.apply(seat, move)
            if child.is_terminal() or position_key(child) not in seen:
                return move
        return action

    choose.searcher = getattr(policy, "searcher", None)  # type: ignore[attr-defined]
    return choose
