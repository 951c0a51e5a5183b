"""Russian Railroads moves and seats in words (``Game.describe`` / ``Game.summarize_view``).

Terms are the rulebook's (``transsib.md``): action space, worker, rouble, track step, line,
locomotive, factory, industry marker, doubler, engineer, "?" token and card, turn order,
end bonus card. Every component is named as players know it, never by an internal code:
action spaces by their names in the data file (``"Black track"``, ``"Hire an engineer"``),
each followed by what it does; engineers as ``"Engineer 7 (...)"`` with their effect;
"?" tokens and cards, starting bonus cards and factories by name and effect; lines by their
names (``Moscow-Kiev``). A label never names a hidden card: an end bonus card is chosen by
its position in the face-down pile.

>>> from services.transsib.engine import GAME
>>> state = GAME.new_state(2, seed=7)
>>> seat = state.active_seats()[0]
>>> GAME.describe(state, state.legal_actions(seat)[0])
'Take the starting bonus card "One rouble" (1 rouble)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kernel.engine import Action, ActionRange, LegalAction
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import locos as L
from services.transsib.engine import placement as P
from services.transsib.engine.frames import LocoInHand

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

LINE_NAMES: dict[str, str] = {line["id"]: line["name"] for line in D.RAW["lines"]}
"""Line id -> its name on the board (``"kiev"`` -> ``"Moscow-Kiev"``)."""

_MARKER = ("first", "second")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _line(line: str) -> str:
    return LINE_NAMES.get(line, line)


def _engineer(e: int) -> str:
    """``"Engineer 7 (carry out an occupied action space again)"``."""
    eng = D.ENGINEERS[e]
    return f"{eng.name} ({eng.text})"


def _space_effect(st: TranssibState, sid: str) -> str:
    """What a board space does now, e.g. ``"3 black track steps"`` (an engineer space: its
    engineer, ``"Engineer 7 (...)"``)."""
    idx = D.SPACE_INDEX.get(sid)
    if idx is None:
        return ""
    sp = D.SPACES[idx]
    if sp.area == "hire":
        e = st.strip[-1]
        return f"hire {_engineer(e)}" if e >= 0 else "hire an engineer"
    cost = P.space_cost(st, idx)
    if cost is None:
        return ""
    program = cost[2]
    if sp.area == "engineer":
        eng = next((e for e in D.ENGINEERS if e.program is program), None)
        return _engineer(eng.index) if eng is not None else D.describe_program(program)
    return sp.text or D.describe_program(program)


def _space(st: TranssibState, sid: str) -> str:
    """A board space by name with what it does: ``"Black track (3 black track steps)"``."""
    idx = D.SPACE_INDEX.get(sid)
    if idx is None:
        return sid
    effect = _space_effect(st, sid)
    name = D.SPACES[idx].name
    if D.SPACES[idx].area == "engineer" and effect:
        return f"{name}: {effect}"
    return f"{name} ({effect})" if effect else name


def _place(st: TranssibState, a: A.Place) -> str:
    eidx = D.ENGINEER_INDEX.get(a.space)
    if eidx is not None:
        eng = D.ENGINEERS[eidx]
        workers = eng.own_workers - a.coins
        where = f"your {_engineer(eidx)}"
    else:
        idx = D.SPACE_INDEX.get(a.space)
        cost = None if idx is None else P.space_cost(st, idx)
        if cost is None or idx is None:
            return str(a)
        workers = cost[0] - a.coins
        if D.SPACES[idx].area == "hire" and workers == 0 and not a.coins:
            what = _space_effect(st, a.space)
            return f"{what[:1].upper()}{what[1:]}, paying {_plural(cost[1], 'rouble')}"
        where = _space(st, a.space)
        if cost[1]:
            where += f", paying {_plural(cost[1], 'rouble')}"
    if a.coins:
        stand_in = f"{_plural(a.coins, 'rouble')} for {'a worker' if a.coins == 1 else 'workers'}"
        what = f"{_plural(workers, 'worker')} and {stand_in}" if workers else stand_in
    else:
        what = _plural(workers, "worker")
    return f"Place {what} on {where}"


def describe(st: TranssibState, action: LegalAction) -> str:
    """One move of ``st`` (a TranssibState) in words; ``action`` is legal there."""
    if isinstance(action, ActionRange):
        return str(action)
    return _plain(st, action)


def _plain(st: TranssibState, a: Action) -> str:
    if isinstance(a, A.Place):
        return _place(st, a)
    if isinstance(a, A.Pass):
        return "Pass (out for the rest of the round)"
    if isinstance(a, A.StartBonus):
        program = D.START_BONUS_PROGRAMS.get(a.card, ())
        name = D.START_BONUS_NAMES.get(a.card, a.card)
        return f'Take the starting bonus card "{name}" ({D.describe_program(program)})'
    if isinstance(a, A.Track):
        return f"Move the {a.colour} rail marker 1 step on the {_line(a.line)} line"
    if isinstance(a, A.Loco):
        top = st.stack[-1] if st.stack else None
        number = top.number if isinstance(top, LocoInHand) else L.lowest_supply(st.supply)
        slots = D.LINE_SLOTS[D.LINE_INDEX[a.line]] if a.line in D.LINE_INDEX else ()
        slot = f", slot {a.slot + 1}" if len(slots) > 1 else ""
        return f"Put locomotive {number} on the {_line(a.line)} line{slot}"
    if isinstance(a, A.LocoToFactory):
        return "Return the displaced locomotive to the supply as a factory"
    if isinstance(a, A.Factory):
        text = D.FACTORY_TEXTS[a.number] if 0 < a.number < len(D.FACTORY_TEXTS) else ""
        what = f" ({text})" if text else ""
        return f"Build factory {a.number}{what} in factory gap {a.gap + 1}"
    if isinstance(a, A.Industry):
        name = _MARKER[a.marker] if 0 <= a.marker < 2 else str(a.marker)
        return f"Advance the {name} industry marker 1 step"
    if isinstance(a, A.QuestionToken):
        name = D.QUESTION_TOKEN_NAMES.get(a.token, a.token)
        text = D.QUESTION_TOKEN_TEXTS.get(a.token, "")
        return f'Use your "?" token {name}' + (f" ({text})" if text else "")
    if isinstance(a, A.QuestionCard):
        name = D.QUESTION_CARD_NAMES.get(a.card, a.card)
        text = D.QUESTION_CARD_TEXTS.get(a.card, "")
        return f'Take the "?" card {name}' + (f" ({text})" if text else "")
    if isinstance(a, A.CopySpace):
        return f"Carry out {_space(st, a.space)} again"
    if isinstance(a, A.Relocate):
        if a.space in D.ENGINEER_INDEX:
            return f"Move the turn-order worker to your {_engineer(D.ENGINEER_INDEX[a.space])}"
        return f"Move the turn-order worker to {_space(st, a.space)}"
    if isinstance(a, A.EndBonus):
        return f"Take end bonus card {a.index + 1} of the face-down pile"
    if isinstance(a, A.Done):
        return "Done (stop this action here)"
    return str(a)


def summarize_view(view: dict[str, Any]) -> list[str]:
    """One line per seat from a transsib view: points, coins, free workers, doublers,
    engineers; the seat to act is marked."""
    active = view.get("active_seat")
    out = []
    for p in view["players"]:
        parts = [
            _plural(p["score"], "point"),
            _plural(p["coins"], "rouble"),
            _plural(p["workers_free"] + p["temp_workers_free"] + p["black_worker_free"], "worker")
            + " free",
        ]
        if p["doublers"]:
            parts.append(_plural(p["doublers"], "doubler"))
        if p["engineers"]:
            numbers = sorted(D.ENGINEERS[D.ENGINEER_INDEX[e]].number for e in p["engineers"])
            parts.append("engineers " + ", ".join(str(n) for n in numbers))
        if p["factories"] and any(p["factories"]):
            parts.append("factories " + " ".join(str(f) for f in p["factories"] if f))
        line = f"Seat {p['seat']}: " + ", ".join(parts)
        if view.get("passed") and view["passed"][p["seat"]]:
            line += " (passed)"
        if p["seat"] == active and view.get("phase") != "game_over":
            line += " (to act)"
        out.append(line)
    return out
