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

from services.kernel.engine import JSON, Action, Event, IllegalAction, Result, Seat, State
from services.match.clock import ClockState
from services.match.controls import FORFEIT, RECLAIM, ClockSettings

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
    from ``ResignationSettings.resignation``) if set, else :data:`RESIGNATION` (``end`` for
    an unlisted title). Raises ValueError for an unknown mode."""
    default = RESIGNATION.get(title, ResignationPolicy(END))
    mode = (overrides or {}).get(title)
    return dataclasses.replace(default, mode=mode) if mode else default


@dataclasses.dataclass(frozen=True, slots=True)
class Resign(Action):
    """A seat gives up (the rules service's ``Resign``; never sent as a move)."""

    TYPE: ClassVar[str] = RESIGN_TYPE


TIMEOUT_TYPE, RECLAIM_TYPE, PAUSE_TYPE, RESUME_TYPE = "timeout", "reclaim", "pause", "resume"
SEAT_ENTRY_TYPES = frozenset({RESIGN_TYPE, TIMEOUT_TYPE, RECLAIM_TYPE, PAUSE_TYPE, RESUME_TYPE})
"""Log entries that are never engine actions (this module applies them)."""
NO_SEAT = -1
"""The seat of a log entry of the whole table (pause, resume)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Timeout(Action):
    """A seat's time ran out (the clock keeper's ``Timeout``)."""

    TYPE: ClassVar[str] = TIMEOUT_TYPE


@dataclasses.dataclass(frozen=True, slots=True)
class Reclaim(Action):
    """The seat's player takes it back from the takeover bot (``reclaim`` tables)."""

    TYPE: ClassVar[str] = RECLAIM_TYPE


@dataclasses.dataclass(frozen=True, slots=True)
class Pause(Action):
    """The organiser stops every clock of the table (entry of seat :data:`NO_SEAT`)."""

    TYPE: ClassVar[str] = PAUSE_TYPE


@dataclasses.dataclass(frozen=True, slots=True)
class Resume(Action):
    """The organiser starts the clocks again (entry of seat :data:`NO_SEAT`)."""

    TYPE: ClassVar[str] = RESUME_TYPE


_SEAT_ACTIONS = {
    RESIGN_TYPE: Resign,
    TIMEOUT_TYPE: Timeout,
    RECLAIM_TYPE: Reclaim,
    PAUSE_TYPE: Pause,
    RESUME_TYPE: Resume,
}


def is_resignation(action_json: Mapping[str, Any]) -> bool:
    """Whether a log entry's action (parsed JSON) is a resignation."""
    return action_json.get("type") == RESIGN_TYPE


def is_seat_entry(action_json: Mapping[str, Any]) -> bool:
    """Whether a log entry's action is one of :data:`SEAT_ENTRY_TYPES` (not the engine's)."""
    return action_json.get("type") in SEAT_ENTRY_TYPES and len(action_json) == 1


def seat_action(action_json: Mapping[str, Any]) -> Action:
    """The :class:`Resign`, :class:`Timeout`, ... of such an entry."""
    return _SEAT_ACTIONS[action_json["type"]]()


@dataclasses.dataclass(frozen=True, slots=True)
class Takeover:
    """A seat played by a hosted bot from ``from_version`` (the version the
    takeover's entry made) until ``until_version`` (``None``: to the end; a
    reclaim's version otherwise). ``reason``: ``timeout`` or ``resigned``."""

    seat: Seat
    from_version: int
    policy: str
    reason: str
    until_version: int | None = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "seat": self.seat,
            "from_version": self.from_version,
            "until_version": self.until_version,
            "policy": self.policy,
            "reason": self.reason,
        }


