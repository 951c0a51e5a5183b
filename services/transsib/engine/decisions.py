"""The legal actions of each pending decision and what each action does (§4.2-§12).

``FRAME_LEGAL[frame class](state, frame)`` lists the actions of the decision on top of
the stack; ``HANDLERS[action class](state, seat, action, events)`` carries out an action
that ``apply`` has already found in the legal list (so handlers never refuse).
:func:`gained_choices` lists the "?" bonuses gained during the turn that may be taken
before the current decision (§4.4, option ``gained_actions_order``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from services.kernel.engine import Action, Event
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import effects as E
from services.transsib.engine import industry as IND
from services.transsib.engine import locos as L
from services.transsib.engine import placement as P
from services.transsib.engine import track as T
from services.transsib.engine.engineers import variable_slots
from services.transsib.engine.frames import (
    LF_BOTH,
    LF_FACTORY,
    LF_LOCO,
    CopySpace,
    EndBonus,
    Frame,
    IndustrySteps,
    LocoChoice,
    LocoInHand,
    Question,
    Relocate,
    Seq,
    StartBonus,
    Track,
)
from services.transsib.engine.player import Player

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_SPACES = D.SPACES
_TOKEN_KEY = tuple(f"token:{t}" for t in D.QUESTION_TOKENS)
_CARD_KEY = tuple(f"card:{c}" for c in D.QUESTION_CARDS)
_ENG_ID = tuple(e.id for e in D.ENGINEERS)
_DONE = A.DONE
_new = tuple.__new__  # a frame record from its field tuple (hot paths)
_BLACK_TRACK = D.BLACK_TRACK_SPACES


# ---------------------------------------------------------------------- frame legal actions


def _legal_track(s: TranssibState, top: Track) -> list[Action]:
    seat, steps, colours, up_to, done, optional = top  # the record's fields, in order
    acts = T.legal_steps(s.players[seat], colours, s.rules.track_gap) if steps > 0 else []
    if acts and (optional or (up_to and done >= 1)):
        acts.append(_DONE)
    return acts


def _legal_industry(s: TranssibState, top: IndustrySteps) -> list[Action]:
    p = s.players[top.seat]
    if (
        top.steps > 0
        and top.only < 0
        and p.ind[1] >= 0
        and IND.marker_capacity(s.rules, p, 0) > 0
        and IND.marker_capacity(s.rules, p, 1) > 0
    ):
        return [A.INDUSTRY[0], A.INDUSTRY[1]]
    return []


def _legal_loco(s: TranssibState, top: LocoChoice) -> list[Action]:
    seat, mode, ld, fd, opt = top  # the record's fields, in order
    p = s.players[seat]
    acts: list[Action] = []
    want_loco = not ld and mode != LF_FACTORY
    want_fac = not fd and mode != LF_LOCO
    both_open = mode == LF_BOTH and not ld and not fd and not opt
    n = L.lowest_supply(s.supply)
    if want_loco and n:
        slots = L.targets(p, n, -1)
        if both_open and s.supply_total < 2 and s.pool_total == 0:
            # the factory must still be possible: only placements that return one
            slots = [sl for sl in slots if p.locos[sl]] if not L.has_empty_slot(p) else []
        acts.extend(A.LOCO_SLOT_ACTION[sl] for sl in slots)
    if want_fac:
        gaps = L.factory_gaps(p)
        for number in L.factory_tiles(s):
            if both_open and number == n and not s.pool[number]:
                # taking the supply's locomotive as a factory must leave one to place
                if s.supply_total < 2:
                    continue
            for g in gaps:
                acts.append(A.FACTORY[(number, g)])
    if acts and opt:
        acts.append(_DONE)
    return acts


def _legal_hand(s: TranssibState, top: LocoInHand) -> list[Action]:
    p = s.players[top.seat]
    acts: list[Action] = [A.LOCO_SLOT_ACTION[sl] for sl in L.targets(p, top.number, top.from_line)]
    if not top.new and not L.has_empty_slot(p):
        acts.append(A.LOCO_TO_FACTORY)
    return acts


def _question_choices(s: TranssibState, seat: int) -> list[Action]:
    """The "?" tokens and cards ``seat`` may take (§12.1, §12.2, §12.4)."""
    p = s.players[seat]
    acts: list[Action] = [
        A.QUESTION_TOKEN[i] for i in range(len(D.QUESTION_TOKENS)) if not (p.tokens_used >> i & 1)
    ]
    if s.opts.question_bonus_choice == "token_or_card":
        for i, there in enumerate(s.qcards):
            if there and E.program_ok(s, seat, p, D.QUESTION_CARD_PROGRAMS[i]):
                acts.append(A.QUESTION_CARD[i])
    return acts


def _legal_question(s: TranssibState, top: Question) -> list[Action]:
    acts = _question_choices(s, top.seat)
    if acts:
        acts.append(_DONE)
    return acts


GAINED_EARLY = (Track, IndustrySteps, LocoChoice)
"""The decisions before which a gained "?" bonus may be taken (§4.4 any order): not
during a locomotive placement chain (§4.4: it is finished first), not before the space
an engineer or factory reuses is chosen (§4.4: that comes first), not at other bonus
choices."""


def gained_choices(s: TranssibState, top: Frame) -> list[Action]:
    """With ``gained_actions_order`` = ``any`` (§4.4): the "?" choices of the first bonus
    gained this turn, offered next to the decision ``top`` of the same seat; [] when none
    may be taken now. Declining the bonus (``done``) waits for its own turn."""
    if top.__class__ not in GAINED_EARLY or s.gained[0].seat != top.seat:
        return []
    return _question_choices(s, top.seat)


def gained_early(s: TranssibState, seat: int) -> bool:
    """Whether a "?" choice of ``seat`` now takes a gained bonus ahead of the decision on
    top of the stack (rather than answering a "?" decision)."""
    top = s.stack[-1] if s.stack else None
    return (
        top is not None
        and top.__class__ is not Question
        and bool(s.gained)
        and s.rules.gained_any_order
        and bool(gained_choices(s, top))
    )


def _legal_copy(s: TranssibState, top: CopySpace) -> list[Action]:
    seat, opt = top.seat, top.optional
    acts: list[Action] = [
        A.COPY_SPACE[i] for i in E.copy_targets(s, seat, s.players[seat], bool(opt))
    ]
    if acts and opt:
        acts.append(_DONE)
    return acts


def _legal_end_bonus(s: TranssibState, top: EndBonus) -> list[Action]:
    return [A.END_BONUS[i] for i in range(len(s.deck))]


def relocation_targets(s: TranssibState, seat: int) -> list[str]:
    """Spaces the turn-order worker may move to (§11.3): empty 1-worker spaces that need
    no coin (not the turn-order spaces), performable in full, and own unused engineers
    needing one worker."""
    p = s.players[seat]
    out = []
    for idx in s.spaces:
        sp = _SPACES[idx]
        if sp.area == "turn_order" or sp.area == "hire":
            continue
        if s.occ[idx] >= 0 and not sp.repeatable:
            continue
        cost = P.space_cost(s, idx)
        if cost is None:
            continue
        w, m, prog = cost
        if w != 1 or m != 0:
            continue
        if prog and not E.program_ok(s, seat, p, prog):
            continue
        out.append(sp.id)
    for e in p.engineers:
        if not (p.eng_used >> e & 1) and D.ENGINEERS[e].own_workers == 1:
            out.append(_ENG_ID[e])
    return out


def _legal_relocate(s: TranssibState, top: Relocate) -> list[Action]:
    acts: list[Action] = [A.RELOCATE[sid] for sid in relocation_targets(s, top.seat)]
    if acts:
        acts.append(_DONE)
    return acts


def _legal_start(s: TranssibState, top: StartBonus) -> list[Action]:
    return [A.START_BONUS[c] for c in s.start_cards]


FrameLegal = Callable[["TranssibState", Any], list[Action]]
"""``legal(state, frame)``; the frame is of the table key's class (a dispatch table: its
value types differ by key, which a ``dict`` type cannot say, hence ``Any``)."""

FRAME_LEGAL: dict[type[Frame], FrameLegal] = {
    Track: _legal_track,
    IndustrySteps: _legal_industry,
    LocoChoice: _legal_loco,
    LocoInHand: _legal_hand,
    Question: _legal_question,
    CopySpace: _legal_copy,
    EndBonus: _legal_end_bonus,
    Relocate: _legal_relocate,
    StartBonus: _legal_start,
}
"""The legal actions of each decision (frame class); :class:`Seq` frames never wait."""


# ---------------------------------------------------------------------- handlers (validated)


def _pay_workers(s: TranssibState, p: Player, idx: int, workers: int) -> None:
    """Take ``workers`` from the player's supply: the restricted black worker first
    where it may stand (it can go nowhere else, §9), then turquoise workers, then own
    workers (§5.4). Turquoise and own workers are equally free within the round (all
    come back at cleanup), so spending the most restricted worker first never leaves
    the player with fewer choices."""
    if workers and p.black and idx in _BLACK_TRACK:
        b = min(p.black, workers)
        p.black -= b
        p.placed_black += b
        workers -= b
    t = min(p.temp, workers)
    p.temp -= t
    p.placed_temp += t
    workers -= t
    p.own -= workers
    p.placed_own += workers


def _do_place(s: TranssibState, seat: int, a: A.Place, events: list[Event]) -> None:
    p = s.players[seat]
    c = a.coins
    eidx = D.ENGINEER_INDEX.get(a.space)
    if eidx is not None:
        eng = D.ENGINEERS[eidx]
        p.eng_used |= 1 << eidx
        p.coins -= c
        _pay_workers(s, p, -1, eng.own_workers - c)
        events.append(
            {
                "type": "placed",
                "seat": seat,
                "space": a.space,
                "workers": eng.own_workers - c,
                "coins": c,
            }
        )
        s.stack.append(Seq(seat, eng.id, 0, True))
    else:
        idx = D.SPACE_INDEX[a.space]
        sp = _SPACES[idx]
        cost = P.space_cost(s, idx)
        assert cost is not None  # a legal placement's space has a cost
        w, m, _prog = cost
        p.coins -= c + m
        _pay_workers(s, p, idx, w - c)
        if sp.repeatable:
            s.rep.append(seat)
            s.occ_w[idx] += w - c
            s.occ_c[idx] += c + m
        else:
            s.occ[idx] = seat
            s.occ_w[idx] = w - c
            s.occ_c[idx] = c + m
        events.append(
            {"type": "placed", "seat": seat, "space": a.space, "workers": w - c, "coins": c + m}
        )
        if sp.area == "engineer":
            slot = variable_slots(s.num_players)[D.VAR_SPACES.index(idx)]
            s.stack.append(Seq(seat, _ENG_ID[s.strip[slot]]))
        elif sp.area == "hire":
            e = s.strip[-1]
            s.strip[-1] = -1
            p.engineers.append(e)
            events.append({"type": "engineer", "seat": seat, "engineer": _ENG_ID[e]})
        else:
            s.stack.append(_new(Seq, (seat, sp.id, 0, False)))
    s.in_turn = True
    s.turn_seat = seat


def _do_pass(s: TranssibState, seat: int, a: Action, events: list[Event]) -> None:
    p = s.players[seat]
    s.passed[seat] = True
    if s.opts.pass_points_follow == "dealt_card":
        card = p.card
    else:
        card = s.order.index(seat) + 1
    pts = s.opts.pass_points[card - 1]
    p.score += pts
    events.append({"type": "passed", "seat": seat, "points": pts})
    s.in_turn = True
    s.turn_seat = seat


def _do_start_bonus(s: TranssibState, seat: int, a: A.StartBonus, events: list[Event]) -> None:
    s.stack.pop()
    s.start_cards.remove(a.card)
    events.append({"type": "start_bonus", "seat": seat, "card": a.card})
    s.stack.append(Seq(seat, "start:" + a.card))


def _do_track(s: TranssibState, seat: int, a: A.Track, events: list[Event]) -> None:
    top = cast(Track, s.stack[-1])  # a track action is legal only on a Track decision
    steps = top.steps
    if steps <= 1:
        s.stack.pop()
    else:
        s.stack[-1] = _new(
            Track, (seat, steps - 1, top.colours, top.up_to, top.done + 1, top.optional)
        )
    T.do_step(s, seat, s.players[seat], D.LINE_INDEX[a.line], D.COLOUR_INDEX[a.colour], events)


def _do_loco(s: TranssibState, seat: int, a: A.Loco, events: list[Event]) -> None:
    st = s.stack
    top = st[-1]
    p = s.players[seat]
    slot = A.SLOT_OF_LOCO_ACTION[(a.line, a.slot)]
    if isinstance(top, LocoChoice):
        if top.mode == LF_BOTH and not top.factory_done:
            st[-1] = LocoChoice(seat, LF_BOTH, True, False, top.optional)
        else:
            st.pop()
        number = L.lowest_supply(s.supply)
        s.supply[number] -= 1
        s.supply_total -= 1
    else:
        st.pop()
        number = cast(LocoInHand, top).number  # the other decision a loco action is legal in
    displaced = L.place(s, seat, p, slot, number, events)
    if displaced:
        st.append(LocoInHand(seat, displaced, D.LOCO_SLOT_LINE[slot]))
    E.check_all_specials(s, seat, p, events)


def _do_loco_to_factory(s: TranssibState, seat: int, a: Action, events: list[Event]) -> None:
    top = cast(LocoInHand, s.stack.pop())  # legal only on a LocoInHand decision
    L.return_as_factory(s, seat, top.number, top.no_factory, events)


def _do_factory(s: TranssibState, seat: int, a: A.Factory, events: list[Event]) -> None:
    st = s.stack
    top = cast(LocoChoice, st[-1])  # legal only on a LocoChoice decision
    if top.mode == LF_BOTH and not top.loco_done:
        st[-1] = LocoChoice(seat, LF_BOTH, False, True, top.optional)
    else:
        st.pop()
    L.build_factory(s, seat, s.players[seat], a.number, a.gap, events)


def _do_industry(s: TranssibState, seat: int, a: A.Industry, events: list[Event]) -> None:
    top = cast(IndustrySteps, s.stack[-1])  # legal only on an IndustrySteps decision
    s.stack[-1] = IndustrySteps(seat, top.steps - 1, top.optional, top.only)
    E.industry_step(s, seat, s.players[seat], a.marker, events)


def _take_question(s: TranssibState, seat: int) -> None:
    """Remove the "?" bonus being taken: the decision on top, or, taken early (§4.4 any
    order), the first gained one."""
    if gained_early(s, seat):
        s.gained.pop(0)
    else:
        s.stack.pop()


def _do_question_token(
    s: TranssibState, seat: int, a: A.QuestionToken, events: list[Event]
) -> None:
    _take_question(s, seat)
    i = D.QUESTION_TOKENS.index(a.token)
    s.players[seat].tokens_used |= 1 << i
    events.append({"type": "question_token", "seat": seat, "token": a.token})
    s.stack.append(Seq(seat, _TOKEN_KEY[i], 0, True))


def _do_question_card(s: TranssibState, seat: int, a: A.QuestionCard, events: list[Event]) -> None:
    _take_question(s, seat)
    i = D.QUESTION_CARDS.index(a.card)
    s.qcards[i] = False
    events.append({"type": "question_card", "seat": seat, "card": a.card})
    s.stack.append(Seq(seat, _CARD_KEY[i]))


def _do_copy(s: TranssibState, seat: int, a: A.CopySpace, events: list[Event]) -> None:
    top = cast(CopySpace, s.stack.pop())  # legal only on a CopySpace decision
    events.append({"type": "copy_space", "seat": seat, "space": a.space})
    s.stack.append(Seq(seat, a.space, 0, top.optional))


def _do_relocate(s: TranssibState, seat: int, a: A.Relocate, events: list[Event]) -> None:
    top = cast(Relocate, s.stack.pop())  # legal only on a Relocate decision
    from_space = top.space
    p = s.players[seat]
    s.occ_w[from_space] -= 1
    events.append(
        {"type": "relocated", "seat": seat, "from": _SPACES[from_space].id, "to": a.space}
    )
    eidx = D.ENGINEER_INDEX.get(a.space)
    if eidx is not None:
        p.eng_used |= 1 << eidx
        s.stack.append(Seq(seat, a.space, 0, True))
        return
    idx = D.SPACE_INDEX[a.space]
    sp = _SPACES[idx]
    if sp.repeatable:
        s.rep.append(seat)
        s.occ_w[idx] += 1
    else:
        s.occ[idx] = seat
        s.occ_w[idx] = 1
    if sp.area == "engineer":
        slot = variable_slots(s.num_players)[D.VAR_SPACES.index(idx)]
        s.stack.append(Seq(seat, _ENG_ID[s.strip[slot]]))
    else:
        s.stack.append(Seq(seat, sp.id))


def _do_end_bonus(s: TranssibState, seat: int, a: A.EndBonus, events: list[Event]) -> None:
    s.stack.pop()
    E.take_end_bonus(s, seat, a.index, events)


def _do_done(s: TranssibState, seat: int, a: Action, events: list[Event]) -> None:
    top = s.stack.pop()
    events.append({"type": "done", "seat": seat, "decision": top.NAME})


Handler = Callable[["TranssibState", int, Any, list[Event]], None]
"""``handle(state, seat, action, events)``; the action is of the table key's class (as
for :data:`FrameLegal`)."""

HANDLERS: dict[type[Action], Handler] = {
    A.Place: _do_place,
    A.Pass: _do_pass,
    A.StartBonus: _do_start_bonus,
    A.Track: _do_track,
    A.Loco: _do_loco,
    A.LocoToFactory: _do_loco_to_factory,
    A.Factory: _do_factory,
    A.Industry: _do_industry,
    A.QuestionToken: _do_question_token,
    A.QuestionCard: _do_question_card,
    A.CopySpace: _do_copy,
    A.Relocate: _do_relocate,
    A.EndBonus: _do_end_bonus,
    A.Done: _do_done,
}
