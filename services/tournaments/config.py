"""An organiser's tournament settings, checked (``docs/tournaments.md``, "Settings").

:class:`TournamentConfig` is what ``CreateTournament`` stores (as JSON in
``tournaments.settings_json``). :func:`check_config` refuses bad settings with a
:class:`~services.tournaments.errors.TournamentError` naming the rule; nothing is stored
then. :func:`order_standings` re-orders the cores' standings by the organiser's tiebreak
order.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from services.kernel.engine import InvalidOptions
from services.match.controls import ClockSettings, InvalidClock, parse_clock_settings
from services.rules.titles import TITLE_MODULES, get_game
from services.tournaments.errors import TournamentError
from services.tournaments.pairing import MIN_SEATS, PairingConfig
from services.tournaments.pairing_cost import MAX_SEATS
from services.tournaments.scoring import ScoringRules, Standing
from services.tournaments.seeding import SEEDING_MODES

SWISS, ROUND_ROBIN = "swiss", "round_robin"
FORMATS = (SWISS, ROUND_ROBIN)
TIEBREAKS = ("opponents_points", "normalised_sum", "wins")
"""The tiebreaks after points, in their default order (the issue's)."""
MAX_ROUNDS = 50
NAME_MAX = 80
DEFAULT_TABLE_TIMEOUT_S = 3 * 3600
"""A table not finished this long after its start is void (the stall rule), unless the
organiser sets another limit."""


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """The settings of one tournament (``tournaments.proto``, ``TournamentSettings``).

    ``placement_points`` maps a table size to its points (first place first; sizes not
    given use the defaults 6..0). Times are Unix milliseconds (0 = unset).
    ``time_control`` is the clocks' JSON shape (``services/match/controls.py``: ``{"kind":
    "live", "base_s": 600, "increment_s": 10}``; ``{}`` = no clock) given to every round
    table with ``timeout_policy`` (``forfeit`` or ``takeover``; ``reclaim`` is for casual
    tables only) and ``takeover_policy`` (the hosted bot of a seat taken over; "" = greedy).
    ``review_games``: every round table that finishes with a result gets a game review
    requested once (issue 31; ``docs/bots.md``, "Game review").
    """

    name: str
    title: str
    options_json: str = ""
    table_size: int = 4
    min_table_size: int = 0
    format: str = SWISS
    rounds: int = 3
    scoring_method: str = "placement"
    placement_points: dict[int, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    scale: float = 6.0
    bye_points: float = 3.0
    tiebreaks: tuple[str, ...] = TIEBREAKS
    registration_opens_ms: int = 0
    registration_closes_ms: int = 0
    rated: bool = True
    bots_allowed: bool = True
    seeding: str = "balanced"
    time_control: dict[str, Any] = dataclasses.field(default_factory=dict)
    timeout_policy: str = "forfeit"
    takeover_policy: str = ""
    table_timeout_s: int = DEFAULT_TABLE_TIMEOUT_S
    auto_advance: bool = True
    review_games: bool = False

    def clock(self) -> ClockSettings:
        """The round tables' clock settings (validated; raises
        :class:`~services.match.controls.InvalidClock` for settings that make no sense)."""
        data: dict[str, Any] = {"timeout_policy": self.timeout_policy, "casual": False}
        if self.time_control:
            data["time_control"] = self.time_control
        if self.takeover_policy:
            data["takeover_policy"] = self.takeover_policy
        return parse_clock_settings(data)

    @property
    def smallest(self) -> int:
        return self.min_table_size or self.table_size

    def pairing(self) -> PairingConfig:
        return PairingConfig(table_size=self.table_size, min_table_size=self.smallest)

    def scoring(self) -> ScoringRules:
        points = dict(ScoringRules().placement_points)
        points.update(self.placement_points)
        return ScoringRules(
            method=self.scoring_method,  # type: ignore[arg-type]
            placement_points=points,
            scale=self.scale,
            bye_points=self.bye_points,
        )

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["placement_points"] = {str(k): list(v) for k, v in self.placement_points.items()}
        data["tiebreaks"] = list(self.tiebreaks)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TournamentConfig:
        data = json.loads(text)
        data["placement_points"] = {
            int(k): tuple(v) for k, v in data.get("placement_points", {}).items()
        }
        data["tiebreaks"] = tuple(data.get("tiebreaks", TIEBREAKS))
        if not isinstance(data.get("time_control", {}), dict):
            data["time_control"] = {}  # the placeholder text of earlier versions: no clock
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _bad(reason: str, message: str, **metadata: object) -> TournamentError:
    return TournamentError(reason, message, **metadata)


def check_config(c: TournamentConfig) -> TournamentConfig:
    """``c`` if every setting is allowed, else raises :class:`TournamentError`:
    ``bad_name``, ``unknown_title``, ``table_size_out_of_range`` (outside 3-6 or the
    title's player range, or a smaller size above the size), ``bad_options``,
    ``bad_format``, ``bad_rounds``, ``bad_scoring_method``, ``bad_placement_points``,
    ``bad_bye_points``, ``bad_tiebreaks``, ``bad_seeding_mode``,
    ``bad_registration_window``, ``bad_time_control``, ``bad_timeout_policy`` (``reclaim``
    too: ``reclaim_not_casual``), ``unknown_policy`` (the takeover bot), ``bad_table_timeout``."""
    if not c.name.strip() or len(c.name) > NAME_MAX or not c.name.isprintable():
        raise _bad("bad_name", f"a tournament's name is 1-{NAME_MAX} printable characters")
    if c.title not in TITLE_MODULES:
        raise _bad("unknown_title", f"unknown title; known: {', '.join(sorted(TITLE_MODULES))}")
    game = get_game(c.title)
    low = max(MIN_SEATS, game.min_players)
    high = min(MAX_SEATS, game.max_players)
    for what, size in (("table size", c.table_size), ("smaller table size", c.smallest)):
        if not low <= size <= high:
            raise _bad(
                "table_size_out_of_range",
                f"the {what} must be {low}-{high} for {c.title}, not {size}",
                table_size=size,
                min=low,
                max=high,
            )
    if c.smallest > c.table_size:
        raise _bad(
            "table_size_out_of_range",
            f"the smaller tables allowed ({c.smallest}) cannot exceed the table size"
            f" ({c.table_size})",
            min_table_size=c.smallest,
            table_size=c.table_size,
        )
    try:
        game.parse_options_json(c.options_json)
    except InvalidOptions as exc:
        raise _bad("bad_options", str(exc)) from None
    if c.format not in FORMATS:
        raise _bad("bad_format", f"format must be swiss or round_robin, not {c.format[:20]!r}")
    if not 1 <= c.rounds <= MAX_ROUNDS:
        raise _bad("bad_rounds", f"rounds must be 1-{MAX_ROUNDS}, not {c.rounds}", max=MAX_ROUNDS)
    for size, pts in c.placement_points.items():
        if not MIN_SEATS <= size <= MAX_SEATS:
            raise _bad(
                "bad_placement_points", f"placement points for a table of {size}?", table_size=size
            )
        if any(p < 0 for p in pts) or list(pts) != sorted(pts, reverse=True):
            raise _bad(
                "bad_placement_points",
                f"placement points for a table of {size} must be 0 or more, best place first",
                table_size=size,
            )
    c.scoring()  # bad_scoring_method, bad_placement_points (counts)
    if c.bye_points < 0 or c.scale <= 0:
        raise _bad("bad_bye_points", "bye points must be 0 or more and the scale above 0")
    if sorted(c.tiebreaks) != sorted(TIEBREAKS):
        raise _bad(
            "bad_tiebreaks",
            f"tiebreaks are an order of {', '.join(TIEBREAKS)} (each once)",
        )
    if c.seeding not in SEEDING_MODES:
        raise _bad("bad_seeding_mode", f"seeding must be one of {', '.join(SEEDING_MODES)}")
    if (
        c.registration_opens_ms < 0
        or c.registration_closes_ms < 0
        or (c.registration_closes_ms and c.registration_closes_ms <= c.registration_opens_ms)
    ):
        raise _bad(
            "bad_registration_window", "registration must close after it opens (Unix ms, 0 = unset)"
        )
    try:
        clock = c.clock()
    except InvalidClock as exc:
        raise _bad(exc.code, exc.reason, field=exc.field) from None
    from services.bots.policies import POLICY_NAMES, policy_available

    if clock.takeover_policy not in POLICY_NAMES or not policy_available(
        clock.takeover_policy, c.title
    ):
        raise _bad(
            "unknown_policy",
            f"takeover bot policy {clock.takeover_policy[:32]!r} cannot play {c.title};"
            f" known: {', '.join(POLICY_NAMES)}",
        )
    if c.table_timeout_s <= 0:
        raise _bad("bad_table_timeout", "table_timeout_s must be above 0 (0 in a request = 3 h)")
    return c


def order_standings(rows: Sequence[Standing], tiebreaks: Sequence[str]) -> list[Standing]:
    """``rows`` ordered by points, then ``tiebreaks`` in the organiser's order, then name;
    rows equal on points and every tiebreak share a rank."""

    def key(s: Standing) -> tuple[float, ...]:
        return (round(s.points, 9), *(round(float(getattr(s, t)), 9) for t in tiebreaks))

    ordered = sorted(rows, key=lambda s: (tuple(-x for x in key(s)), s.player))
    out: list[Standing] = []
    for i, row in enumerate(ordered):
        same = out and key(out[-1]) == key(row)
        out.append(dataclasses.replace(row, rank=out[-1].rank if same else i + 1))
    return out
