"""The rule tables of Russian Railroads, loaded once from ``data/transsib.json``.

Everything numeric (action spaces, colour values, lines, special spaces,
industry track, engineers, factory actions, "?" tokens and cards, bonus cards)
lives in the JSON file, each entry with its status tag from the spec
(``V`` verified, ``P`` probable, ``U`` unverified, ``?`` unknown). This module
turns it into immutable module-level tuples shared by every state.

Effects are compiled into small tuples ``(op, a, b, c)`` (see the ``OP_*``
constants); a *program* is a tuple of them, carried out in order
(spec §4.2: an action happens at once and in full).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

RAW: MappingProxyType[str, Any] = MappingProxyType(
    json.loads((Path(__file__).parent / "data" / "transsib.json").read_text(encoding="utf-8"))
)
"""The whole data file (read-only mapping; nested values must not be mutated)."""

# --------------------------------------------------------------------------- colours, lines

COLOURS: tuple[str, ...] = tuple(RAW["track_colours"]["order_front_to_back"])
"""Rail colours front to back (§5.1): black, grey, brown, natural, white."""
COLOUR_INDEX: dict[str, int] = {c: i for i, c in enumerate(COLOURS)}
BLACK, GREY, BROWN, NATURAL, WHITE = range(5)
ALL_COLOURS_MASK = (1 << len(COLOURS)) - 1

VALUES: tuple[int, ...] = tuple(RAW["track_colours"]["value"])
"""Points per track space and round by colour (§6.2)."""
VALUES_REVALUED: tuple[int, ...] = tuple(RAW["track_colours"]["value_revalued"])

UNLOCKS: tuple[tuple[int, int], ...] = tuple(
    (space, COLOUR_INDEX[colour])
    for colour, space in RAW["track_colours"]["unlock_by_black_on_transsib"].items()
    if colour != "status"
)
"""(Trans-Siberian space, colour) pairs: the black marker reaching the space unlocks the
colour (§6.3)."""

LINES: tuple[str, ...] = tuple(line["id"] for line in RAW["lines"])
"""Line ids: ``transsib``, ``stpetersburg``, ``kiev`` (§6.1)."""
LINE_INDEX: dict[str, int] = {name: i for i, name in enumerate(LINES)}
TS, STP, KIEV = 0, 1, 2
LINE_LENGTH: tuple[int, ...] = tuple(line["length"] for line in RAW["lines"])
LINE_COLOURS_MASK: tuple[int, ...] = tuple(
    sum(1 << COLOUR_INDEX[c] for c in line["colours"]) for line in RAW["lines"]
)
"""Bit mask of the colours each line takes (§6.1)."""

LOCO_SLOT_LINE: tuple[int, ...] = tuple(
    i for i, line in enumerate(RAW["lines"]) for _ in range(line["loco_slots"])
)
"""Line of each locomotive slot: (TS, TS, StP, Kiev) (§7.2)."""
LINE_SLOTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(s for s, line in enumerate(LOCO_SLOT_LINE) if line == i) for i in range(len(LINES))
)
NUM_LOCO_SLOTS = len(LOCO_SLOT_LINE)

# --------------------------------------------------------------------------- effects

OP_TRACK = 0  # (op, steps, colour mask, up_to)
OP_INDUSTRY = 1  # (op, steps)
OP_LOCO_OR_FACTORY = 2
OP_LOCO_AND_FACTORY = 3
OP_LOCO = 4
OP_FACTORY = 5
OP_DOUBLERS = 6  # (op, n)
OP_COINS = 7  # (op, n)
OP_POINTS = 8  # (op, n)
OP_TEMP_WORKERS = 9  # (op, n)
OP_WORKER = 10  # (op, n)
OP_QUESTION = 11
OP_END_BONUS = 12
OP_CLAIM = 13  # (op, position)
OP_COPY_SPACE = 14
OP_POINTS_TOP2_LOCOS = 15
OP_POINTS_ENGINEER_SUM = 16
OP_REVALUATION = 17
OP_KIEV_MEDAL = 18
OP_SECOND_MARKER = 19
OP_BLACK_WORKER = 20
OP_LOCO9 = 21
OP_LETTERLESS_ENGINEER = 22

_OP_NAMES = {
    "track": OP_TRACK,
    "industry": OP_INDUSTRY,
    "loco_or_factory": OP_LOCO_OR_FACTORY,
    "loco_and_factory": OP_LOCO_AND_FACTORY,
    "loco": OP_LOCO,
    "factory": OP_FACTORY,
    "doublers": OP_DOUBLERS,
    "coins": OP_COINS,
    "points": OP_POINTS,
    "temp_workers": OP_TEMP_WORKERS,
    "worker": OP_WORKER,
    "question": OP_QUESTION,
    "end_bonus": OP_END_BONUS,
    "claim": OP_CLAIM,
    "copy_space": OP_COPY_SPACE,
    "points_top2_locos": OP_POINTS_TOP2_LOCOS,
    "points_engineer_sum": OP_POINTS_ENGINEER_SUM,
    "revaluation": OP_REVALUATION,
    "kiev_medal": OP_KIEV_MEDAL,
    "second_industry_marker": OP_SECOND_MARKER,
    "black_worker": OP_BLACK_WORKER,
    "loco9": OP_LOCO9,
    "letterless_engineer": OP_LETTERLESS_ENGINEER,
}

Op = tuple[int, int, int, int]
Program = tuple[Op, ...]


def compile_effect(effect: list[list[Any]]) -> Program:
    """Compile a data-file effect list into a program.

    >>> compile_effect([["track", 3, ["black"], "exact"]])
    ((0, 3, 1, 0),)

    Raises:
        ValueError: an unknown effect name or colour.
    """
    out = []
    for item in effect:
        name = item[0]
        if name not in _OP_NAMES:
            raise ValueError(f"unknown effect {name!r}")
        op = _OP_NAMES[name]
        if op == OP_TRACK:
            mask = sum(1 << COLOUR_INDEX[c] for c in item[2])
            out.append((op, int(item[1]), mask, 1 if item[3] == "up_to" else 0))
        elif op in (OP_INDUSTRY, OP_DOUBLERS, OP_COINS, OP_POINTS, OP_TEMP_WORKERS, OP_WORKER):
            out.append((op, int(item[1]), 0, 0))
        elif op == OP_CLAIM:
            out.append((op, int(item[1]), 0, 0))
        else:
            out.append((op, 0, 0, 0))
    return tuple(out)


_OP_WORDS: dict[int, str] = {
    OP_LOCO_OR_FACTORY: "take one locomotive or one factory",
    OP_LOCO_AND_FACTORY: "take one locomotive and one factory",
    OP_LOCO: "take the lowest locomotive",
    OP_FACTORY: "build one factory",
    OP_QUESTION: 'one "?" bonus',
    OP_END_BONUS: "take an end bonus card",
    OP_COPY_SPACE: "carry out an occupied action space again",
    OP_POINTS_TOP2_LOCOS: "score the sum of your two highest locomotives",
    OP_POINTS_ENGINEER_SUM: "score the sum of your engineers' numbers",
    OP_REVALUATION: "activate your revaluation marker",
    OP_KIEV_MEDAL: "activate your Kiev medal",
    OP_SECOND_MARKER: "activate your second industry marker",
    OP_BLACK_WORKER: "take the black worker",
    OP_LOCO9: "take the #9 locomotive without a factory side",
    OP_LETTERLESS_ENGINEER: "take the letterless engineer",
}
"""Words for the ops without numbers (the rulebook's terms, never an op name)."""


def describe_program(program: Program) -> str:
    """A short English description of a program, for labels and views.

    >>> describe_program(compile_effect([["track", 3, ["black"], "exact"], ["coins", 2]]))
    '3 black track steps, 2 roubles'
    """
    parts = []
    for op, a, b, c in program:
        if op == OP_TRACK:
            cols = [COLOURS[i] for i in range(len(COLOURS)) if b >> i & 1]
            col = "any-colour" if len(cols) == len(COLOURS) else " or ".join(cols)
            parts.append(f"{'up to ' if c else ''}{a} {col} track step{'s' if a > 1 else ''}")
        elif op == OP_INDUSTRY:
            parts.append(f"{a} industry step{'s' if a > 1 else ''}")
        elif op in (OP_DOUBLERS, OP_COINS, OP_POINTS, OP_TEMP_WORKERS, OP_WORKER):
            noun = {
                OP_DOUBLERS: "doubler",
                OP_COINS: "rouble",
                OP_POINTS: "point",
                OP_TEMP_WORKERS: "turquoise worker",
                OP_WORKER: "permanent worker",
            }[op]
            parts.append(f"{a} {noun}{'s' if a > 1 else ''}")
        elif op == OP_CLAIM:
            parts.append(f"claim turn position {a}")
        else:
            parts.append(_OP_WORDS[op])
    return ", ".join(parts)


# --------------------------------------------------------------------------- action spaces


class Space:
    """One action space of the board (§5), immutable.

    Attributes:
        index: position in :data:`SPACES`.
        id: our id (``"T-BLK-2"``, ``"E-VAR-1"``, ...).
        area: ``track``, ``loco``, ``industry``, ``auxiliary``, ``turn_order``,
            ``last_round``, ``engineer`` or ``hire``.
        workers: workers required (for engineer spaces: printed on the tile, 0 here).
        coins: coins required on top of the workers (T-ANY, E-HIRE).
        repeatable: T-REP only.
        in_2p: whether the space exists on the 2-player side.
        program: the compiled effect (empty for engineer spaces and E-HIRE).
        status: the tag (V/P/U/?).
        name: the space's name for players (``"Black track"``).
        text: what it does, in words (``"3 black track steps"``).
    """

    __slots__ = (
        "index",
        "id",
        "name",
        "text",
        "area",
        "workers",
        "coins",
        "repeatable",
        "in_2p",
        "program",
        "status",
        "copyable",
    )

    def __init__(self, index: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.id: str = raw["id"]
        self.name: str = raw.get("name", raw["id"])
        self.text: str = raw.get("text", "")
        self.area: str = raw["area"]
        self.workers: int = raw.get("workers", 0)
        self.coins: int = raw.get("coins", 0)
        self.repeatable: bool = bool(raw.get("repeatable", False))
        self.in_2p = raw.get("in_2p")
        self.program: Program = compile_effect(raw.get("effect", []))
        self.status: str = raw.get("status", "V")
        # a copied action (engineer or factory "reuse a space") may be any board
        # action except turn order, temporary workers and engineer spaces
        self.copyable: bool = self.area in ("track", "loco", "industry", "last_round") or (
            self.id in ("A-DBL", "A-COIN")
        )


def _build_spaces() -> tuple[Space, ...]:
    raws = list(RAW["action_spaces"])
    eng = RAW["engineer_spaces"]
    for sid in eng["variable"]:
        raws.append(
            {
                "id": sid,
                "name": eng["names"][sid],
                "area": "engineer",
                "workers": 0,
                "coins": 0,
                "in_2p": None,
            }
        )
    raws.append(
        {
            "id": eng["hire"],
            "name": eng["names"][eng["hire"]],
            "text": "hire the engineer on the hiring space for 1 rouble",
            "area": "hire",
            "workers": eng["hire_cost_workers"],
            "coins": eng["hire_cost_coins"],
            "in_2p": True,
            "status": eng["status"],
        }
    )
    return tuple(Space(i, r) for i, r in enumerate(raws))


SPACES: tuple[Space, ...] = _build_spaces()
SPACE_INDEX: dict[str, int] = {s.id: s.index for s in SPACES}
NUM_SPACES = len(SPACES)
VAR_SPACES: tuple[int, ...] = tuple(SPACE_INDEX[s] for s in RAW["engineer_spaces"]["variable"])
HIRE_SPACE: int = SPACE_INDEX[RAW["engineer_spaces"]["hire"]]
O1_SPACE: int = SPACE_INDEX["O-1"]
O2_SPACE: int = SPACE_INDEX["O-2"]
TEMP_SPACE: int = SPACE_INDEX["A-TEMP"]
REP_SPACE: int = SPACE_INDEX["T-REP"]
LAST_ROUND_SPACE: int = SPACE_INDEX[RAW["last_round_tile"]["space"]]
CLAIM_SPACES: tuple[int, ...] = (O1_SPACE, O2_SPACE)
BLACK_TRACK_SPACES: frozenset[int] = frozenset(
    s.index
    for s in SPACES
    if s.program and all(op[0] == OP_TRACK and op[2] == 1 << BLACK for op in s.program)
)
"""Spaces that give only black steps (where a restricted black worker may stand, §9)."""

# --------------------------------------------------------------------------- engineers


class Engineer:
    """One engineer tile (§10), immutable. ``stack`` is ``A``, ``B`` or ``none``;
    ``name`` is what players see (``"Engineer 7"``), ``text`` its effect in words."""

    __slots__ = (
        "index",
        "id",
        "name",
        "text",
        "number",
        "stack",
        "var_workers",
        "var_coins",
        "own_workers",
        "program",
        "status",
    )

    def __init__(self, index: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.id: str = raw["id"]
        self.number: int = raw["number"]
        self.name: str = raw.get("name", f"Engineer {raw['number']}")
        self.text: str = raw.get("text", "")
        self.stack: str = raw["stack"]
        self.var_workers: int = raw["var_workers"]
        self.var_coins: int = raw["var_coins"]
        self.own_workers: int = raw["own_workers"]
        self.program: Program = compile_effect(raw["effect"])
        self.text = self.text or describe_program(self.program)
        self.status: str = raw["status"]


ENGINEERS: tuple[Engineer, ...] = tuple(
    Engineer(i, r) for i, r in enumerate(RAW["engineers"]["tiles"])
)
ENGINEER_INDEX: dict[str, int] = {e.id: e.index for e in ENGINEERS}
LETTERLESS: int = next(e.index for e in ENGINEERS if e.stack == "none")
MAJORITY_POINTS: tuple[int, int] = (
    RAW["engineers"]["majority_points"]["first"],
    RAW["engineers"]["majority_points"]["second"],
)

# --------------------------------------------------------------------------- locos, industry

SUPPLY_NUMBERS: tuple[int, ...] = tuple(RAW["locomotives"]["supply_numbers"])
MAX_LOCO = 9
FACTORY_PROGRAMS: tuple[Program, ...] = ((),) + tuple(
    compile_effect(RAW["locomotives"]["factory_action_by_number"][str(n)]["effect"])
    for n in range(1, MAX_LOCO + 1)
)
"""Index ``n`` (1..9): the factory action of locomotive number ``n`` (§7.5)."""
FACTORY_TEXTS: tuple[str, ...] = ("",) + tuple(
    RAW["locomotives"]["factory_action_by_number"][str(n)].get("text")
    or describe_program(FACTORY_PROGRAMS[n])
    for n in range(1, MAX_LOCO + 1)
)
"""Index ``n`` (1..9): the factory action of number ``n`` in words (``"1 rouble"``)."""

INDUSTRY_STRUCTURE: tuple[str, ...] = tuple(RAW["industry_track"]["structure"])
"""``B`` board field or ``F`` factory gap, left to right (§8.1)."""
FACTORY_GAP_FIELDS: tuple[int, ...] = tuple(
    i for i, kind in enumerate(INDUSTRY_STRUCTURE) if kind == "F"
)
NUM_GAPS = len(FACTORY_GAP_FIELDS)
GAP_OF_FIELD: tuple[int, ...] = tuple(
    FACTORY_GAP_FIELDS.index(i) if kind == "F" else -1 for i, kind in enumerate(INDUSTRY_STRUCTURE)
)
NUM_FIELDS = len(INDUSTRY_STRUCTURE)
INDUSTRY_SPECIALS: tuple[tuple[int, str], ...] = tuple(
    (s["field"], s["type"]) for s in RAW["special_spaces"]["industry"]
)

# --------------------------------------------------------------------------- special spaces


class Special:
    """A special space on a line (§6.5), fired once when the trigger marker (and,
    where marked, the locomotive reach) reaches it; ``round_points`` specials
    are counted at each scoring instead."""

    __slots__ = ("index", "line", "space", "kind", "trigger", "needs_loco", "points", "status")

    def __init__(self, index: int, line: int, raw: dict[str, Any]) -> None:
        self.index = index
        self.line = line
        self.space: int = raw["space"]
        self.kind: str = raw["type"]
        self.trigger: int = COLOUR_INDEX[raw.get("trigger", "black")]
        self.needs_loco: bool = bool(raw["needs_loco"])
        self.points: int = raw.get("points", 0)
        self.status: str = raw["status"]


def _build_specials() -> tuple[Special, ...]:
    out: list[Special] = []
    for line_id in LINES:
        for raw in RAW["special_spaces"].get(line_id, []):
            out.append(Special(len(out), LINE_INDEX[line_id], raw))
    return tuple(out)


SPECIALS: tuple[Special, ...] = _build_specials()
FIRING_SPECIALS: tuple[tuple[Special, ...], ...] = tuple(
    tuple(s for s in SPECIALS if s.line == i and s.kind != "round_points")
    for i in range(len(LINES))
)
ROUND_POINT_SPECIALS: tuple[Special, ...] = tuple(s for s in SPECIALS if s.kind == "round_points")

# --------------------------------------------------------------------------- bonuses

START_BONUS_CARDS: tuple[str, ...] = tuple(c["id"] for c in RAW["starting_bonus_cards"]["cards"])
START_BONUS_PROGRAMS: dict[str, Program] = {
    c["id"]: compile_effect(c["effect"]) for c in RAW["starting_bonus_cards"]["cards"]
}
START_BONUS_NAMES: dict[str, str] = {
    c["id"]: c.get("name", c["id"]) for c in RAW["starting_bonus_cards"]["cards"]
}
"""Starting bonus card id -> its name (``"One rouble"``)."""
QUESTION_TOKENS: tuple[str, ...] = tuple(t["id"] for t in RAW["question_tokens"])
QUESTION_TOKEN_NAMES: dict[str, str] = {
    t["id"]: t.get("name", t["id"]) for t in RAW["question_tokens"]
}
""""?" token id -> its name (``"Revaluation"``)."""
QUESTION_TOKEN_TEXTS: dict[str, str] = {t["id"]: t.get("text", "") for t in RAW["question_tokens"]}
QUESTION_TOKEN_PROGRAMS: tuple[Program, ...] = tuple(
    compile_effect(t["effect"]) for t in RAW["question_tokens"]
)
QUESTION_CARDS: tuple[str, ...] = tuple(c["id"] for c in RAW["question_cards"])
QUESTION_CARD_NAMES: dict[str, str] = {
    c["id"]: c.get("name", c["id"]) for c in RAW["question_cards"]
}
"""'?' card id -> its name (``"Black worker"``)."""
QUESTION_CARD_TEXTS: dict[str, str] = {c["id"]: c.get("text", "") for c in RAW["question_cards"]}
QUESTION_CARD_PROGRAMS: tuple[Program, ...] = tuple(
    compile_effect(c["effect"]) for c in RAW["question_cards"]
)
END_BONUS_CARDS: tuple[Mapping[str, Any], ...] = tuple(
    MappingProxyType(c) for c in RAW["end_bonus_cards"]["cards"]
)
END_BONUS_IDS: tuple[str, ...] = tuple(c["id"] for c in END_BONUS_CARDS)
END_BONUS_NAMES: dict[str, str] = {
    c["id"]: f"{c.get('name', c['id'])} ({c.get('text', '')})" for c in END_BONUS_CARDS
}
"""End bonus card id -> its name and effect, for labels (never shown for a hidden card)."""
END_BONUS_REMOVED = RAW["components"]["end_bonus_cards"]["removed_unseen_at_setup"]

PLAYER_COUNT: Mapping[int, Mapping[str, Any]] = MappingProxyType(
    {int(k): MappingProxyType(v) for k, v in RAW["player_count"].items()}
)
WORKERS_PER_COLOUR: int = RAW["components"]["workers"]["per_player_colour"]
TEMP_WORKERS: int = RAW["components"]["workers"]["turquoise_temporary"]
DOUBLER_SPACES: int = RAW["components"]["doubler_spaces"]
"""Doubler spaces above the Trans-Siberian (§6.4 [V count])."""
