"""Time controls and timeout policies of a table: the validated model shared by
the lobby (gRPC ``CreateTable``), the HTTP gateway (``POST /api/tables``), the
tournament service and the rules services (pure: pydantic only).

JSON shape (the ``time_control`` object of ``POST /api/tables``)::

    {"kind": "live", "base_s": 600, "increment_s": 10, "grace_s": 5}
    {"kind": "correspondence", "per_move_s": 86400, "max_bank_s": 259200}
    {"kind": "none"}

and ``"timeout_policy": "takeover" | "forfeit" | "reclaim"``.

* ``live``: a bank of ``base_s`` seconds per seat; each move adds
  ``increment_s`` (Fischer); each turn first spends up to ``grace_s`` seconds
  of grace before the bank runs (Board Game Arena's "per-turn" time).
* ``correspondence``: ``per_move_s`` seconds for each move; unused time is
  kept in the bank up to ``max_bank_s`` (so a seat's time for one move is at
  most ``max_bank_s``).
* ``none``: no clock.

Timeout policies (what happens when a seat's time runs out, or its player
leaves or resigns):

* ``takeover``: a hosted bot (``takeover_policy``, default ``greedy``) plays
  the seat for the rest of the game;
* ``forfeit``: the seat is ranked last; the others play on, or the game ends
  where the title's resignation rule says so (``services/match/resignation.py``);
* ``reclaim``: as ``takeover``, but the player may take the seat back within
  ``reclaim_moves`` versions of the game; casual tables only (not tournament tables).

Errors: :class:`InvalidClock` with a machine ``code`` (``bad_time_control``,
``bad_timeout_policy``, ``reclaim_not_casual``) and a reason naming the field.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

LIVE, CORRESPONDENCE, NONE = "live", "correspondence", "none"
TAKEOVER, FORFEIT, RECLAIM = "takeover", "forfeit", "reclaim"
TIMEOUT_POLICIES = (TAKEOVER, FORFEIT, RECLAIM)

MAX_BASE_S = 30 * 24 * 3600
"""Longest bank a live control may give (30 days, seconds): a named limit."""
MAX_PER_MOVE_S = 30 * 24 * 3600
"""Longest time per correspondence move (30 days, seconds)."""
MAX_BANK_S = 90 * 24 * 3600
"""Longest correspondence bank (90 days, seconds)."""
DEFAULT_TAKEOVER_POLICY = "greedy"
"""The hosted bot that plays a seat taken over, unless the table names another."""
DEFAULT_RECLAIM_MOVES = 20
"""How many versions after a takeover the player may reclaim the seat (``reclaim``)."""
DEFAULT_CLOCK_LOW_S = 60
"""A seat's clock is "low" (account event ``clockLow``) when this little remains, seconds."""


class InvalidClock(ValueError):
    """A time control or timeout policy that makes no sense.

    Attributes: ``code`` (machine reason), ``reason`` (for people), ``field``.
    """

    def __init__(self, code: str, reason: str, field: str = "") -> None:
        super().__init__(reason)
        self.code, self.reason, self.field = code, reason, field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class LiveControl(_Strict):
    """Base time plus a Fischer increment per move, with optional grace per turn (seconds)."""

    kind: Literal["live"] = LIVE
    base_s: int = Field(ge=0, le=MAX_BASE_S)
    increment_s: int = Field(default=0, ge=0, le=3600)
    grace_s: int = Field(default=0, ge=0, le=3600)

    @model_validator(mode="after")
    def _some_time(self) -> LiveControl:
        if self.base_s == 0 and self.increment_s == 0:
            raise ValueError("a zero base_s needs an increment_s: no bank to move with")
        return self

    @property
    def initial_bank_s(self) -> int:
        """A seat's bank at the start: ``base_s``, or one increment when the
        base is zero (so the first move has the time any later one has)."""
        return self.base_s or self.increment_s


