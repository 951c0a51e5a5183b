"""Pending decisions (frames) and phases of a Russian Railroads state (§4.2, §4.4).

**Pending decisions.** A placement happens at once and in full (§4.2), but may
need several choices. They are frames on ``stack``: small immutable named records
(:class:`typing.NamedTuple`, replaced with ``_replace`` or a new record, never
mutated, so clones may share them), all belonging to the seat whose turn it is;
the top frame decides the legal actions. Each record's ``NAME`` is its ``kind``
in views and canonical JSON; its fields are the JSON fields (:func:`frame_json`):

======================  =========================================================
record (``NAME``)        fields
======================  =========================================================
:class:`Seq`            ``effects``: seat, key (program key), next_op (JSON ``index``), optional
:class:`Track`          ``track``: seat, steps (left), colours (mask), up_to, done, optional
:class:`IndustrySteps`  ``industry``: seat, steps (left), optional, only (marker or -1)
:class:`LocoChoice`     ``loco_choice``: seat, mode (``LF_*``), loco_done, factory_done,
                        optional
:class:`LocoInHand`     ``loco_in_hand``: seat, number, from_line (-1 none), no_factory, new
:class:`Question`       ``question``: seat
:class:`CopySpace`      ``copy_space``: seat, optional
:class:`EndBonus`       ``end_bonus``: seat
:class:`Relocate`       ``relocate``: seat, space (index of the space left)
:class:`StartBonus`     ``start_bonus``: seat
======================  =========================================================

``optional`` frames come from actions nobody competes for (factory actions, own
engineers, "?" tokens) and may be stopped with ``done`` (§4.4); competed ones are
checked to be performable in full before the placement is accepted, and every
choice offered keeps them performable. Bonuses gained during an action ("?"
spaces) wait in ``gained``; with the option ``gained_actions_order`` = ``any``
(§4.4) they may be taken at any decision of the turn, with ``fixed`` only once the
action that gained them is complete. End bonus cards are chosen at the end of the
turn (§4.4).

Each record is a :class:`typing.NamedTuple` of its fields (``_SeqFields``...) subclassed
to add the class constant ``NAME`` (a NamedTuple body takes fields only). Adding a field
to a frame: add it to the fields record (with a default, at the end) and, if its JSON
form is not a plain int/bool/str, to ``_CODECS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

from services.kernel.engine import MalformedAction
from services.transsib.engine import data as D

LF_EITHER, LF_BOTH, LF_LOCO, LF_FACTORY = range(4)
LF_NAMES = ("loco_or_factory", "loco_and_factory", "loco", "factory")
PH_START, PH_ACTIONS, PH_RELOCATE, PH_OVER = range(4)
PHASE_NAMES = ("start_bonus", "actions", "relocation", "game_over")
PHASE_TITLES = {
    "start_bonus": "choosing starting bonuses",
    "actions": "placing workers",
    "relocation": "moving a worker",
    "game_over": "game over",
}
"""What a person reads for each phase name of the view (the board's status line)."""


class _SeqFields(NamedTuple):
    seat: int
    key: str
    next_op: int = 0
    optional: bool = False


class Seq(_SeqFields):
    """An effect program being carried out op by op (§4.2)."""

    __slots__ = ()
    NAME: ClassVar[str] = "effects"


class _TrackFields(NamedTuple):
    seat: int
    steps: int
    colours: int
    up_to: bool = False
    done: int = 0
    optional: bool = False


class Track(_TrackFields):
    """Track steps to make with the colours of ``colours`` (bit mask, §5.1)."""

    __slots__ = ()
    NAME: ClassVar[str] = "track"


class _IndustryStepsFields(NamedTuple):
    seat: int
    steps: int
    optional: bool = False
    only: int = -1


class IndustrySteps(_IndustryStepsFields):
    """Industry steps left (§8); ``only`` is the one marker that may move, or -1."""

    __slots__ = ()
    NAME: ClassVar[str] = "industry"


class _LocoChoiceFields(NamedTuple):
    seat: int
    mode: int
    loco_done: bool = False
    factory_done: bool = False
    optional: bool = False


class LocoChoice(_LocoChoiceFields):
    """A locomotive and/or factory to take (mode ``LF_*``, §5.2, §7)."""

    __slots__ = ()
    NAME: ClassVar[str] = "loco_choice"


class _LocoInHandFields(NamedTuple):
    seat: int
    number: int
    from_line: int = -1
    no_factory: bool = False
    new: bool = False


class LocoInHand(_LocoInHandFields):
    """A locomotive to place (new, or displaced from ``from_line``, §7.2, §7.3)."""

    __slots__ = ()
    NAME: ClassVar[str] = "loco_in_hand"


class _QuestionFields(NamedTuple):
    seat: int


class Question(_QuestionFields):
    """A "?" bonus to choose (§12)."""

    __slots__ = ()
    NAME: ClassVar[str] = "question"


class _CopySpaceFields(NamedTuple):
    seat: int
    optional: bool = False


class CopySpace(_CopySpaceFields):
    """An occupied action space to carry out again (§7.5, §10.4)."""

    __slots__ = ()
    NAME: ClassVar[str] = "copy_space"


class _EndBonusFields(NamedTuple):
    seat: int


class EndBonus(_EndBonusFields):
    """An end bonus card to choose from the pile (§15.1)."""

    __slots__ = ()
    NAME: ClassVar[str] = "end_bonus"


class _RelocateFields(NamedTuple):
    seat: int
    space: int


class Relocate(_RelocateFields):
    """The turn-order worker standing on ``space`` (an index) may move (§11.3)."""

    __slots__ = ()
    NAME: ClassVar[str] = "relocate"


class _StartBonusFields(NamedTuple):
    seat: int


class StartBonus(_StartBonusFields):
    """A starting bonus card to pick (§3.3)."""

    __slots__ = ()
    NAME: ClassVar[str] = "start_bonus"


Frame = (
    Seq
    | Track
    | IndustrySteps
    | LocoChoice
    | LocoInHand
    | Question
    | CopySpace
    | EndBonus
    | Relocate
    | StartBonus
)
FRAME_TYPES: tuple[type[Frame], ...] = (
    Seq,
    Track,
    IndustrySteps,
    LocoChoice,
    LocoInHand,
    Question,
    CopySpace,
    EndBonus,
    Relocate,
    StartBonus,
)
FRAME_NAMES = tuple(t.NAME for t in FRAME_TYPES)
FRAME_BY_NAME: dict[str, type[Frame]] = {t.NAME: t for t in FRAME_TYPES}


def _mask_names(mask: int, names: tuple[str, ...]) -> list[str]:
    return [name for i, name in enumerate(names) if mask >> i & 1]


def _names_mask(names: list[str]) -> int:
    out = 0
    for name in names:
        if name not in D.COLOUR_INDEX:
            raise MalformedAction("bad_view", f"unknown colour {name!r} in view")
        out |= 1 << D.COLOUR_INDEX[name]
    return out


_Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]
_INT: _Codec = (int, int)
_BOOL: _Codec = (bool, lambda v: bool(v))
_CODECS: dict[str, _Codec] = {
    "seat": _INT,
    "key": (str, str),
    "colours": (lambda m: _mask_names(m, D.COLOURS), _names_mask),
    "mode": (lambda m: LF_NAMES[m], LF_NAMES.index),
    "from_line": (
        lambda i: D.LINES[i] if i >= 0 else "",
        lambda name: D.LINE_INDEX[name] if name else -1,
    ),
    "space": (lambda i: D.SPACES[i].id, lambda sid: D.SPACE_INDEX[sid]),
}
for _name in ("optional", "up_to", "loco_done", "factory_done", "no_factory", "new"):
    _CODECS[_name] = _BOOL
JSON_KEY = {"next_op": "index"}
"""Fields whose JSON name differs (``index`` would shadow :meth:`tuple.index`)."""


def frame_json(frame: Frame) -> dict[str, Any]:
    """A pending-decision frame as a JSON object: ``kind`` (its ``NAME``) and its fields."""
    out: dict[str, Any] = {"kind": frame.NAME}
    for name, value in zip(frame._fields, frame, strict=True):
        out[JSON_KEY.get(name, name)] = _CODECS.get(name, _INT)[0](value)
    return out


def frame_from_json(obj: dict[str, Any]) -> Frame:
    """Inverse of :func:`frame_json`.

    Raises:
        MalformedAction: an unknown frame kind or field value.
    """
    try:
        cls = FRAME_BY_NAME[obj["kind"]]
        return cls(*(_CODECS.get(n, _INT)[1](obj[JSON_KEY.get(n, n)]) for n in cls._fields))
    except (KeyError, ValueError, TypeError) as exc:
        raise MalformedAction("bad_view", f"bad pending decision in view: {exc}") from None
