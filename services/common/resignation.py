"""Resignation, generic over every title: the per-title policy (one place) and
the state wrapper the rules service plays through.

A resignation is recorded in the game's log like a move: an entry of the
resigning seat whose action is ``{"type": "resign"}`` (:class:`Resign`). It is
never an engine action; :class:`ResignableState` wraps the engine's state,
counts the entry as one version and applies the title's policy:

* ``end``: the game ends at once. The engine never scored the unfinished
  game, so every score is 0; the seats still playing share rank 1 and the
  resigned seat is ranked last (``end_reason`` ``"resignation"``).
* ``continue``: the game goes on; the resigned seat still acts (the lobby
  hands it to the policy's ``takeover_policy``, a hosted bot) and, whatever its
  score at the end, is ranked last; the others keep their order.

The policy of each title is :data:`RESIGNATION` (the uncertain rule value: none
of the rulebooks covers players leaving), overridable per deployment with the
setting ``ROUNDHOUSE_RESIGNATION`` (JSON: title -> ``"end"`` | ``"continue"``),
read by :func:`resignation_policy`. The lobby and the rules services read the
same setting, so they agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from services.common.engine import JSON, Action, Event, IllegalAction, Result, Seat, State

END, CONTINUE = "end", "continue"
RESIGN_TYPE = "resign"


@dataclasses.dataclass(frozen=True, slots=True)
class ResignationPolicy:
    """What a resignation does to a game of one title.

    Attributes:
        mode: ``"end"`` or ``"continue"`` (module docstring).
        takeover_policy: the hosted bot policy that plays a resigned seat when
            the game continues (``services/bots/policies.py``).
    """

    mode: str = END
    takeover_policy: str = "random"

    def __post_init__(self) -> None:
        if self.mode not in (END, CONTINUE):
            raise ValueError(f"resignation mode must be {END!r} or {CONTINUE!r}, got {self.mode!r}")


RESIGNATION: dict[str, ResignationPolicy] = {
    # Chicago Express: the shares and companies a player holds drive everyone's income; a
    # seat that left would freeze them, so the game ends.
    "railbarons": ResignationPolicy(END),
    # Russian Railroads: a worker-placement race scored per player; the others' game does not
    # depend on the resigned seat's holdings, so it continues with a hosted bot in the seat.
    "transsib": ResignationPolicy(CONTINUE, takeover_policy="random"),
    # 1894: a president who left would still run corporations the others hold shares of.
    "e1894": ResignationPolicy(END),
}
"""Default resignation policy per title (override: ``ROUNDHOUSE_RESIGNATION``)."""


def resignation_policy(title: str, overrides: Mapping[str, str] | None = None) -> ResignationPolicy:
    """The policy of ``title``: ``overrides[title]`` (``"end"``/``"continue"``,
    from ``Settings.resignation``) if set, else :data:`RESIGNATION` (``end`` for
    an unlisted title). Raises ValueError for an unknown mode."""
    default = RESIGNATION.get(title, ResignationPolicy(END))
    mode = (overrides or {}).get(title)
    return dataclasses.replace(default, mode=mode) if mode else default


@dataclasses.dataclass(frozen=True, slots=True)
class Resign(Action):
    """A seat gives up (the rules service's ``Resign``; never sent as a move)."""

    TYPE: ClassVar[str] = RESIGN_TYPE


def is_resignation(action_json: Mapping[str, Any]) -> bool:
    """Whether a log entry's action (parsed JSON) is a resignation."""
    return action_json.get("type") == RESIGN_TYPE


class ResignableState:
    """An engine :class:`State` plus the resignations of its game.

    It offers the State interface the rules service uses (``version``,
    ``num_players``, ``active_seats``, ``legal_actions``, ``apply``,
    ``is_terminal``, ``result``, ``view``, ``clone``); other attributes are the
    engine state's. ``version`` counts the resignation entries too, so it is
    always the game log's version.

    Args:
        inner: the engine's state.
        policy: the title's :class:`ResignationPolicy`.
    """

    __slots__ = ("inner", "policy", "resigned", "_extra", "_ended")

    def __init__(self, inner: State, policy: ResignationPolicy) -> None:
        self.inner = inner
        self.policy = policy
        self.resigned: tuple[Seat, ...] = ()
        self._extra = 0  # resignation entries in the log
        self._ended = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def version(self) -> int:
        return self.inner.version + self._extra

    @property
    def num_players(self) -> int:
        return self.inner.num_players

    @property
    def game(self):
        return self.inner.game

    def is_terminal(self) -> bool:
        return self._ended or self.inner.is_terminal()

    def active_seats(self) -> tuple[Seat, ...]:
        return () if self._ended else self.inner.active_seats()

    def legal_actions(self, seat: Seat) -> list[Action]:
        return [] if self._ended else self.inner.legal_actions(seat)

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        return self.inner.view(seat)

    def to_json(self) -> dict[str, JSON]:
        return {**self.inner.to_json(), "resigned": list(self.resigned), "ended": self._ended}

    def apply(self, seat: Seat, action: Action) -> list[Event]:
        """Apply a move (the engine's rules) or a :class:`Resign`.

        Raises:
            IllegalAction: ``game_over`` after the end; ``seat_resigned`` for a
                second resignation of one seat; the engine's refusals.
        """
        if self._ended:
            raise IllegalAction("game_over", "the game is over; no more actions are accepted")
        if not isinstance(action, Resign):
            return self.inner.apply(seat, action)
        if self.inner.is_terminal():
            raise IllegalAction("game_over", "the game is over; no more actions are accepted")
        if seat in self.resigned:
            raise IllegalAction("seat_resigned", f"seat {seat} has already resigned")
        self.resigned = (*self.resigned, seat)
        self._extra += 1
        if self.policy.mode == END:
            self._ended = True
        return [{"type": "resigned", "seat": seat, "game_ends": self._ended}]

    def result(self) -> Result:
        """The result with every resigned seat ranked last (module docstring).

        Raises:
            IllegalAction: ``game_not_over`` before the end.
        """
        if self._ended:
            n = self.num_players
            playing = n - len(self.resigned)
            ranks = tuple(playing + 1 if s in self.resigned else 1 for s in range(n))
            return Result(tuple(0 for _ in range(n)), ranks, "resignation")
        result = self.inner.result()
        if not self.resigned:
            return result
        return rank_resigned_last(result, self.resigned)

    def clone(self) -> ResignableState:
        other = ResignableState(self.inner.clone(), self.policy)
        other.resigned, other._extra, other._ended = self.resigned, self._extra, self._ended
        return other


def rank_resigned_last(result: Result, resigned: tuple[Seat, ...]) -> Result:
    """``result`` re-ranked: the seats still playing keep their relative order
    (competition ranking among themselves), the resigned seats share the last
    rank; scores and end reason unchanged."""
    n = len(result.ranks)
    playing = [s for s in range(n) if s not in resigned]
    ranks = [0] * n
    for s in playing:
        ranks[s] = 1 + sum(1 for o in playing if result.ranks[o] < result.ranks[s])
    for s in resigned:
        ranks[s] = len(playing) + 1
    return Result(result.scores, tuple(ranks), result.end_reason)
