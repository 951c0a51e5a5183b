"""Pending decisions (frames) and phases of a Russian Railroads state (§4.2, §4.4).

**Pending decisions.** A placement happens at once and in full (§4.2), but may
need several choices. They are frames on ``stack`` (a list of small tuples), all
belonging to the seat whose turn it is; the top frame decides the legal actions:

======================  =========================================================
frame (``FRAME_NAMES``)  tuple
======================  =========================================================
``effects``             (F_SEQ, seat, program key, next op index, optional)
``track``               (F_TRACK, seat, steps left, colour mask, up_to, done, optional)
``industry``            (F_INDUSTRY, seat, steps left, optional, only marker or -1)
``loco_choice``         (F_LOCO, seat, mode, loco done, factory done, optional)
``loco_in_hand``        (F_HAND, seat, number, from line, no factory side, new)
``question``            (F_QUESTION, seat)
``copy_space``          (F_COPY, seat, optional)
``end_bonus``           (F_END_BONUS, seat)
``relocate``            (F_RELOCATE, seat, from space index)
``start_bonus``         (F_START, seat)
======================  =========================================================

``optional`` frames come from actions nobody competes for (factory actions, own
engineers, "?" tokens) and may be stopped with ``done`` (§4.4); competed ones are
checked to be performable in full before the placement is accepted, and every
choice offered keeps them performable. Bonuses gained during an action ("?"
spaces) wait in ``gained`` until it is complete; end bonus cards are chosen at
the end of the turn (§4.4).
"""

from __future__ import annotations

F_SEQ, F_TRACK, F_INDUSTRY, F_LOCO, F_HAND, F_QUESTION, F_COPY, F_END_BONUS, F_RELOCATE, F_START = (
    range(10)
)
FRAME_NAMES = (
    "effects",
    "track",
    "industry",
    "loco_choice",
    "loco_in_hand",
    "question",
    "copy_space",
    "end_bonus",
    "relocate",
    "start_bonus",
)
LF_EITHER, LF_BOTH, LF_LOCO, LF_FACTORY = range(4)
LF_NAMES = ("loco_or_factory", "loco_and_factory", "loco", "factory")
PH_START, PH_ACTIONS, PH_RELOCATE, PH_OVER = range(4)
PHASE_NAMES = ("start_bonus", "actions", "relocation", "game_over")