class ResignableState:
    """An engine :class:`State` plus what happens to its seats outside the
    rules: resignations, the clocks (:mod:`services.match.clock`), timeouts,
    takeovers, reclaims and pauses.

    It offers the State interface the rules service uses (``version``,
    ``num_players``, ``active_seats``, ``legal_actions``, ``apply``,
    ``is_terminal``, ``result``, ``view``, ``clone``); other attributes are the
    engine state's. ``version`` counts the non-engine entries too, so it is
    always the game log's version.

    Args:
        inner: the engine's state.
        policy: the title's :class:`ResignationPolicy`.
        clock: the table's :class:`services.match.controls.ClockSettings`
            (None: no clock, timeout policy ``forfeit``).
        start_ms: when the game's clocks start (its creation), ms since the epoch.
    """

    __slots__ = (
        "inner",
        "policy",
        "settings",
        "clocks",
        "resigned",
        "timed_out",
        "takeovers",
        "moves",
        "bot_moves",
        "_extra",
        "_ended",
        "_paused",
        "at_ms",
    )

    def __init__(
        self, inner: State, policy: ResignationPolicy, clock=None, start_ms: int = 0
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.settings = clock or ClockSettings()
        self.clocks = (
            ClockState.start(
                self.settings.time_control, inner.num_players, inner.active_seats(), start_ms
            )
            if self.settings.timed
            else None
        )
        self.resigned: tuple[Seat, ...] = ()
        self.timed_out: tuple[Seat, ...] = ()  # seats whose clock ran out (any policy)
        self.takeovers: tuple[Takeover, ...] = ()
        n = inner.num_players
        self.moves = (0,) * n
        self.bot_moves = (0,) * n
        self._extra = 0  # non-engine entries in the log
        self._ended = False
        self._paused = False
        self.at_ms = start_ms  # time of the last entry

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

    @property
    def paused(self) -> bool:
        return self._paused

    def is_terminal(self) -> bool:
        return self._ended or self.inner.is_terminal()

    def active_seats(self) -> tuple[Seat, ...]:
        """The engine's active seats; none after the end or while paused."""
        return () if self._ended or self._paused else self.inner.active_seats()

    def legal_actions(self, seat: Seat) -> list[Action]:
        return [] if self._ended or self._paused else self.inner.legal_actions(seat)

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        return self.inner.view(seat)

    def to_json(self) -> dict[str, JSON]:
        return {**self.inner.to_json(), "resigned": list(self.resigned), "ended": self._ended}

    def bot_seats(self) -> dict[Seat, str]:
        """Seat -> hosted policy of the seats a bot plays now because of a
        timeout or a resignation (the table's own bot seats aside)."""
        return {t.seat: t.policy for t in self.takeovers if t.until_version is None}

    def taken_over(self, seat: Seat) -> bool:
        return seat in self.bot_seats()

    # ------------------------------------------------------------------ applying

    def apply(self, seat: Seat, action: Action, at_ms: int | None = None) -> list[Event]:
        """Apply a move (the engine's rules) or a non-engine entry
        (:class:`Resign`, :class:`Timeout`, :class:`Reclaim`, :class:`Pause`,
        :class:`Resume`), appended at ``at_ms`` (ms since the epoch; None = the
        last entry's time, for untimed callers).

        Raises:
            IllegalAction: ``game_over`` after the end; ``table_paused`` for a
                move or a timeout while paused; ``seat_resigned`` for a second
                resignation; ``not_timed_out`` (the seat's clock has time
                left, or does not run); ``not_taken_over``,
                ``reclaim_not_allowed``, ``reclaim_window_closed``;
                ``already_paused``, ``not_paused``, ``no_clock``; the engine's refusals.
        """
        at = self.at_ms if at_ms is None else at_ms
        kind = type(action).TYPE if type(action) in _SEAT_ACTIONS.values() else None
        if self._ended or (kind != RESIGN_TYPE and kind is not None and self.inner.is_terminal()):
            raise IllegalAction("game_over", "the game is over; no more actions are accepted")
        if kind is None:
            if self._paused:
                raise IllegalAction("table_paused", "the table is paused; no moves until resumed")
            events = self.inner.apply(seat, action)
            self.moves = _bump(self.moves, seat)
            if self.taken_over(seat) or seat in self.resigned:
                self.bot_moves = _bump(self.bot_moves, seat)
            self._clock_after(seat, True, at)
            return events
        handler = {
            RESIGN_TYPE: self._resign,
            TIMEOUT_TYPE: self._timeout,
            RECLAIM_TYPE: self._reclaim,
            PAUSE_TYPE: self._pause,
            RESUME_TYPE: self._resume,
        }[kind]
        events = handler(seat, at)
        self.at_ms = at
        return events

    def _clock_after(self, seat: Seat, moved: bool, at: int) -> None:
        self.at_ms = at
        if self.clocks is not None:
            # the engine's active seats: a paused clock keeps who runs on resume
            active = () if self.is_terminal() else self.inner.active_seats()
            self.clocks = self.clocks.after_entry(seat, moved, active, at)

    def _resign(self, seat: Seat, at: int) -> list[Event]:
        if self.inner.is_terminal():
            raise IllegalAction("game_over", "the game is over; no more actions are accepted")
        if seat in self.resigned:
            raise IllegalAction("seat_resigned", f"seat {seat} has already resigned")
        self._extra += 1
        self.resigned = (*self.resigned, seat)
        ends = self.settings.timeout_policy == FORFEIT and self.policy.mode == END
        if ends:
            self._ended = True
        elif not self.taken_over(seat):
            self._take_over(seat, "resigned")
        if self.clocks is not None:
            self.clocks = self.clocks.flag(seat, at)
        self._clock_after(seat, False, at)
        return [{"type": "resigned", "seat": seat, "game_ends": self._ended}]

    def _takeover_policy(self) -> str:
        if self.settings.timeout_policy == FORFEIT:
            return self.policy.takeover_policy
        return self.settings.takeover_policy

    def _take_over(self, seat: Seat, reason: str) -> None:
        self.takeovers = (
            *self.takeovers,
            Takeover(seat, self.version, self._takeover_policy(), reason),
        )

    def _timeout(self, seat: Seat, at: int) -> list[Event]:
        if self._paused:
            raise IllegalAction("table_paused", "the table is paused; its clocks do not run")
        if self.clocks is None:
            raise IllegalAction("no_clock", "this table has no clock")
        if not self.clocks.expired(seat, at):
            left = self.clocks.remaining_ms(seat, at)
            raise IllegalAction(
                "not_timed_out",
                f"seat {seat}'s clock "
                + (f"has {left} ms left" if self.clocks.ticking(seat) else "is not running"),
            )
        self._extra += 1
        self.clocks = self.clocks.flag(seat, at)
        self.timed_out = (*self.timed_out, seat)
        forfeit = self.settings.timeout_policy == FORFEIT
        if forfeit:
            self.resigned = (*self.resigned, seat)
            if self.policy.mode == END:
                self._ended = True
        if not self._ended:
            self._take_over(seat, "timeout")
        self._clock_after(seat, False, at)
        return [
            {
                "type": "timed_out",
                "seat": seat,
                "policy": self.settings.timeout_policy,
                "game_ends": self._ended,
            }
        ]

    def _reclaim(self, seat: Seat, at: int) -> list[Event]:
        if self.settings.timeout_policy != RECLAIM:
            raise IllegalAction(
                "reclaim_not_allowed", "this table's timeout policy does not allow reclaims"
            )
        current = next(
            (t for t in self.takeovers if t.seat == seat and t.until_version is None), None
        )
        if current is None or current.reason != "timeout":
            raise IllegalAction("not_taken_over", f"seat {seat} is not played by a bot")
        window = self.settings.reclaim_moves
        if self.version - current.from_version > window:
            raise IllegalAction(
                "reclaim_window_closed",
                f"seat {seat} was taken over at version {current.from_version}; it may be "
                f"reclaimed within {window} versions (the game is at {self.version})",
            )
        self._extra += 1
        self.takeovers = tuple(
            dataclasses.replace(t, until_version=self.version) if t is current else t
            for t in self.takeovers
        )
        if self.clocks is not None:
            self.clocks = self.clocks.unflag(seat, seat in self.active_seats(), at)
        self._clock_after(seat, False, at)
        return [{"type": "reclaimed", "seat": seat}]

    def _pause(self, seat: Seat, at: int) -> list[Event]:
        if self.clocks is None:
            raise IllegalAction("no_clock", "this table has no clock to pause")
        if self._paused:
            raise IllegalAction("already_paused", "the table is already paused")
        self._extra += 1
        self.clocks = self.clocks.pause(at)
        self._paused = True
        self._clock_after(seat, False, at)
        return [{"type": "paused"}]

    def _resume(self, seat: Seat, at: int) -> list[Event]:
        if not self._paused:
            raise IllegalAction("not_paused", "the table is not paused")
        self._extra += 1
        self._paused = False
        self.clocks = self.clocks.resume(at)
        self._clock_after(seat, False, at)
        return [{"type": "resumed"}]

    # ------------------------------------------------------------------ results

    def result(self) -> Result:
        """The result with every resigned (or forfeited) seat ranked last
        (module docstring).

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

    def seat_weights(self) -> list[float]:
        """Per seat, the share of its moves its own player made (1 - the share a
        takeover bot played; 1.0 for a seat that never moved): the ratings'
        seat weights (``services/tournaments/ratings.py``)."""
        return [
            1.0 if total == 0 else round(1.0 - bot / total, 4)
            for total, bot in zip(self.moves, self.bot_moves, strict=True)
        ]

    def result_json(self) -> dict[str, JSON]:
        """:meth:`result` as JSON, plus ``forfeited_seats`` (resigned or
        forfeited on time, ranked last) and ``timed_out_seats`` (whose clock ran out,
        whatever the timeout policy) when there are any, and ``takeovers`` (each
        :class:`Takeover`) and ``seat_weights`` when a seat was taken over."""
        out = self.result().to_json()
        if self.resigned:
            out["forfeited_seats"] = sorted(self.resigned)
        if self.timed_out:
            out["timed_out_seats"] = sorted(self.timed_out)
        if self.takeovers:
            out["takeovers"] = [t.to_json() for t in self.takeovers]
            out["seat_weights"] = self.seat_weights()
        return out

    def clone(self) -> ResignableState:
        other = object.__new__(ResignableState)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.inner = self.inner.clone()
        return other


def _bump(counts: tuple[int, ...], seat: Seat) -> tuple[int, ...]:
    return tuple(c + 1 if i == seat else c for i, c in enumerate(counts))


def takeover_on_resign(policy: ResignationPolicy, clock: ClockSettings | None) -> str:
    """The hosted policy that plays a seat after its resignation, or ``""`` when
    the resignation ends the game: with a ``takeover`` or ``reclaim`` timeout
    policy the table's ``takeover_policy`` (the game goes on whatever the
    title); with ``forfeit`` (or no clock) the title's resignation policy."""
    settings = clock or ClockSettings()
    if settings.timeout_policy != FORFEIT:
        return settings.takeover_policy
    return policy.takeover_policy if policy.mode == CONTINUE else ""


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


