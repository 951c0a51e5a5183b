"""The interpreter of action-space effects (§4.2, §4.4, §5-§12).

An effect program (``data.Program``) is a tuple of ops ``(op, a, b, c)``. Each op is
one row of :data:`EFFECTS`, indexed by ``D.OP_*``, holding

* ``run``: how it is carried out (it may push pending decisions, :mod:`.frames`);
* ``feasible``: whether it can be carried out in full now (competed actions, §4.4);
* ``refusal``: the rule's reason when it cannot (None when it can).

:func:`run_next_op` carries out a program one op at a time from its :class:`~.frames.Seq`
frame; :func:`program_ok` and :func:`program_refusal` check a whole program. Adding an op
means adding one :class:`Effect` row (and its ``OP_*`` name in :mod:`.data`).

The other effects the rules trigger (industry steps, line specials, workers gained, end
bonus cards) are here too, as plain functions of the state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from services.kernel.engine import Event
from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import locos as L
from services.transsib.engine import track as T
from services.transsib.engine.frames import (
    LF_BOTH,
    LF_EITHER,
    LF_FACTORY,
    LF_LOCO,
    CopySpace,
    IndustrySteps,
    LocoChoice,
    LocoInHand,
    Question,
    Seq,
    Track,
)
from services.transsib.engine.player import Player
from services.transsib.engine.turn_order import claim_refusal

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_SPACES = D.SPACES
_FACTORY_KEY = tuple(f"factory:{n}" for n in range(D.MAX_LOCO + 1))
_ENG_ID = tuple(e.id for e in D.ENGINEERS)
_new = tuple.__new__
"""Builds a frame record from its field tuple without the record's Python ``__new__`` (hot
paths; same value as calling the record)."""

Events = list[Event]
Run = Callable[["TranssibState", int, Player, int, int, int, str, bool, Events], None]
"""``run(state, seat, player, a, b, c, program key, optional, events)``."""
Feasible = Callable[["TranssibState", int, Player, int, int, int], bool]
"""``feasible(state, seat, player, a, b, c)``."""
Refusal = Callable[["TranssibState", int, Player, int, int, int], "str | None"]
"""``refusal(state, seat, player, a, b, c)``: the reason, or None."""


class Effect(NamedTuple):
    """One op of the effect language: its name (data file), how it runs, whether it can be
    done in full now and why not."""

    name: str
    run: Run
    feasible: Feasible
    refusal: Refusal


def _always(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return True


def _never_refused(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> None:
    return None


def _refused_unless(feasible: Feasible, reason: str) -> Refusal:
    """A refusal that gives ``reason`` whenever ``feasible`` is false."""

    def refusal(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> str | None:
        return None if feasible(s, seat, p, a, b, c) else reason

    return refusal


# ---------------------------------------------------------------------- shared effects


def score(seat: int, p: Player, points: int, why: str, events: Events) -> None:
    """Add ``points`` to ``p``'s score (event ``points`` with the source ``why``)."""
    if points:
        p.score += points
        events.append({"type": "points", "seat": seat, "points": points, "source": why})


def take_doublers(s: TranssibState, seat: int, p: Player, n: int, events: Events) -> None:
    """Up to ``n`` doublers from the supply onto free doubler spaces (§5.4, §9)."""
    room = D.DOUBLER_SPACES - p.doublers
    if s.opts.doubler_supply_limited:
        room = min(room, s.doubler_supply)
    k = min(n, room)
    if k > 0:
        p.doublers += k
        s.doubler_supply -= k
        events.append({"type": "doublers", "seat": seat, "amount": k})


def gain_worker(s: TranssibState, seat: int, p: Player, events: Events) -> None:
    """A permanent worker from the general supply, while any are left for ``p`` (§2, §6.5)."""
    opts = s.opts
    start = D.PLAYER_COUNT[s.num_players]["start_workers"]
    if p.perm_own - start - (
        1 if p.has_black and not opts.black_worker_black_track_only else 0
    ) >= (opts.extra_workers_per_player):
        return
    p.perm_own += 1
    p.own += 1
    p.extra += 1
    events.append({"type": "worker", "seat": seat})


