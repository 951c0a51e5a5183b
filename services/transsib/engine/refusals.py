"""Reasons for refused actions (the slow path of ``apply``).

``apply`` accepts exactly the actions ``legal_actions`` lists. For anything else
:func:`refuse` raises :class:`MalformedAction` (ids or values that do not exist)
or :class:`IllegalAction` with the code and the rule (spec section) that forbids
it now. It never changes the state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, cast

from services.kernel.engine import Action, IllegalAction, MalformedAction
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import effects as E
from services.transsib.engine import locos as L
from services.transsib.engine import placement as P
from services.transsib.engine import track as T
from services.transsib.engine.decisions import gained_early
from services.transsib.engine.frames import LF_BOTH, LF_FACTORY, LF_LOCO, LocoInHand, Track
from services.transsib.engine.turn_order import claim_refusal

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_DECISION_TYPES = {
    "effects": (),
    "track": ("track", "done"),
    "industry": ("industry",),
    "loco_choice": ("loco", "factory", "done"),
    "loco_in_hand": ("loco", "loco_to_factory"),
    "question": ("question_token", "question_card", "done"),
    "copy_space": ("copy_space", "done"),
    "end_bonus": ("end_bonus",),
    "relocate": ("relocate", "done"),
    "start_bonus": ("start_bonus",),
    "main": ("place", "pass"),
}


_QUESTION_TYPES = ("question_token", "question_card")


def _fail(code: str, reason: str) -> NoReturn:
    raise IllegalAction(code, reason)


def refuse(s: TranssibState, seat: int, action: Any) -> None:
    """Raise the reason ``action`` by ``seat`` is refused now."""
    if not isinstance(action, Action) or action.__class__ not in A.ACTION_CLASSES:
        raise MalformedAction("bad_action", f"not a transsib action: {action!r}")
    _check_ids(action)
    decision = s.stack[-1].NAME if s.stack else "main"
    allowed = _DECISION_TYPES[decision]
    if action.TYPE in _QUESTION_TYPES and gained_early(s, seat):
        _refuse_question(s, seat, action)  # §4.4 any order: a gained "?" taken early
    elif action.TYPE not in allowed:
        _fail(
            "wrong_decision",
            f"§4.2: the pending decision is '{decision}', which takes "
            f"{', '.join(allowed)}, not {action.TYPE}",
        )
    if decision == "main":
        _refuse_place(s, seat, action)
    elif decision == "track":
        _refuse_track(s, seat, action)
    elif decision in ("loco_choice", "loco_in_hand"):
        _refuse_loco(s, seat, action, decision)
    elif decision == "question":
        _refuse_question(s, seat, action)
    elif decision == "relocate":
        _fail(
            "relocation_target",
            f"§11.3: the turn-order worker may only move to an empty 1-worker space "
            f"(not a turn-order space, no coin added) whose action can be done in full; "
            f"{getattr(action, 'space', '')} is not one",
        )
    elif decision == "copy_space":
        _fail(
            "copy_target",
            "§7.5, §10.4: only an occupied board action space (not turn order, engineers "
            "or temporary workers) that can be carried out in full may be reused",
        )
    elif decision == "end_bonus":
        _fail("end_bonus_index", f"§15.1: the pile has {len(s.deck)} cards")
    elif decision == "start_bonus":
        _fail(
            "start_bonus_taken",
            f"§3.3: that starting bonus card is gone; left: {', '.join(s.start_cards)}",
        )
    if isinstance(action, A.Done):
        _fail(
            "action_incomplete",
            "§4.2, §4.4: a competed action must be carried out in full; it cannot be stopped here",
        )
    _fail("not_legal_now", f"{action} is not legal in the current decision ({decision})")


def _check_ids(a: Action) -> None:
    """MalformedAction for ids and values that do not exist at all."""
    if isinstance(a, A.Place):
        if a.space not in D.SPACE_INDEX and a.space not in D.ENGINEER_INDEX:
            raise MalformedAction("unknown_space", f"no action space or engineer {a.space!r}")
        if a.coins < 0:
            raise MalformedAction("bad_field", "place.coins must be >= 0")
    elif isinstance(a, A.Track):
        if a.line not in D.LINE_INDEX:
            raise MalformedAction(
                "unknown_line", f"no line {a.line!r}; lines: {', '.join(D.LINES)}"
            )
        if a.colour not in D.COLOUR_INDEX:
            raise MalformedAction(
                "unknown_colour", f"no colour {a.colour!r}; colours: {', '.join(D.COLOURS)}"
            )
    elif isinstance(a, A.Loco):
        if a.line not in D.LINE_INDEX:
            raise MalformedAction("unknown_line", f"no line {a.line!r}")
        if not 0 <= a.slot < len(D.LINE_SLOTS[D.LINE_INDEX[a.line]]):
            raise MalformedAction("bad_slot", f"{a.line} has no locomotive slot {a.slot}")
    elif isinstance(a, A.Factory):
        if not 1 <= a.number <= D.MAX_LOCO:
            raise MalformedAction("bad_factory", f"no factory #{a.number}")
        if not 0 <= a.gap < D.NUM_GAPS:
            raise MalformedAction("bad_gap", f"no factory gap {a.gap} (0..{D.NUM_GAPS - 1})")
    elif isinstance(a, A.Industry):
        if a.marker not in (0, 1):
            raise MalformedAction("bad_marker", "industry.marker is 0 or 1")
    elif isinstance(a, A.QuestionToken):
        if a.token not in D.QUESTION_TOKENS:
            raise MalformedAction("unknown_token", f"no '?' token {a.token!r}")
    elif isinstance(a, A.QuestionCard):
        if a.card not in D.QUESTION_CARDS:
            raise MalformedAction("unknown_card", f"no '?' card {a.card!r}")
    elif isinstance(a, (A.CopySpace,)):
        if a.space not in D.SPACE_INDEX:
            raise MalformedAction("unknown_space", f"no action space {a.space!r}")
    elif isinstance(a, A.Relocate):
        if a.space not in D.SPACE_INDEX and a.space not in D.ENGINEER_INDEX:
            raise MalformedAction("unknown_space", f"no action space or engineer {a.space!r}")
    elif isinstance(a, A.EndBonus):
        if a.index < 0:
            raise MalformedAction("bad_field", "end_bonus.index must be >= 0")
    elif isinstance(a, A.StartBonus):
        if a.card not in D.START_BONUS_CARDS:
            raise MalformedAction("unknown_card", f"no starting bonus card {a.card!r}")


def _refuse_place(s: TranssibState, seat: int, a: Action) -> None:
    if not isinstance(a, A.Place):
        return
    p = s.players[seat]
    opts = s.opts
    eidx = D.ENGINEER_INDEX.get(a.space)
    if eidx is not None:
        if eidx not in p.engineers:
            _fail("not_your_engineer", f"§10.2: {a.space} is not one of your hired engineers")
        if p.eng_used >> eidx & 1:
            _fail("engineer_used", f"§10.2: you already used {a.space} this round")
        w, m, idx = D.ENGINEERS[eidx].own_workers, 0, -1
    else:
        idx = D.SPACE_INDEX[a.space]
        sp = D.SPACES[idx]
        if idx not in s.spaces:
            if s.num_players == 2 and sp.in_2p is not True:
                _fail("not_on_board", f"§16: {a.space} is not on the 2-player board side")
            if sp.area == "turn_order":
                _fail("covered", "§14.2: the last-round tile covers the turn-order spaces")
            _fail("not_on_board", f"§5, §14.2: {a.space} is not on the board this round")
        if s.occ[idx] >= 0 and not sp.repeatable:
            _fail(
                "space_occupied",
                f"§4.2: {a.space} is occupied (only T-REP may be used again in a round)",
            )
        cost = P.space_cost(s, idx)
        if cost is None:
            _fail("no_engineer", f"§10: there is no engineer on {a.space} now")
        w, m, prog = cost
    if a.coins > w:
        _fail(
            "too_many_coins",
            f"§4.3: {a.space} needs {w} worker(s); coins stand in for at most that many",
        )
    if a.coins and not opts.coins_substitute_workers:
        _fail("coin_substitution", "§4.3: coins may not stand in for workers (option)")
    if a.coins and w > 1 and not opts.coins_on_multi_worker_spaces:
        _fail("coin_substitution", "§4.3: coins only stand in on 1-worker spaces (option)")
    if 0 < a.coins < w and not opts.coins_mixing_allowed:
        _fail("coin_substitution", "§4.3: coins and workers may not be mixed on a space (option)")
    if p.coins < a.coins + m:
        _fail(
            "too_few_coins",
            f"§4.3, §5: {a.space} needs {a.coins + m} coin(s) here; you have {p.coins}",
        )
    avail = p.own + p.temp + (p.black if idx in D.BLACK_TRACK_SPACES else 0)
    if avail < w - a.coins:
        _fail(
            "too_few_workers",
            f"§4.2: {a.space} needs exactly {w} worker(s) ({a.coins} coin(s) standing in); "
            f"you have {avail} free",
        )
    if eidx is None:
        why = E.program_refusal(s, seat, p, prog)
        if why:
            code = "not_performable"
            if "§5.5" in why:
                claim = claim_refusal(
                    s.order, s.claims, seat, 1 if a.space == "O-1" else 2, s.num_players, opts
                )
                if claim is not None:
                    code = claim[0]
            _fail(code, why)


def _refuse_track(s: TranssibState, seat: int, a: Action) -> None:
    top = cast(Track, s.stack[-1])  # called on a Track decision only
    if isinstance(a, A.Track):
        line, colour = D.LINE_INDEX[a.line], D.COLOUR_INDEX[a.colour]
        mask = top.colours
        if not (mask >> colour & 1):
            allowed = "/".join(D.COLOURS[i] for i in range(5) if mask >> i & 1)
            _fail("colour_not_allowed", f"§5.1: this action moves {allowed} rails, not {a.colour}")
        why = T.step_refusal(s.players[seat], line, colour, s.rules.track_gap)
        if why:
            _fail(*why)


def _refuse_loco(s: TranssibState, seat: int, a: Action, decision: str) -> None:
    top: Any = s.stack[-1]
    p = s.players[seat]
    in_hand = top.__class__ is LocoInHand
    if isinstance(a, A.Loco):
        slot = A.SLOT_OF_LOCO_ACTION[(a.line, a.slot)]
        if in_hand:
            number, from_line = top.number, top.from_line
        else:
            if top.mode == LF_FACTORY or top.loco_done:
                _fail("no_loco_here", "§5.2: this action gives no (further) locomotive")
            number, from_line = L.lowest_supply(s.supply), -1
            if not number:
                _fail("no_loco_left", "§7.1: no locomotive is left in the supply")
        why = L.target_refusal(p, number, from_line, slot)
        if why:
            _fail(*why)
        if not in_hand and top.mode == LF_BOTH:
            _fail(
                "action_incomplete",
                "§5.2, §4.4: this placement would leave no factory to build for L-3",
            )
    elif isinstance(a, A.LocoToFactory):
        if not in_hand:
            _fail("wrong_decision", "§7.3: no displaced locomotive is waiting")
        if L.has_empty_slot(p):
            _fail(
                "slot_empty_must_place",
                "§7.3: while any locomotive slot is empty the displaced locomotive must be placed",
            )
        _fail("new_loco_must_be_placed", "§7.2: a new locomotive must be placed")
    elif isinstance(a, A.Factory):
        if top.mode == LF_LOCO or top.factory_done:
            _fail("no_factory_here", "§5.2: this action builds no (further) factory")
        if a.number not in L.factory_tiles(s):
            _fail(
                "factory_not_available",
                f"§7.1: factory #{a.number} is neither the lowest locomotive of the supply "
                f"nor a returned factory",
            )
        gaps = L.factory_gaps(p)
        if a.gap not in gaps:
            _fail(
                "factory_gap_order",
                f"§7.4: factory gaps are filled left to right; the next one is gap {gaps[0]}",
            )
        if top.mode == LF_BOTH:
            _fail(
                "action_incomplete",
                "§5.2, §4.4: taking the last locomotive as a factory would leave none for L-3",
            )


def _refuse_question(s: TranssibState, seat: int, a: Action) -> None:
    p = s.players[seat]
    if isinstance(a, A.QuestionToken):
        i = D.QUESTION_TOKENS.index(a.token)
        if p.tokens_used >> i & 1:
            _fail("token_used", f"§12.2: your '?' token {a.token} is already used")
    elif isinstance(a, A.QuestionCard):
        i = D.QUESTION_CARDS.index(a.card)
        if s.opts.question_bonus_choice != "token_or_card":
            _fail(
                "cards_not_offered",
                "§12.1: '?' cards are not offered (option question_bonus_choice)",
            )
        if not s.qcards[i]:
            _fail("card_taken", f"§12.4: the '?' card {a.card} has been taken")
        why = E.program_refusal(s, seat, p, D.QUESTION_CARD_PROGRAMS[i])
        _fail("not_performable", why or "§4.4: the card cannot be carried out in full")