# ---------------------------------------------------------------------- replaying a log


def policy_of_meta(title: str, meta: Mapping[str, Any]) -> ResignationPolicy:
    """The resignation policy a game was played under: its creation record's
    ``resignation`` (``{"mode", "takeover_policy"}``, written since the clocks),
    else the title's default (:func:`resignation_policy`)."""
    given = meta.get("resignation")
    if isinstance(given, Mapping):
        return ResignationPolicy(
            mode=str(given.get("mode", END)),
            takeover_policy=str(given.get("takeover_policy", "random")),
        )
    return resignation_policy(title)


def replay_state(game, meta: Mapping[str, Any], policy: ResignationPolicy) -> ResignableState:
    """A new :class:`ResignableState` of ``game`` (a :class:`services.kernel.engine.Game`)
    for the creation record ``meta`` (``num_players``, ``seed``, ``options`` parsed or
    as JSON; ``clock`` and ``clock_start_ms`` for tables with clock settings), to
    which the game's log entries are applied (:func:`entry_action`, with each
    entry's ``at_ms``). Raises InvalidOptions."""
    from services.match.controls import parse_clock_settings

    clock = parse_clock_settings(dict(meta["clock"])) if meta.get("clock") else None
    return ResignableState(
        game.new_state(int(meta["num_players"]), int(meta["seed"]), meta.get("options") or None),
        policy,
        clock,
        int(meta.get("clock_start_ms", 0)),
    )