class CorrespondenceControl(_Strict):
    """``per_move_s`` seconds per move, unused time banked up to ``max_bank_s``."""

    kind: Literal["correspondence"] = CORRESPONDENCE
    per_move_s: int = Field(gt=0, le=MAX_PER_MOVE_S)
    max_bank_s: int = Field(gt=0, le=MAX_BANK_S)

    @model_validator(mode="after")
    def _bank_holds_a_move(self) -> CorrespondenceControl:
        if self.max_bank_s < self.per_move_s:
            raise ValueError("max_bank_s must be at least per_move_s (one move's time)")
        return self


class NoControl(_Strict):
    """No clock."""

    kind: Literal["none"] = NONE


TimeControl = Annotated[
    LiveControl | CorrespondenceControl | NoControl, Field(discriminator="kind")
]


class ClockSettings(_Strict):
    """A table's time control and timeout policy (the whole clock configuration).

    Attributes:
        time_control: :data:`TimeControl` (``{"kind": "none"}`` by default).
        timeout_policy: ``takeover``, ``forfeit`` (default: today's resignation
            rule) or ``reclaim``.
        takeover_policy: the hosted bot policy that plays a seat taken over
            (``services/bots/policies.py``).
        reclaim_moves: the reclaim window, in versions of the game (1-1000).
        clock_low_s: remaining seconds at which ``clockLow`` is sent (0 = never).
        casual: not a tournament table (``reclaim`` needs it).
    """

    time_control: TimeControl = Field(default_factory=NoControl)
    timeout_policy: Literal["takeover", "forfeit", "reclaim"] = FORFEIT
    takeover_policy: str = Field(default=DEFAULT_TAKEOVER_POLICY, min_length=1, max_length=32)
    reclaim_moves: int = Field(default=DEFAULT_RECLAIM_MOVES, ge=1, le=1000)
    clock_low_s: int = Field(default=DEFAULT_CLOCK_LOW_S, ge=0, le=MAX_BANK_S)
    casual: bool = True

    @property
    def timed(self) -> bool:
        return self.time_control.kind != NONE

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def parse_clock_settings(data: dict[str, Any] | None) -> ClockSettings:
    """Validate a clock configuration (``ClockSettings`` fields as JSON; an
    absent ``time_control`` is ``none``).

    Raises:
        InvalidClock: ``bad_time_control`` (unknown kind, negative or missing
            values, a zero base with no increment, a bank below one move...),
            ``bad_timeout_policy``, ``reclaim_not_casual`` (``reclaim`` at a
            tournament table).
    """
    data = dict(data or {})
    if data.get("time_control") is None:
        data.pop("time_control", None)
    try:
        settings = ClockSettings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"] if not str(p).endswith("Control"))
        code = "bad_timeout_policy" if where.startswith("timeout_policy") else "bad_time_control"
        if where.startswith(("takeover_policy", "reclaim_moves", "clock_low_s", "casual")):
            code = "bad_clock_settings"
        msg = err["msg"].removeprefix("Value error, ")
        raise InvalidClock(code, f"{where or 'time_control'}: {msg}", where) from None
    if settings.timeout_policy == RECLAIM and not settings.casual:
        raise InvalidClock(
            "reclaim_not_casual",
            "timeout_policy reclaim is for casual tables only (not tournament tables)",
            "timeout_policy",
        )
    return settings


def parse_clock_json(text: str) -> ClockSettings:
    """:func:`parse_clock_settings` of JSON text (``""`` = no clock).
    Raises InvalidClock (``bad_time_control`` for text that is not a JSON object)."""
    if not text:
        return ClockSettings()
    try:
        data = json.loads(text)
    except ValueError:
        raise InvalidClock("bad_time_control", "the clock settings are not JSON") from None
    if not isinstance(data, dict):
        raise InvalidClock("bad_time_control", "the clock settings must be a JSON object")
    return parse_clock_settings(data)