def gain_black_worker(s: TranssibState, seat: int, p: Player, events: Events) -> None:
    """The black worker of its "?" card (§9, option ``black_worker_black_track_only``)."""
    p.has_black = True
    p.extra += 1
    if s.opts.black_worker_black_track_only:
        p.black += 1
    else:
        p.perm_own += 1
        p.own += 1
    events.append({"type": "black_worker", "seat": seat})


def fire_special(
    s: TranssibState, seat: int, p: Player, kind: str, line: int, events: Events
) -> None:
    """The effect of a line special that has just fired (§6.5)."""
    if kind == "worker":
        gain_worker(s, seat, p, events)
    elif kind == "question":
        s.gained.append(Question(seat))
    elif kind == "line_double":
        p.line_double |= 1 << line


def check_all_specials(s: TranssibState, seat: int, p: Player, events: Events) -> None:
    """Fire every line special now fulfilled (after a locomotive moved, §6.5)."""
    for line in range(len(D.LINES)):
        T.check_specials(s, seat, p, line, events)


def run_industry(s: TranssibState, top: IndustrySteps, events: Events) -> bool:
    """Take the next industry step automatically; False if the player must pick
    which of two markers moves (§8.2, §8.3)."""
    seat, steps, only = top.seat, top.steps, top.only
    st = s.stack
    if steps <= 0:
        st.pop()
        return True
    p = s.players[seat]
    rules = s.rules
    m0 = (only < 1) and IND.marker_capacity(rules, p, 0) > 0
    m1 = (only != 0) and p.ind[1] >= 0 and IND.marker_capacity(rules, p, 1) > 0
    if m0 and m1:
        return False
    if not (m0 or m1):
        st.pop()  # §8.2: a step into an empty gap (or past the end) is lost
        if steps:
            events.append({"type": "industry_steps_lost", "seat": seat, "steps": steps})
        return True
    st[-1] = _new(IndustrySteps, (seat, steps - 1, top.optional, only))
    industry_step(s, seat, p, 0 if m0 else 1, events)
    return True


def industry_step(s: TranssibState, seat: int, p: Player, marker: int, events: Events) -> None:
    """Move industry marker ``marker`` one field; a factory entered acts at once (§8.2)."""
    rules = s.rules
    new = p.ind[marker] + 1
    p.ind[marker] = new
    p.indcap = -1
    gap = rules.gap_of_field[new]
    number = p.factories[gap] if gap >= 0 else 0
    events.append(
        {"type": "industry", "seat": seat, "marker": marker, "to": new, "factory": number}
    )
    for k, (field, kind) in enumerate(rules.industry_specials):
        if field == new and not (p.ind_fired >> k & 1):
            p.ind_fired |= 1 << k
            if kind == "question":
                s.gained.append(Question(seat))
    if number:
        # §8.2: the factory's action at once, before the next step (optional, §4.4)
        s.stack.append(Seq(seat, _FACTORY_KEY[number], 0, True))


def take_end_bonus(s: TranssibState, seat: int, index: int, events: Events) -> None:
    """Card ``index`` of the end bonus pile to ``seat`` (§15.1; the pile is reshuffled
    after a free choice, option ``end_bonus_selection``)."""
    card = s.deck.pop(index)
    s.players[seat].eb.append(card)
    if s.opts.end_bonus_selection == "choose":
        s.rng.shuffle(s.deck)  # the pile goes back face down, shuffled
    events.append({"type": "end_bonus_taken", "seat": seat})


def copy_targets(s: TranssibState, seat: int, p: Player, optional: bool) -> list[int]:
    """Occupied board spaces whose action may be copied (§7.5, §10.4)."""
    out = []
    occ = s.occ
    for idx in s.spaces:
        sp = _SPACES[idx]
        if not sp.copyable:
            continue
        if occ[idx] < 0 and not (idx == D.REP_SPACE and s.rep):
            continue
        if optional or program_ok(s, seat, p, sp.program):
            out.append(idx)
    return out


