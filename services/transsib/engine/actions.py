"""The typed actions of Russian Railroads.

A turn (§4.2) is one ``place`` (or ``pass``); a placement that needs further
choices pushes pending decisions, each answered by one of the smaller actions
below by the same seat (which lines get the track steps, where a locomotive
goes, which factory, which "?" bonus...). Every legal action is exactly one
move, so ``legal_actions`` stays small.

=================  ===========================================  ===========
TYPE               fields                                       spec
=================  ===========================================  ===========
``start_bonus``    card: ``coin``/``black_track``/...            §3.3
``place``          space: space id or own engineer id;           §4.2, §4.3
                   coins: coins standing in for workers
``pass``           (none)                                        §4.1, §11.4
``track``          line, colour: one rail-marker step            §5.1
``loco``           line, slot: put the locomotive in hand there  §7.2, §7.3
``loco_to_factory`` (none): return the displaced locomotive       §7.3
``factory``        number, gap: build that factory in that gap   §7.4
``industry``       marker: 0 or 1, which marker takes the step   §8.3
``question_token`` token id                                      §12.2
``question_card``  card id                                       §12.4
``copy_space``     space id: carry out that occupied space       §7.5, §10.4
``relocate``       space: move the turn-order worker there       §11.3
``end_bonus``      index: position in the (secret) pile         §15.1
``done``           (none): stop an optional or "up to" action    §4.4
=================  ===========================================  ===========

Action objects are interned: :func:`place`, :func:`track` etc. return the
same object for the same arguments, so the engine recognises its own legal
actions by identity (fast path) and parsed ones by equality.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from services.kernel.engine import Action, ActionCodec
from services.transsib.engine import data as D


@dataclasses.dataclass(frozen=True, slots=True)
class StartBonus(Action):
    """Pick a starting bonus card and carry it out (§3.3)."""

    TYPE: ClassVar[str] = "start_bonus"
    card: str


@dataclasses.dataclass(frozen=True, slots=True)
class Place(Action):
    """Place workers on an action space (§4.2), or on one's own hired engineer (§10.2).

    ``coins`` is the number of coins standing in for workers (§4.3); coins a space
    requires on top (T-ANY, E-HIRE, coin-cost engineers) are paid automatically.
    """

    TYPE: ClassVar[str] = "place"
    space: str
    coins: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Pass(Action):
    """Pass for the rest of the round and score the pass points (§4.1, §11.4)."""

    TYPE: ClassVar[str] = "pass"


@dataclasses.dataclass(frozen=True, slots=True)
class Track(Action):
    """One rail-marker step of ``colour`` on ``line`` (§5.1)."""

    TYPE: ClassVar[str] = "track"
    line: str
    colour: str


@dataclasses.dataclass(frozen=True, slots=True)
class Loco(Action):
    """Put the locomotive in hand on ``line``'s slot ``slot`` (0, or 0/1 on the
    Trans-Siberian), displacing a lower one if the slot is taken (§7.2, §7.3).
    When the pending choice is a locomotive *or* a factory, this takes the lowest
    locomotive of the supply."""

    TYPE: ClassVar[str] = "loco"
    line: str
    slot: int


@dataclasses.dataclass(frozen=True, slots=True)
class LocoToFactory(Action):
    """Flip the displaced locomotive to its factory side and return it to the supply
    (§7.3; only when every locomotive slot is full)."""

    TYPE: ClassVar[str] = "loco_to_factory"


@dataclasses.dataclass(frozen=True, slots=True)
class Factory(Action):
    """Build the factory ``number`` (the lowest locomotive of the supply, or a
    returned factory) in factory gap ``gap`` (0..4): the leftmost empty gap, or any
    gap when all five are full (replacing that factory) (§7.1, §7.4)."""

    TYPE: ClassVar[str] = "factory"
    number: int
    gap: int


@dataclasses.dataclass(frozen=True, slots=True)
class Industry(Action):
    """Which industry marker (0 first, 1 second) takes the next step (§8.3)."""

    TYPE: ClassVar[str] = "industry"
    marker: int


@dataclasses.dataclass(frozen=True, slots=True)
class QuestionToken(Action):
    """Use one of your "?" tokens for the pending "?" bonus (§12.1, §12.2)."""

    TYPE: ClassVar[str] = "question_token"
    token: str


@dataclasses.dataclass(frozen=True, slots=True)
class QuestionCard(Action):
    """Take a shared "?" card for the pending "?" bonus (§12.1, §12.4)."""

    TYPE: ClassVar[str] = "question_card"
    card: str


@dataclasses.dataclass(frozen=True, slots=True)
class CopySpace(Action):
    """Carry out the action of an occupied board space (engineer/factory "reuse a
    space", §7.5, §10.4)."""

    TYPE: ClassVar[str] = "copy_space"
    space: str


@dataclasses.dataclass(frozen=True, slots=True)
class Relocate(Action):
    """Move your turn-order worker onto an empty 1-worker space, or your own
    engineer, and carry it out (§11.3)."""

    TYPE: ClassVar[str] = "relocate"
    space: str


@dataclasses.dataclass(frozen=True, slots=True)
class EndBonus(Action):
    """Take the end bonus card at position ``index`` of the face-down pile
    (§15.1). The pile is shown to the choosing seat only and reshuffled after."""

    TYPE: ClassVar[str] = "end_bonus"
    index: int


@dataclasses.dataclass(frozen=True, slots=True)
class Done(Action):
    """Stop the pending optional (or "up to") action here (§4.4)."""

    TYPE: ClassVar[str] = "done"


ACTION_CLASSES: tuple[type[Action], ...] = (
    StartBonus,
    Place,
    Pass,
    Track,
    Loco,
    LocoToFactory,
    Factory,
    Industry,
    QuestionToken,
    QuestionCard,
    CopySpace,
    Relocate,
    EndBonus,
    Done,
)
CODEC = ActionCodec(ACTION_CLASSES)

# --------------------------------------------------------------------------- interned instances

PASS = Pass()
DONE = Done()
LOCO_TO_FACTORY = LocoToFactory()

PLACE: dict[tuple[str, int], Place] = {}
for _sid in [s.id for s in D.SPACES] + [e.id for e in D.ENGINEERS]:
    for _c in range(4):
        PLACE[(_sid, _c)] = Place(_sid, _c)

TRACK: tuple[tuple[Track, ...], ...] = tuple(
    tuple(Track(line, colour) for colour in D.COLOURS) for line in D.LINES
)
"""``TRACK[line][colour]`` by indices."""

LOCO_SLOT_ACTION: tuple[Loco, ...] = tuple(
    Loco(D.LINES[line], D.LINE_SLOTS[line].index(slot))
    for slot, line in enumerate(D.LOCO_SLOT_LINE)
)
"""The ``loco`` action for each of the four locomotive slots."""
SLOT_OF_LOCO_ACTION: dict[tuple[str, int], int] = {
    (a.line, a.slot): i for i, a in enumerate(LOCO_SLOT_ACTION)
}

FACTORY: dict[tuple[int, int], Factory] = {
    (n, g): Factory(n, g) for n in range(1, D.MAX_LOCO + 1) for g in range(D.NUM_GAPS)
}
INDUSTRY: tuple[Industry, ...] = (Industry(0), Industry(1))
QUESTION_TOKEN: tuple[QuestionToken, ...] = tuple(QuestionToken(t) for t in D.QUESTION_TOKENS)
QUESTION_CARD: tuple[QuestionCard, ...] = tuple(QuestionCard(c) for c in D.QUESTION_CARDS)
COPY_SPACE: tuple[CopySpace, ...] = tuple(CopySpace(s.id) for s in D.SPACES)
RELOCATE: dict[str, Relocate] = {
    sid: Relocate(sid) for sid in [s.id for s in D.SPACES] + [e.id for e in D.ENGINEERS]
}
END_BONUS: tuple[EndBonus, ...] = tuple(EndBonus(i) for i in range(len(D.END_BONUS_IDS)))
START_BONUS: dict[str, StartBonus] = {c: StartBonus(c) for c in D.START_BONUS_CARDS}
