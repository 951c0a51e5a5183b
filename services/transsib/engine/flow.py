"""The turn flow of Russian Railroads (§3.3, §4.1, §11.3, §13-§15).

Flow: starting bonus picks (4th, 3rd, 2nd position, §3.3) -> rounds of action phase
(§4.1: in turn order, place workers on one space or pass), worker relocation
(§11.3), scoring (§13) and cleanup (§14); after the last round the final scoring
(§15).

:func:`settle` runs the automatic steps after every action (effect programs through
:mod:`.effects`, automatic industry steps, gained bonuses, end bonus cards at the end
of the turn, the next player) until a seat must decide, and caches that seat's legal
actions on the state (``legal``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, Result
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import effects as E
from services.transsib.engine import locos as L
from services.transsib.engine import placement as P
from services.transsib.engine import scoring as S
from services.transsib.engine.decisions import FRAME_LEGAL, gained_choices
from services.transsib.engine.engineers import shift, slot_kinds
from services.transsib.engine.frames import (
    PH_ACTIONS,
    PH_OVER,
    PH_RELOCATE,
    PH_START,
    EndBonus,
    IndustrySteps,
    LocoInHand,
    Relocate,
    Seq,
    StartBonus,
)
from services.transsib.engine.turn_order import rearrange

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_ENG_ID = tuple(e.id for e in D.ENGINEERS)
_RUN = E.RUN
_new = tuple.__new__  # a frame record from its field tuple (hot path)
_run_industry = E.run_industry
_main_legal = P.main_legal
_DONE = A.DONE
_LOCO_TO_FACTORY = A.LOCO_TO_FACTORY


def settle(s: TranssibState, events: list[Event]) -> None:
    """Run automatic steps until a seat must decide (or the game ends), then cache that
    seat's legal actions (``s.active``, ``s.legal``)."""
    st = s.stack
    programs = s.rules.programs
    players = s.players
    while True:
        if st:
            top = st[-1]
            cls = type(top)  # type(x) is C narrows for the type check and is as fast as x.__class__
            if type(top) is Seq:
                # effects.run_next_op, inlined (the hottest step of the flow)
                seat, key, i, opt = top
                prog = programs[key]
                if i >= len(prog):
                    st.pop()
                    continue
                st[-1] = _new(Seq, (seat, key, i + 1, opt))
                op, a, b, c = prog[i]
                _RUN[op](s, seat, players[seat], a, b, c, key, opt, events)
                continue
            if type(top) is IndustrySteps and _run_industry(s, top, events):
                continue
            legal = FRAME_LEGAL[cls](s, top)
            if not legal or (len(legal) == 1 and legal[0] is _DONE):
                st.pop()
                continue
            if type(top) is LocoInHand and len(legal) == 1 and legal[0] is _LOCO_TO_FACTORY:
                st.pop()  # §7.3: it cannot be placed anywhere: flipped to a factory
                L.return_as_factory(s, top.seat, top.number, top.no_factory, events)
                continue
            if s.gained and s.rules.gained_any_order:
                legal = legal + gained_choices(s, top)
            s.active = top.seat
            s.legal = legal
            return
        if s.gained:
            st.append(s.gained.pop(0))
            continue
        if s.in_turn:
            seat = s.turn_seat
            if s.eb_pending[seat]:
                s.eb_pending[seat] -= 1
                if s.deck:
                    if s.opts.end_bonus_selection == "draw_top":
                        E.take_end_bonus(s, seat, len(s.deck) - 1, events)
                    else:
                        st.append(EndBonus(seat))
                continue
            s.in_turn = False
            next_turn(s, events)
            continue
        if s.phase == PH_OVER:
            s.active = -1
            s.legal = []
            return
        seat = s.order[s.cur]
        s.active = seat
        s.legal = _main_legal(s, seat)
        return


def decision_legal(s: TranssibState) -> list[Action]:
    """The legal actions of the current decision, computed afresh (no mutation)."""
    if s.stack:
        top = s.stack[-1]
        legal = FRAME_LEGAL[top.__class__](s, top)
        if legal and s.gained and s.rules.gained_any_order:
            legal = legal + gained_choices(s, top)
        return legal
    if s.phase == PH_ACTIONS and not s.in_turn:
        return P.main_legal(s, s.order[s.cur])
    return []