def entry_action(game, action_json: Mapping[str, Any]) -> Action:
    """A stored entry's action: :class:`Resign`, :class:`Timeout`,
    :class:`Reclaim`, :class:`Pause`, :class:`Resume`, or the title's action
    (``game.parse_action``, which raises ValueError for what it cannot parse)."""
    if is_seat_entry(action_json):
        return seat_action(action_json)
    return game.parse_action(dict(action_json))


def engine_state(state: State | ResignableState) -> State:
    """The engine's own state behind ``state``: ``state.inner`` for a
    :class:`ResignableState`, else ``state`` itself. The engines never see the wrapper:
    whatever calls an engine's ``Game`` method with a state (``describe``) unwraps first."""
    return state.inner if isinstance(state, ResignableState) else state


def entry_label(game, before: State | ResignableState, seat: Seat, action: Action) -> str:
    """``action`` in words (``Game.describe``) on ``before``, the state it is applied
    to (a :class:`ResignableState` is unwrapped, :func:`engine_state`); a resignation,
    timeout, reclaim, pause or resume in the platform's words."""
    if isinstance(action, Resign):
        return f"Seat {seat} resigns"
    if isinstance(action, Timeout):
        return f"Seat {seat}'s time runs out"
    if isinstance(action, Reclaim):
        return f"Seat {seat} is reclaimed by its player"
    if isinstance(action, Pause):
        return "The clocks are paused"
    if isinstance(action, Resume):
        return "The clocks resume"
    return game.describe(engine_state(before), action)
