"""Static evaluations per title for the ``greedy`` policy.

Each module ``services.bots.heuristics.<title>`` exposes
``evaluate(state, seat) -> float``: higher is better for ``seat``. It must be
cheap (it runs once per legal action per decision).

A module may also expose ``candidate_values(state, seat, entry) -> Iterable[int]``:
the few values of an :class:`~services.kernel.engine.ActionRange` entry of
``legal_actions`` worth evaluating (a price, a bid); values outside the range are
ignored. Without it the greedy policy tries the range's two ends
(:func:`default_candidates`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from services.kernel.engine import Action, ActionRange, Seat, State
from services.kernel.playout import playout_actions

Evaluate = Callable[[State, Seat], float]
Candidates = Callable[[State, Seat, ActionRange], Iterable[int]]


def default_candidates(state: State, seat: Seat, entry: ActionRange) -> tuple[int, ...]:
    """The ends of the range: its lowest and its highest value."""
    return (entry.min, entry.max)


def _module(title: str):
    name = f"services.bots.heuristics.{title}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # a real import error inside the heuristic: do not hide it
        raise KeyError(f"no greedy heuristic for title {title!r}") from None


def evaluator_for(title: str) -> Evaluate:
    """The ``evaluate`` function of a title.

    Raises:
        KeyError: the title has no heuristic module.
    """
    return _module(title).evaluate


def candidates_for(title: str) -> Candidates:
    """The title's ``candidate_values`` function, or :func:`default_candidates`.

    Raises:
        KeyError: the title has no heuristic module.
    """
    return getattr(_module(title), "candidate_values", default_candidates)


def greedy_options(title: str) -> Callable[[State, Seat], list[Action]]:
    """``options(state, seat)``: the concrete actions the greedy policy (and the search
    policies) consider: the play-out actions, each range reduced to the values the title's
    ``candidate_values`` proposes that lie in it (its lowest value when none does).

    Raises:
        KeyError: the title has no heuristic.
    """
    candidates = candidates_for(title)

    def options(state: State, seat: Seat) -> list[Action]:
        out: list[Action] = []
        for entry in playout_actions(state, seat):
            if type(entry) is ActionRange:
                values = entry.values()
                tried = sorted({v for v in candidates(state, seat, entry) if v in values})
                out.extend(entry.at(v) for v in tried or (entry.min,))
            else:
                out.append(entry)
        return out

    return options


Estimates = Callable[[State], list[float]]


def estimator_for(title: str) -> Estimates | None:
    """The title's ``estimates(state) -> [float per seat]`` (each seat's estimated final
    score, in the title's unit, for the search's cut-offs and root ordering), or ``None``
    when the title has none (the search then uses ``evaluate``).

    Raises:
        KeyError: the title has no heuristic module.
    """
    return getattr(_module(title), "estimates", None)