def begin_turn(s: TranssibState, seat: int) -> None:
    """``seat``'s turn starts (its pending decisions and end bonus cards belong to it)."""
    s.in_turn = True
    s.turn_seat = seat


def next_turn(s: TranssibState, events: list[Event]) -> None:
    """After a turn: the next picker, the next player to act, the relocation or
    the end of the round."""
    if s.phase == PH_START:
        s.start_queue.pop(0)
        if s.start_queue:
            seat = s.start_queue[0]
            s.stack.append(StartBonus(seat))
            begin_turn(s, seat)
        else:
            s.phase = PH_ACTIONS
            s.cur = 0
        return
    if s.phase == PH_ACTIONS:
        n = s.num_players
        order = s.order
        passed = s.passed
        for k in range(1, n + 1):
            j = (s.cur + k) % n
            if not passed[order[j]]:
                s.cur = j
                return
        # §4.1: everyone has passed -> relocation (§11.3), scoring, cleanup
        s.phase = PH_RELOCATE
        queue = []
        for position, space in ((2, D.O2_SPACE), (1, D.O1_SPACE)):
            seat = s.claims[position - 1]
            if seat >= 0 and s.occ_w[space] >= 1:
                queue.append((seat, space))
        s.reloc_queue = queue
        _continue_relocation(s, events)
        return
    if s.phase == PH_RELOCATE:
        s.reloc_queue.pop(0)
        _continue_relocation(s, events)


def _continue_relocation(s: TranssibState, events: list[Event]) -> None:
    if s.reloc_queue:
        seat, space = s.reloc_queue[0]
        s.stack.append(Relocate(seat, space))
        begin_turn(s, seat)
    else:
        end_round(s, events)


def end_round(s: TranssibState, events: list[Event]) -> None:
    """Scoring (§13) then cleanup (§14) or the final scoring (§15)."""
    rules = s.rules
    points = []
    for p in s.players:
        pts = S.round_points(rules, p)
        p.score += pts
        points.append(pts)
    events.append({"type": "round_scored", "round": s.round, "points": points})
    if s.round >= s.rounds:
        final_scoring(s, events)
        return
    # §14.1 cleanup
    s.order = rearrange(s.order, s.claims[0], s.claims[1])
    for p in s.players:
        p.own += p.placed_own
        p.placed_own = 0
        p.black += p.placed_black
        p.placed_black = 0
        p.temp = 0
        p.placed_temp = 0
        p.eng_used = 0
    s.temp_on_space = True
    s.occ = [-1] * D.NUM_SPACES
    s.occ_w = [0] * D.NUM_SPACES
    s.occ_c = [0] * D.NUM_SPACES
    s.rep = []
    s.claims = [-1, -1]
    s.passed = [False] * s.num_players
    s.strip, left = shift(s.strip)
    if left >= 0:
        s.gone.append(left)
    kinds = slot_kinds(s.num_players)
    revealed = [
        _ENG_ID[e] for e, kind in zip(s.strip, kinds, strict=True) if e >= 0 and kind == "variable"
    ]
    events.append(
        {
            "type": "new_round",
            "round": s.round + 1,
            "order": s.order[:],
            "engineer_left": _ENG_ID[left] if left >= 0 else "",
            "variable_engineers": revealed,
        }
    )
    s.round += 1
    s.refresh_spaces()
    s.phase = PH_ACTIONS
    s.cur = 0


def final_scoring(s: TranssibState, events: list[Event]) -> None:
    """§15: end bonus cards, then the engineer majority; most points wins."""
    breakdown = S.final_breakdown(s.rules, s.players, s.num_players)
    for p, fb in zip(s.players, breakdown, strict=True):
        p.score += sum(fb["end_bonus"].values()) + fb["majority"]
    s.final = breakdown
    scores = [p.score for p in s.players]
    s.outcome = Result.from_scores(scores, "final_round_scored")
    s.phase = PH_OVER
    events.append(
        {
            "type": "game_over",
            "scores": scores,
            "end_bonus_cards": [[D.END_BONUS_IDS[c] for c in p.eb] for p in s.players],
            "end_bonus_points": [sum(fb["end_bonus"].values()) for fb in breakdown],
            "majority_points": [fb["majority"] for fb in breakdown],
        }
    )
