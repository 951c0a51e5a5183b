"""Static evaluations per title for the ``greedy`` policy.

Each module ``services.bots.heuristics.<title>`` exposes
``evaluate(state, seat) -> float``: higher is better for ``seat``. It must be
cheap (it runs once per legal action per decision).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from services.common.engine import Seat, State

Evaluate = Callable[[State, Seat], float]


def evaluator_for(title: str) -> Evaluate:
    """The ``evaluate`` function of a title.

    Raises:
        KeyError: the title has no heuristic module.
    """
    name = f"services.bots.heuristics.{title}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # a real import error inside the heuristic: do not hide it
        raise KeyError(f"no greedy heuristic for title {title!r}") from None
    return module.evaluate
