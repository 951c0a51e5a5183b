"""The legal actions of each pending decision and what each action does (§4.2-§12).

``FRAME_LEGAL[kind](state, frame)`` lists the actions of the decision on top of the
stack; ``HANDLERS[action class](state, seat, action, events)`` carries out an action
that ``apply`` has already found in the legal list (so handlers never refuse).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.common.engine import Action
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import locos as L
from services.transsib.engine import placement as P
from services.transsib.engine import track as T
from services.transsib.engine.engineers import variable_slots
from services.transsib.engine.frames import (
    F_HAND,
    F_INDUSTRY,
    F_LOCO,
    F_SEQ,
    F_TRACK,
    FRAME_NAMES,
    LF_BOTH,
    LF_FACTORY,
    LF_LOCO,
)
from services.transsib.engine.player import Player

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_SPACES = D.SPACES
_TOKEN_KEY = tuple(f"token:{t}" for t in D.QUESTION_TOKENS)
_CARD_KEY = tuple(f"card:{c}" for c in D.QUESTION_CARDS)
_ENG_ID = tuple(e.id for e in D.ENGINEERS)
_DONE = A.DONE
_BLACK_TRACK = D.BLACK_TRACK_SPACES


# ---------------------------------------------------------------------- frame legal actions


def _legal_track(s: TranssibState, top: tuple) -> list[Action]:
    _, seat, steps, mask, up_to, done, opt = top
    acts = T.legal_steps(s.players[seat], mask) if steps > 0 else []
    if acts and (opt or (up_to and done >= 1)):
        acts.append(_DONE)
    return acts


def _legal_industry(s: TranssibState, top: tuple) -> list[Action]:
    _, seat, steps, opt, only = top
    p = s.players[seat]
    if (
        steps > 0
        and only < 0
        and p.ind[1] >= 0
        and IND.marker_capacity(s.rules, p, 0) > 0
        and IND.marker_capacity(s.rules, p, 1) > 0
    ):
        return [A.INDUSTRY[0], A.INDUSTRY[1]]
    return []


def _legal_loco(s: TranssibState, top: tuple) -> list[Action]:
    _, seat, mode, ld, fd, opt = top
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


def _legal_hand(s: TranssibState, top: tuple) -> list[Action]:
    _, seat, number, from_line, no_factory, new = top
    p = s.players[seat]
    acts: list[Action] = [A.LOCO_SLOT_ACTION[sl] for sl in L.targets(p, number, from_line)]
    if not new and not L.has_empty_slot(p):
        acts.append(A.LOCO_TO_FACTORY)
    return acts


def _legal_question(s: TranssibState, top: tuple) -> list[Action]:
    seat = top[1]
    p = s.players[seat]
    acts: list[Action] = [
        A.QUESTION_TOKEN[i] for i in range(len(D.QUESTION_TOKENS)) if not (p.tokens_used >> i & 1)
    ]
    if s.opts.question_bonus_choice == "token_or_card":
        for i, there in enumerate(s.qcards):
            if there and s._prog_ok(seat, p, D.QUESTION_CARD_PROGRAMS[i]):
                acts.append(A.QUESTION_CARD[i])
    if acts:
        acts.append(_DONE)
    return acts


def _legal_copy(s: TranssibState, top: tuple) -> list[Action]:
    _, seat, opt = top
    acts: list[Action] = [A.COPY_SPACE[i] for i in s.copy_targets(seat, s.players[seat], bool(opt))]
    if acts and opt:
        acts.append(_DONE)
    return acts


def _legal_end_bonus(s: TranssibState, top: tuple) -> list[Action]:
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
        if prog and not s._prog_ok(seat, p, prog):
            continue
        out.append(sp.id)
    for e in p.engineers:
        if not (p.eng_used >> e & 1) and D.ENGINEERS[e].own_workers == 1:
            out.append(_ENG_ID[e])
    return out


def _legal_relocate(s: TranssibState, top: tuple) -> list[Action]:
    acts: list[Action] = [A.RELOCATE[sid] for sid in relocation_targets(s, top[1])]
    if acts:
        acts.append(_DONE)
    return acts


def _legal_start(s: TranssibState, top: tuple) -> list[Action]:
    return [A.START_BONUS[c] for c in s.start_cards]


FRAME_LEGAL = (
    None,
    _legal_track,
    _legal_industry,
    _legal_loco,
    _legal_hand,
    _legal_question,
    _legal_copy,
    _legal_end_bonus,
    _legal_relocate,
    _legal_start,
)


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


def _do_place(s: TranssibState, seat: int, a: A.Place, events: list) -> None:
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
        s.stack.append((F_SEQ, seat, eng.id, 0, 1))
    else:
        idx = D.SPACE_INDEX[a.space]
        sp = _SPACES[idx]
        w, m, _prog = P.space_cost(s, idx)
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
            s.stack.append((F_SEQ, seat, _ENG_ID[s.strip[slot]], 0, 0))
        elif sp.area == "hire":
            e = s.strip[-1]
            s.strip[-1] = -1
            p.engineers.append(e)
            events.append({"type": "engineer", "seat": seat, "engineer": _ENG_ID[e]})
        else:
            s.stack.append((F_SEQ, seat, sp.id, 0, 0))
    s.in_turn = True
    s.turn_seat = seat


def _do_pass(s: TranssibState, seat: int, a: Action, events: list) -> None:
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


def _do_start_bonus(s: TranssibState, seat: int, a: A.StartBonus, events: list) -> None:
    s.stack.pop()
    s.start_cards.remove(a.card)
    events.append({"type": "start_bonus", "seat": seat, "card": a.card})
    s.stack.append((F_SEQ, seat, "start:" + a.card, 0, 0))


def _do_track(s: TranssibState, seat: int, a: A.Track, events: list) -> None:
    top = s.stack[-1]
    _, _, steps, mask, up_to, done, opt = top
    if steps <= 1:
        s.stack.pop()
    else:
        s.stack[-1] = (F_TRACK, seat, steps - 1, mask, up_to, done + 1, opt)
    T.do_step(s, seat, s.players[seat], D.LINE_INDEX[a.line], D.COLOUR_INDEX[a.colour], events)


def _do_loco(s: TranssibState, seat: int, a: A.Loco, events: list) -> None:
    st = s.stack
    top = st[-1]
    p = s.players[seat]
    slot = A.SLOT_OF_LOCO_ACTION[(a.line, a.slot)]
    if top[0] == F_LOCO:
        _, _, mode, ld, fd, opt = top
        if mode == LF_BOTH and not fd:
            st[-1] = (F_LOCO, seat, mode, 1, fd, opt)
        else:
            st.pop()
        number = L.lowest_supply(s.supply)
        s.supply[number] -= 1
        s.supply_total -= 1
    else:  # F_HAND
        st.pop()
        number = top[2]
    displaced = L.place(s, seat, p, slot, number, events)
    if displaced:
        st.append((F_HAND, seat, displaced, D.LOCO_SLOT_LINE[slot], 0, 0))
    s._check_all_specials(seat, p, events)


def _do_loco_to_factory(s: TranssibState, seat: int, a: Action, events: list) -> None:
    top = s.stack.pop()
    L.return_as_factory(s, seat, top[2], bool(top[4]), events)


def _do_factory(s: TranssibState, seat: int, a: A.Factory, events: list) -> None:
    st = s.stack
    _, _, mode, ld, fd, opt = st[-1]
    if mode == LF_BOTH and not ld:
        st[-1] = (F_LOCO, seat, mode, ld, 1, opt)
    else:
        st.pop()
    L.build_factory(s, seat, s.players[seat], a.number, a.gap, events)


def _do_industry(s: TranssibState, seat: int, a: A.Industry, events: list) -> None:
    _, _, steps, opt, only = s.stack[-1]
    s.stack[-1] = (F_INDUSTRY, seat, steps - 1, opt, only)
    s._industry_step(seat, s.players[seat], a.marker, events)


def _do_question_token(s: TranssibState, seat: int, a: A.QuestionToken, events: list) -> None:
    s.stack.pop()
    i = D.QUESTION_TOKENS.index(a.token)
    s.players[seat].tokens_used |= 1 << i
    events.append({"type": "question_token", "seat": seat, "token": a.token})
    s.stack.append((F_SEQ, seat, _TOKEN_KEY[i], 0, 1))


def _do_question_card(s: TranssibState, seat: int, a: A.QuestionCard, events: list) -> None:
    s.stack.pop()
    i = D.QUESTION_CARDS.index(a.card)
    s.qcards[i] = False
    events.append({"type": "question_card", "seat": seat, "card": a.card})
    s.stack.append((F_SEQ, seat, _CARD_KEY[i], 0, 0))


def _do_copy(s: TranssibState, seat: int, a: A.CopySpace, events: list) -> None:
    _, _, opt = s.stack.pop()
    events.append({"type": "copy_space", "seat": seat, "space": a.space})
    s.stack.append((F_SEQ, seat, a.space, 0, opt))


def _do_relocate(s: TranssibState, seat: int, a: A.Relocate, events: list) -> None:
    _, _, from_space = s.stack.pop()
    p = s.players[seat]
    s.occ_w[from_space] -= 1
    events.append(
        {"type": "relocated", "seat": seat, "from": _SPACES[from_space].id, "to": a.space}
    )
    eidx = D.ENGINEER_INDEX.get(a.space)
    if eidx is not None:
        p.eng_used |= 1 << eidx
        s.stack.append((F_SEQ, seat, a.space, 0, 1))
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
        s.stack.append((F_SEQ, seat, _ENG_ID[s.strip[slot]], 0, 0))
    else:
        s.stack.append((F_SEQ, seat, sp.id, 0, 0))


def _do_end_bonus(s: TranssibState, seat: int, a: A.EndBonus, events: list) -> None:
    s.stack.pop()
    s._take_end_bonus(seat, a.index, events)


def _do_done(s: TranssibState, seat: int, a: Action, events: list) -> None:
    top = s.stack.pop()
    events.append({"type": "done", "seat": seat, "decision": FRAME_NAMES[top[0]]})


HANDLERS = {
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
