"""The step vocabulary of Chicago Express' and 1894's flows (18xx.games' rounds and steps;
Russian Railroads' frames do not use it: docs/architecture.md, "A newcomer's note: one engine
shape").

A *step* is the unit of rules: it has a ``NAME`` (what the state records while it runs), the
action classes it ``HANDLES``, its ``legal`` moves, its ``apply`` (validate completely, then
change the state) and its ``skip`` ("nothing to decide here: the flow moves on"). One flow
module per engine lists the steps in rulebook order and alone decides what comes next; this
module holds what those flows share:

* :class:`StepUnit`, the protocol. A title narrows the arguments (1894's operating steps take
  the operating corporation, ``services/e1894/engine/operating_round/common.py``,
  ``OperatingStep``); the names and their meaning are the same everywhere.
* :class:`TableStep`, a step made of a table (action class -> handler), for titles whose steps
  are rows rather than modules (Chicago Express, ``services/railbarons/engine/flow.py``).
* :func:`handles` and :func:`by_action`: dispatch by ``HANDLES``.
* :func:`wrong_step`: the one refusal of an action that is not a move of the running step.
* :func:`advance`: the skip/advance loop.

>>> from services.kernel.engine import Action
>>> class Roll(Action):
...     TYPE = "roll"
>>> class Stop(Action):
...     TYPE = "stop"
>>> roll = TableStep("roll", {Roll: lambda st, seat, action, ev: ev.append("rolled")},
...                  lambda st, seat: [Roll()])
>>> roll.HANDLES == (Roll,), handles(roll, Roll()), handles(roll, Stop())
(True, True, False)
>>> by_action([roll])[Roll] is roll
True
>>> wrong_step("stop is not a move of the roll step").code
'wrong_step'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from services.kernel.engine import Action, Event, IllegalAction

WRONG_STEP = "wrong_step"
"""The refusal code of an action that the running step does not take."""


class StepUnit(Protocol):
    """One step of a title's turn structure (a module or an object).

    * ``NAME``: the step's name (the state records it while the step runs).
    * ``HANDLES``: the action classes :meth:`apply` takes; the flow refuses the others
      (:func:`wrong_step`, or a more precise refusal of the title's).
    """

    @property
    def NAME(self) -> str: ...

    @property
    def HANDLES(self) -> tuple[type[Action], ...]: ...

    def legal(self, *args: Any, **kwargs: Any) -> Any:
        """The step's own legal moves, in a fixed order."""
        ...

    def apply(self, *args: Any, **kwargs: Any) -> Any:
        """Validate (raising before any change), then change the state."""
        ...

    def skip(self, *args: Any, **kwargs: Any) -> bool:
        """True when the step has nothing (more) to decide: the flow moves on (after doing
        the step's automatic part, if any)."""
        ...


Unit = TypeVar("Unit", bound=StepUnit)
S = TypeVar("S")

Handler = Callable[[Any, int, Any, list[Event]], None]
"""``handler(state, seat, action, events)``: validates, then changes the state."""


def _never(st: Any) -> bool:
    return False


@dataclasses.dataclass(frozen=True)
class TableStep:
    """A :class:`StepUnit` made of a table: each action class it takes with its handler.

    Attributes:
        NAME: the step's name.
        handlers: action class -> ``handler(state, seat, action, events)``.
        legal: ``legal(state, seat) -> list[Action]``, the step's moves in a fixed order.
        skip: ``skip(state) -> bool`` (default: never; a step that resolves itself does so
            inside the handler that leads to it).
        key: what the state records while the step runs, where that is not :attr:`NAME`
            (Chicago Express: a phase code).
    """

    NAME: str
    handlers: dict[type[Action], Handler]
    legal: Callable[[Any, int], list[Action]]
    skip: Callable[[Any], bool] = _never
    key: Any = None

    @property
    def HANDLES(self) -> tuple[type[Action], ...]:
        return tuple(self.handlers)

    def apply(self, st: Any, seat: int, action: Action, ev: list[Event]) -> None:
        """Validate ``action`` (one of :attr:`HANDLES`), then change ``st``; events to ``ev``.

        Raises:
            IllegalAction / MalformedAction: as the handler; nothing changed.
        """
        self.handlers[type(action)](st, seat, action, ev)


def handles(unit: StepUnit, action: Action) -> bool:
    """Whether ``action`` is a move of ``unit`` (an instance of one of its ``HANDLES``)."""
    return isinstance(action, unit.HANDLES)


def by_action(units: Iterable[Unit]) -> dict[type[Action], Unit]:
    """Action class -> the step that takes it (the last one listed, where several do)."""
    return {cls: unit for unit in units for cls in unit.HANDLES}


def wrong_step(message: str) -> IllegalAction:
    """``wrong_step``: the action is not a move of the running step; ``message`` says which
    step runs (and, where the title says it, what the seat must do instead)."""
    return IllegalAction(WRONG_STEP, message)


def advance(
    st: S,
    *,
    running: Callable[[S], bool],
    unit_of: Callable[[S], Unit],
    skip: Callable[[Unit, S], bool],
    still_running: Callable[[S], bool],
    move_on: Callable[[S, Unit], None],
) -> None:
    """The skip/advance loop: while the flow ``running``, ask the running step (``unit_of``)
    whether it has nothing to decide (``skip``, which does the step's automatic part); stop at
    the first step that has a decision, or when the step's automatic part ended the round
    (``still_running`` false); else ``move_on`` to what follows (the next step, or the end of
    a turn)."""
    while running(st):
        unit = unit_of(st)
        if not skip(unit, st):
            return
        if not still_running(st):
            return
        move_on(st, unit)
