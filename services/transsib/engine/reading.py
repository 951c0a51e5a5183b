"""A small typed read-only API of a Russian Railroads position, for heuristics and tools.

:func:`read` returns a :class:`Reading`: immutable records built from the state, named in
the rulebook's terms, so a bot never reads the engine's internals (marker arrays indexed
``line * 5 + colour``, bit masks, pending-decision records). A :class:`Reading` is a
window on the state: each player is read when asked for (:meth:`Reading.player`), so a
heuristic pays only for what it looks at; nothing in the state changes (the players'
capacity caches aside, which only memoise).

Example::

    r = read(state)
    me = r.player(seat)
    me.score, me.round_points, me.lines[0].markers  # (black, grey, brown, natural, white)
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, NamedTuple

from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import scoring as S
from services.transsib.engine.frames import PH_OVER, Frame, IndustrySteps, Seq, Track

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

COLOURS = D.COLOURS
"""Rail colours, front to rear: black, grey, brown, natural, white (§5.1)."""
COLOUR_VALUES: tuple[int, ...] = tuple(D.VALUES)
"""Points per space of each colour (§13), in :data:`COLOURS` order."""
COLOUR_VALUES_REVALUED: tuple[int, ...] = tuple(D.VALUES_REVALUED)
"""The same after the revaluation (§6.2)."""
UNLOCK_SPACES: tuple[int, ...] = tuple(sorted(space for space, _ in D.UNLOCKS))
"""Trans-Siberian spaces whose black marker unlocks a colour (§6.3), ascending."""


class Line(NamedTuple):
    """One of a player's three lines (§6): Trans-Siberian, St Petersburg, Kiev."""

    name: str
    length: int
    markers: tuple[int, ...]
    """Space of each colour's marker, :data:`COLOURS` order (0 = not on the line)."""
    reach: int
    """Spaces the line's locomotives reach (§7.2)."""


class PlayerReading(NamedTuple):
    """What a heuristic may know of one player (public, and the seat's own cards)."""

    seat: int
    score: int
    round_points: int
    """Points the position would score at a round scoring now (§13)."""
    lines: tuple[Line, ...]
    revalued: bool
    colours_unlocked: int
    industry_room: int
    """Industry steps the markers can still take (§8)."""
    coins: int
    doublers: int
    engineers: int
    end_bonus_cards: int
    extra_workers: int
    factories: int
    free_workers: int
    """Own, turquoise and black workers not placed this round."""
    passed: bool
    end_bonus_due: int
    """End bonus cards to choose at the end of this turn."""
    bonuses_gained: int
    """"?" bonuses gained this turn and not taken yet."""


class Pending(NamedTuple):
    """A decision still to come in the current turn (:mod:`.frames` kinds)."""

    seat: int
    kind: str
    """``effects``, ``track``, ``industry``, ``loco_choice``, ``loco_in_hand``,
    ``question``, ``copy_space``, ``end_bonus``, ``relocate`` or ``start_bonus``."""
    left: int
    """Steps left (``track``, ``industry``), effects left (``effects``), else 0."""


class Reading:
    """A position of Russian Railroads, read-only. Players are read on demand
    (:meth:`player`), so a heuristic pays only for the seats it looks at."""

    __slots__ = ("_s",)

    def __init__(self, s: TranssibState) -> None:
        self._s = s

    @property
    def round(self) -> int:
        """The current round, 1-based."""
        return self._s.round

    @property
    def rounds(self) -> int:
        """Rounds in this game (§3)."""
        return self._s.rounds

    @property
    def over(self) -> bool:
        return self._s.phase == PH_OVER

    @property
    def num_players(self) -> int:
        return self._s.num_players

    @property
    def scores(self) -> tuple[int, ...]:
        """Every player's score now, by seat."""
        return tuple(p.score for p in self._s.players)

    @property
    def pending(self) -> tuple[Pending, ...]:
        """The stack of pending decisions, bottom first."""
        s = self._s
        return tuple(_pending(s, f) for f in s.stack)

    def player(self, seat: int) -> PlayerReading:
        """The :class:`PlayerReading` of ``seat``."""
        s = self._s
        p = s.players[seat]
        rules = s.rules
        lines = tuple(
            Line(name, D.LINE_LENGTH[i], tuple(p.pos[i * 5 : i * 5 + 5]), p.reach(i))
            for i, name in enumerate(D.LINES)
        )
        return PlayerReading(
            seat=seat,
            score=p.score,
            round_points=S.round_points(rules, p),
            lines=lines,
            revalued=p.revalued,
            colours_unlocked=bin(p.unlocked).count("1"),
            industry_room=IND.capacity(rules, p),
            coins=p.coins,
            doublers=p.doublers,
            engineers=len(p.engineers),
            end_bonus_cards=len(p.eb),
            extra_workers=p.extra,
            factories=sum(1 for f in p.factories if f),
            free_workers=p.own + p.temp + p.black,
            passed=s.passed[seat],
            end_bonus_due=s.eb_pending[seat],
            bonuses_gained=sum(1 for f in s.gained if f.seat == seat),
        )


def _pending(s: TranssibState, frame: Frame) -> Pending:
    if isinstance(frame, (Track, IndustrySteps)):
        left = frame.steps
    elif isinstance(frame, Seq):
        left = len(s.rules.programs[frame.key]) - frame.next_op
    else:
        left = 0
    return Pending(frame.seat, frame.NAME, left)


def read(s: TranssibState) -> Reading:
    """The :class:`Reading` of state ``s`` (a read-only window on it: read it before the
    state changes again)."""
    return Reading(s)


def board_geometry() -> dict[str, Any]:
    """The static board a drawing needs, as plain JSON values (a deep copy of parts of
    :data:`.data.RAW`, ``data/transsib.json``): ``{"lines": [...], "colours": [...],
    "spaces": {id: space}, "engineers": {id: tile}, "industry": [...],
    "industry_points": [...]}``. ``spaces`` holds the action spaces and, as
    ``{"id", "name", "area": "engineer"}``, the engineer spaces. A fresh copy per call."""
    raw = D.RAW
    spaces = {s["id"]: copy.deepcopy(s) for s in raw["action_spaces"]}
    for sid, name in raw["engineer_spaces"]["names"].items():
        spaces[sid] = {"id": sid, "name": name, "area": "engineer"}
    return {
        "lines": copy.deepcopy(raw["lines"]),
        "colours": list(raw["track_colours"]["order_front_to_back"]),
        "spaces": spaces,
        "engineers": {t["id"]: copy.deepcopy(t) for t in raw["engineers"]["tiles"]},
        "industry": copy.deepcopy(raw["industry_track"]["structure"]),
        "industry_points": copy.deepcopy(raw["industry_track"]["board_field_points"]),
    }