# ---------------------------------------------------------------------- the ops


def _track_need(s: TranssibState, a: int, c: int) -> int:
    """Steps a competed track op must be able to make (§4.4, option
    ``track_board_steps_may_be_lost``)."""
    if c or s.opts.track_board_steps_may_be_lost:
        return 1
    return a


def _run_track(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    s.stack.append(_new(Track, (seat, a, b, bool(c), 0, opt)))


def _ok_track(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    need = 1 if c or s.opts.track_board_steps_may_be_lost else a  # as _track_need
    return T.can_make(p, b, need, s.rules.track_gap)


def _why_track(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> str | None:
    need = _track_need(s, a, c)
    cap = T.capacity(p, b, s.rules.track_gap)
    if cap < need:
        cols = "/".join(D.COLOURS[i] for i in range(5) if b >> i & 1)
        return f"§4.4, §5.1: only {cap} {cols} step(s) can be made, the action needs {need}"
    return None


def _run_industry(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    if a:
        s.stack.append(_new(IndustrySteps, (seat, a, opt, -1)))


def _industry_need(s: TranssibState, a: int) -> int:
    return 1 if s.opts.industry_board_steps_may_be_lost else a


def _ok_industry(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    need = 1 if s.opts.industry_board_steps_may_be_lost else a  # as _industry_need
    return IND.capacity(s.rules, p) >= need


def _why_industry(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> str | None:
    cap = IND.capacity(s.rules, p)
    need = _industry_need(s, a)
    if cap < need:
        return (
            f"§4.4, §8.1: the industry markers can take only {cap} step(s) "
            f"(an empty factory gap blocks them), the action needs {need}"
        )
    return None


def _loco_runner(mode: int) -> Run:
    def run(
        s: TranssibState,
        seat: int,
        p: Player,
        a: int,
        b: int,
        c: int,
        key: str,
        opt: bool,
        events: Events,
    ) -> None:
        s.stack.append(_new(LocoChoice, (seat, mode, False, False, opt)))

    return run


_LOCO_WHY = (
    "§4.4, §7: no locomotive can be taken and placed and/or no factory can be built as "
    "this action requires"
)


def _ok_loco_or_factory(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return L.can_take_factory(s) or L.can_take_loco(s, p)


def _ok_loco_and_factory(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return L.can_loco_and_factory(s, p)


def _why_loco_and_factory(
    s: TranssibState, seat: int, p: Player, a: int, b: int, c: int
) -> str | None:
    if L.can_loco_and_factory(s, p):
        return None
    if not L.lowest_supply(s.supply):
        return "§5.2 (seed p.10): L-3 needs a locomotive left in the supply"
    return _LOCO_WHY


def _ok_loco(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return L.can_take_loco(s, p)


def _ok_factory(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return L.can_take_factory(s)


def _run_doublers(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    take_doublers(s, seat, p, a, events)


def _ok_doublers(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    if D.DOUBLER_SPACES - p.doublers < a:
        return False
    return not (s.opts.doubler_supply_limited and s.doubler_supply < a)


def _run_coins(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    p.coins += a
    events.append({"type": "coins", "seat": seat, "amount": a})


def _run_points(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    score(seat, p, a, key, events)


def _run_temp_workers(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    if s.temp_on_space:
        s.temp_on_space = False
        p.temp += D.TEMP_WORKERS
        events.append({"type": "temp_workers", "seat": seat, "amount": D.TEMP_WORKERS})


def _ok_temp_workers(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return bool(s.temp_on_space)


def _run_worker(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    for _ in range(a):
        gain_worker(s, seat, p, events)


def _run_question(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    s.stack.append(Question(seat))


def _run_end_bonus(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    s.eb_pending[seat] += 1
    events.append({"type": "end_bonus_due", "seat": seat})


def _ok_end_bonus(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return len(s.deck) - sum(s.eb_pending) >= 1


def _run_claim(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    s.claims[a - 1] = seat
    events.append({"type": "claim", "seat": seat, "position": a})


def _ok_claim(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return not claim_refusal(s.order, s.claims, seat, a, s.num_players, s.opts)


def _why_claim(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> str | None:
    why = claim_refusal(s.order, s.claims, seat, a, s.num_players, s.opts)
    return why[1] if why else None


def _run_copy(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    s.stack.append(CopySpace(seat, opt))


def _ok_copy(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return bool(copy_targets(s, seat, p, False))


def _run_top2(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    score(seat, p, sum(sorted(p.locos, reverse=True)[:2]), key, events)


def _run_engineer_sum(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    score(seat, p, sum(D.ENGINEERS[e].number for e in p.engineers), key, events)


def _run_revaluation(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    p.revalued = True
    events.append({"type": "revaluation", "seat": seat})


def _run_medal(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    p.medal = True
    events.append({"type": "kiev_medal", "seat": seat})


def _run_second_marker(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    if p.ind[1] < 0:
        p.ind[1] = s.rules.start_field
        p.indcap = -1
        events.append({"type": "second_industry_marker", "seat": seat})
        steps = s.opts.second_marker_activation_steps
        if steps:
            s.stack.append(IndustrySteps(seat, steps, True, 1))


def _run_black_worker(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    gain_black_worker(s, seat, p, events)


def _run_loco9(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    s.stack.append(LocoInHand(seat, 9, -1, True, True))


def _ok_loco9(s: TranssibState, seat: int, p: Player, a: int, b: int, c: int) -> bool:
    return bool(L.targets(p, 9, -1))


def _run_letterless(
    s: TranssibState,
    seat: int,
    p: Player,
    a: int,
    b: int,
    c: int,
    key: str,
    opt: bool,
    events: Events,
) -> None:
    p.engineers.append(D.LETTERLESS)
    events.append({"type": "engineer", "seat": seat, "engineer": _ENG_ID[D.LETTERLESS]})


def _plain(name: str, run: Run) -> Effect:
    """A row for an op that can always be carried out."""
    return Effect(name, run, _always, _never_refused)


def _checked(name: str, run: Run, feasible: Feasible, reason: str) -> Effect:
    return Effect(name, run, feasible, _refused_unless(feasible, reason))


_ROWS: dict[int, Effect] = {
    D.OP_TRACK: Effect("track", _run_track, _ok_track, _why_track),
    D.OP_INDUSTRY: Effect("industry", _run_industry, _ok_industry, _why_industry),
    D.OP_LOCO_OR_FACTORY: _checked(
        "loco_or_factory", _loco_runner(LF_EITHER), _ok_loco_or_factory, _LOCO_WHY
    ),
    D.OP_LOCO_AND_FACTORY: Effect(
        "loco_and_factory", _loco_runner(LF_BOTH), _ok_loco_and_factory, _why_loco_and_factory
    ),
    D.OP_LOCO: _checked("loco", _loco_runner(LF_LOCO), _ok_loco, _LOCO_WHY),
    D.OP_FACTORY: _checked("factory", _loco_runner(LF_FACTORY), _ok_factory, _LOCO_WHY),
    D.OP_DOUBLERS: _checked(
        "doublers",
        _run_doublers,
        _ok_doublers,
        "§5.4: no free doubler space (or the doubler supply is empty)",
    ),
    D.OP_COINS: _plain("coins", _run_coins),
    D.OP_POINTS: _plain("points", _run_points),
    D.OP_TEMP_WORKERS: _checked(
        "temp_workers",
        _run_temp_workers,
        _ok_temp_workers,
        "§5.4: the turquoise workers were already taken this round",
    ),
    D.OP_WORKER: _plain("worker", _run_worker),
    D.OP_QUESTION: _plain("question", _run_question),
    D.OP_END_BONUS: _checked(
        "end_bonus", _run_end_bonus, _ok_end_bonus, "§15.1: the end bonus pile is empty"
    ),
    D.OP_CLAIM: Effect("claim", _run_claim, _ok_claim, _why_claim),
    D.OP_COPY_SPACE: _checked(
        "copy_space",
        _run_copy,
        _ok_copy,
        "§4.4: no occupied action space can be carried out in full",
    ),
    D.OP_POINTS_TOP2_LOCOS: _plain("points_top2_locos", _run_top2),
    D.OP_POINTS_ENGINEER_SUM: _plain("points_engineer_sum", _run_engineer_sum),
    D.OP_REVALUATION: _plain("revaluation", _run_revaluation),
    D.OP_KIEV_MEDAL: _plain("kiev_medal", _run_medal),
    D.OP_SECOND_MARKER: _plain("second_industry_marker", _run_second_marker),
    D.OP_BLACK_WORKER: _plain("black_worker", _run_black_worker),
    D.OP_LOCO9: _checked(
        "loco9", _run_loco9, _ok_loco9, "§7.2: the #9 locomotive has no slot to go on"
    ),
    D.OP_LETTERLESS_ENGINEER: _plain("letterless_engineer", _run_letterless),
}
EFFECTS: tuple[Effect, ...] = tuple(_ROWS[op] for op in range(len(_ROWS)))
"""The row of each op, indexed by ``D.OP_*``."""
RUN = tuple(e.run for e in EFFECTS)
"""The ``run`` of each op, indexed by ``D.OP_*``."""
_RUN = RUN
_FEASIBLE = tuple(e.feasible for e in EFFECTS)
_REFUSAL = tuple(e.refusal for e in EFFECTS)


# ---------------------------------------------------------------------- programs


def run_next_op(s: TranssibState, top: Seq, events: Events) -> None:
    """Carry out the next op of the program of ``top`` (the top frame; §4.2: at once and
    in full), or pop the frame when the program is done."""
    seat, key, i, opt = top
    prog = s.rules.programs[key]
    st = s.stack
    if i >= len(prog):
        st.pop()
        return
    st[-1] = _new(Seq, (seat, key, i + 1, opt))
    op, a, b, c = prog[i]
    _RUN[op](s, seat, s.players[seat], a, b, c, key, opt, events)


_Checks = tuple[tuple[Feasible, int, int, int], ...]
_CHECKS: dict[int, tuple[D.Program, _Checks]] = {}
"""Per program (by identity; the program is kept in the entry so its id stays its own),
the feasibility checks of its ops that can fail (memo: hashing a program costs more than
checking it)."""


def program_checks(prog: D.Program) -> tuple[tuple[Feasible, int, int, int], ...]:
    """The feasibility checks of ``prog``'s ops that can fail, as ``(feasible, a, b, c)``
    (memoised; empty when the program can always be carried out in full)."""
    entry = _CHECKS.get(id(prog))
    if entry is None:
        checks = tuple(
            (_FEASIBLE[op], a, b, c) for op, a, b, c in prog if _FEASIBLE[op] is not _always
        )
        entry = _CHECKS[id(prog)] = (prog, checks)
    return entry[1]


def program_ok(s: TranssibState, seat: int, p: Player, prog: D.Program) -> bool:
    """Whether a competed program can be carried out in full now (§4.4)."""
    entry = _CHECKS.get(id(prog))
    checks = entry[1] if entry is not None else program_checks(prog)
    for feasible, a, b, c in checks:
        if not feasible(s, seat, p, a, b, c):
            return False
    return True


def program_refusal(s: TranssibState, seat: int, p: Player, prog: D.Program) -> str | None:
    """The reason a competed program cannot be done in full (None if it can)."""
    for op, a, b, c in prog:
        why = _REFUSAL[op](s, seat, p, a, b, c)
        if why:
            return why
    return None
