"""The game state of Russian Railroads and its flow (§3 setup, §4 rounds and turns).

Flow: starting bonus picks (4th, 3rd, 2nd position, §3.3) -> rounds of action phase
(§4.1: in turn order, place workers on one space or pass), worker relocation
(§11.3), scoring (§13) and cleanup (§14); after the last round the final scoring
(§15).

The pending decisions of a turn are frames on ``stack`` (see :mod:`.frames`);
the legal actions and effects of each are in :mod:`.decisions`; board spaces,
costs and the placements of the action phase in :mod:`.placement`.
"""

from __future__ import annotations

from typing import Any

from services.common.engine import Action, IllegalAction, Result, State
from services.common.rng import SeededRandom
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import locos as L
from services.transsib.engine import placement as P
from services.transsib.engine import scoring as S
from services.transsib.engine import track as T
from services.transsib.engine.decisions import FRAME_LEGAL, HANDLERS
from services.transsib.engine.engineers import setup_strip, shift, slot_kinds, variable_slots
from services.transsib.engine.frames import (
    F_COPY,
    F_END_BONUS,
    F_HAND,
    F_INDUSTRY,
    F_LOCO,
    F_QUESTION,
    F_RELOCATE,
    F_SEQ,
    F_START,
    F_TRACK,
    LF_BOTH,
    LF_EITHER,
    LF_FACTORY,
    LF_LOCO,
    PH_ACTIONS,
    PH_OVER,
    PH_RELOCATE,
    PH_START,
)
from services.transsib.engine.options import Rules
from services.transsib.engine.player import Player
from services.transsib.engine.turn_order import claim_refusal, rearrange

_SPACES = D.SPACES
_FACTORY_KEY = tuple(f"factory:{n}" for n in range(D.MAX_LOCO + 1))
_ENG_ID = tuple(e.id for e in D.ENGINEERS)
_DONE = A.DONE


class TranssibState(State):
    """A position of Russian Railroads (see the module docstring for the flow).

    Global attributes (all public, unless noted): ``round`` (1-based), ``rounds``,
    ``phase``, ``order`` (seats in turn order), ``cur`` (index in ``order`` of the
    player to move in the action phase), ``passed``, ``occ``/``occ_w``/``occ_c``
    (per action space: occupying seat or -1, workers, coins), ``rep`` (seats on
    the repeatable T-REP, one entry per use), ``claims`` (seats on O-1, O-2),
    ``strip`` (engineer per strip slot, -1 empty), ``gone`` (engineers that left the
    game unhired), ``supply``/``pool`` (locomotives
    and returned factories by number), ``doubler_supply``, ``qcards`` (which "?"
    cards are still there), ``start_cards``/``start_queue``, ``stack``/``gained``
    (pending decisions), ``eb_pending`` (end bonus cards to choose at the end of
    the turn, per seat), ``reloc_queue``, ``temp_on_space``.

    Secret: ``deck`` (end bonus pile order), ``removed`` (2 end bonus cards in the
    box), ``box`` (unused engineers), each player's ``eb`` cards, ``rng``.
    """

    __slots__ = (
        "game",
        "num_players",
        "version",
        "rules",
        "opts",
        "rng",
        "players",
        "round",
        "rounds",
        "phase",
        "order",
        "cur",
        "passed",
        "occ",
        "occ_w",
        "occ_c",
        "rep",
        "claims",
        "strip",
        "box",
        "gone",
        "supply",
        "supply_total",
        "pool",
        "pool_total",
        "doubler_supply",
        "deck",
        "removed",
        "qcards",
        "start_cards",
        "start_queue",
        "stack",
        "gained",
        "eb_pending",
        "in_turn",
        "turn_seat",
        "reloc_queue",
        "temp_on_space",
        "spaces",
        "space_info",
        "final",
        "active",
        "_legal",
        "_result",
    )

    # ------------------------------------------------------------------ construction

    @classmethod
    def new(cls, game: Any, num_players: int, seed: int, rules: Rules) -> TranssibState:
        """Set up a new game (§3) for ``num_players`` with all randomness from ``seed``."""
        s = cls.__new__(cls)
        s.game = game
        s.num_players = n = num_players
        s.version = 0
        s.rules = rules
        s.opts = rules.options
        s.rng = rng = SeededRandom(seed)
        pc = D.PLAYER_COUNT[n]
        cards = list(range(1, n + 1))
        rng.shuffle(cards)  # §3.2 step 8: turn-order cards dealt at random
        s.players = [
            Player(pc["start_workers"], pc["start_coins"], cards[i], rules.start_field)
            for i in range(n)
        ]
        s.order = sorted(range(n), key=lambda seat: cards[seat])
        s.round = 1
        s.rounds = pc["rounds"]
        s.cur = 0
        s.passed = [False] * n
        s.occ = [-1] * D.NUM_SPACES
        s.occ_w = [0] * D.NUM_SPACES
        s.occ_c = [0] * D.NUM_SPACES
        s.rep = []
        s.claims = [-1, -1]
        s.strip, s.box = setup_strip(n, rng)
        s.gone = []
        s.supply = [0] * (D.MAX_LOCO + 1)
        for number in D.SUPPLY_NUMBERS:
            s.supply[number] = pc["loco_per_stack"]
        s.supply_total = sum(s.supply)
        s.pool = [0] * (D.MAX_LOCO + 1)
        s.pool_total = 0
        s.doubler_supply = s.opts.doubler_supply
        cards_eb = list(range(len(D.END_BONUS_IDS)))
        rng.shuffle(cards_eb)  # §3.1 step 3: shuffle, 2 unseen to the box, 8 face down
        s.removed = sorted(cards_eb[: D.END_BONUS_REMOVED])
        s.deck = cards_eb[D.END_BONUS_REMOVED :]
        s.qcards = [True] * len(D.QUESTION_CARDS)
        s.start_cards = list(D.START_BONUS_CARDS)
        s.start_queue = [s.order[pos - 1] for pos in pc["start_bonus_pickers"]]
        s.stack = []
        s.gained = []
        s.eb_pending = [0] * n
        s.in_turn = False
        s.turn_seat = -1
        s.reloc_queue = []
        s.temp_on_space = True
        s.final = None
        s._result = None
        s._compute_spaces()
        if s.start_queue:
            s.phase = PH_START
            first = s.start_queue[0]
            s.stack.append((F_START, first))
            s.in_turn = True
            s.turn_seat = first
        else:
            s.phase = PH_ACTIONS
        s._legal = []
        s.active = -1
        s._settle([])
        return s

    def clone(self) -> TranssibState:
        """An independent copy (explicit, no deepcopy)."""
        s = TranssibState.__new__(TranssibState)
        s.game = self.game
        s.num_players = self.num_players
        s.version = self.version
        s.rules = self.rules
        s.opts = self.opts
        s.rng = SeededRandom(self.rng.state)
        s.players = [p.clone() for p in self.players]
        s.round = self.round
        s.rounds = self.rounds
        s.phase = self.phase
        s.order = self.order[:]
        s.cur = self.cur
        s.passed = self.passed[:]
        s.occ = self.occ[:]
        s.occ_w = self.occ_w[:]
        s.occ_c = self.occ_c[:]
        s.rep = self.rep[:]
        s.claims = self.claims[:]
        s.strip = self.strip[:]
        s.box = self.box[:]
        s.gone = self.gone[:]
        s.supply = self.supply[:]
        s.supply_total = self.supply_total
        s.pool = self.pool[:]
        s.pool_total = self.pool_total
        s.doubler_supply = self.doubler_supply
        s.deck = self.deck[:]
        s.removed = self.removed[:]
        s.qcards = self.qcards[:]
        s.start_cards = self.start_cards[:]
        s.start_queue = self.start_queue[:]
        s.stack = self.stack[:]
        s.gained = self.gained[:]
        s.eb_pending = self.eb_pending[:]
        s.in_turn = self.in_turn
        s.turn_seat = self.turn_seat
        s.reloc_queue = self.reloc_queue[:]
        s.temp_on_space = self.temp_on_space
        s.spaces = self.spaces
        s.space_info = self.space_info
        s.final = self.final
        s.active = self.active
        s._legal = self._legal
        s._result = self._result
        return s

    def _compute_spaces(self) -> None:
        """The action spaces on the board this round (board side, options, last-round
        tile, §5, §14.2, §16), in data order, and the per-round table ``space_info``
        that ``_main_legal`` walks (cached on the rules: the engineers on the variable
        spaces only change at cleanup; the hiring space is checked live)."""
        n = self.num_players
        last = self.round >= self.rounds
        var_slots = variable_slots(n)
        var_engineers = tuple(self.strip[i] for i in var_slots)
        key = (n, last, var_engineers)
        cached = self.rules.space_cache.get(key)
        if cached is None:
            cached = P.build_spaces(self, n, last, var_slots)
            self.rules.space_cache[key] = cached
        self.spaces, self.space_info = cached

    # ------------------------------------------------------------------ contract

    def active_seats(self) -> tuple[int, ...]:
        """The seat to act (one at a time in this game); () when over."""
        a = self.active
        return () if a < 0 else (a,)

    def is_terminal(self) -> bool:
        return self.phase == PH_OVER

    def result(self) -> Result:
        """Final scores and ranks; tied seats share a rank (§15 step 3, no tie-breaker)."""
        if self._result is None:
            raise IllegalAction("game_not_over", "the game is not over yet")
        return self._result

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now (see :mod:`.actions`), in a stable order."""
        if seat != self.active:
            return []
        return list(self._legal)

    def apply(self, seat: int, action: Action) -> list[dict[str, Any]]:
        """Check and carry out ``action`` for ``seat`` (see :class:`State.apply`).

        Raises:
            IllegalAction: with the rule's code and reason; nothing changes.
            MalformedAction: unknown ids or field values.
        """
        if self.phase == PH_OVER:
            raise IllegalAction("game_over", "the game is over; no more actions are accepted")
        if seat != self.active:
            self._check_turn(seat)
        for a in self._legal:
            if a is action:
                break
        else:
            if not isinstance(action, Action) or action not in self._legal:
                self._refuse(seat, action)
            action = self._legal[self._legal.index(action)]
        events: list[dict[str, Any]] = []
        HANDLERS[action.__class__](self, seat, action, events)
        self.version += 1
        self._settle(events)
        return events

    # ------------------------------------------------------------------ settling

    def _settle(self, events: list) -> None:
        """Run automatic steps until a seat must decide (or the game ends), then
        cache that seat's legal actions."""
        st = self.stack
        while True:
            if st:
                top = st[-1]
                k = top[0]
                if k == F_SEQ:
                    self._run_seq(top, events)
                    continue
                if k == F_INDUSTRY and self._run_industry(top, events):
                    continue
                legal = FRAME_LEGAL[k](self, top)
                if not legal or (len(legal) == 1 and legal[0] is _DONE):
                    st.pop()
                    continue
                if k == F_HAND and len(legal) == 1 and legal[0] is A.LOCO_TO_FACTORY:
                    st.pop()  # §7.3: it cannot be placed anywhere: flipped to a factory
                    L.return_as_factory(self, top[1], top[2], bool(top[4]), events)
                    continue
                self.active = top[1]
                self._legal = legal
                return
            if self.gained:
                st.append(self.gained.pop(0))
                continue
            if self.in_turn:
                seat = self.turn_seat
                if self.eb_pending[seat]:
                    self.eb_pending[seat] -= 1
                    if self.deck:
                        if self.opts.end_bonus_selection == "draw_top":
                            self._take_end_bonus(seat, len(self.deck) - 1, events)
                        else:
                            st.append((F_END_BONUS, seat))
                    continue
                self.in_turn = False
                self._next(events)
                continue
            if self.phase == PH_OVER:
                self.active = -1
                self._legal = []
                return
            seat = self.order[self.cur]
            self.active = seat
            self._legal = P.main_legal(self, seat)
            return

    def _decision_legal(self) -> list[Action]:
        """The legal actions of the current decision, computed afresh (no mutation)."""
        if self.stack:
            top = self.stack[-1]
            return FRAME_LEGAL[top[0]](self, top)
        if self.phase == PH_ACTIONS and not self.in_turn:
            return P.main_legal(self, self.order[self.cur])
        return []

    def _next(self, events: list) -> None:
        """After a turn: the next picker, the next player to act, the relocation or
        the end of the round."""
        if self.phase == PH_START:
            self.start_queue.pop(0)
            if self.start_queue:
                seat = self.start_queue[0]
                self.stack.append((F_START, seat))
                self.in_turn = True
                self.turn_seat = seat
            else:
                self.phase = PH_ACTIONS
                self.cur = 0
            return
        if self.phase == PH_ACTIONS:
            n = self.num_players
            order = self.order
            passed = self.passed
            for k in range(1, n + 1):
                j = (self.cur + k) % n
                if not passed[order[j]]:
                    self.cur = j
                    return
            # §4.1: everyone has passed -> relocation (§11.3), scoring, cleanup
            self.phase = PH_RELOCATE
            queue = []
            for position, space in ((2, D.O2_SPACE), (1, D.O1_SPACE)):
                seat = self.claims[position - 1]
                if seat >= 0 and self.occ_w[space] >= 1:
                    queue.append((seat, space))
            self.reloc_queue = queue
            self._continue_relocation(events)
            return
        if self.phase == PH_RELOCATE:
            self.reloc_queue.pop(0)
            self._continue_relocation(events)

    def _continue_relocation(self, events: list) -> None:
        if self.reloc_queue:
            seat, space = self.reloc_queue[0]
            self.stack.append((F_RELOCATE, seat, space))
            self.in_turn = True
            self.turn_seat = seat
        else:
            self._end_round(events)

    # ------------------------------------------------------------------ effects

    def _run_seq(self, top: tuple, events: list) -> None:
        """Carry out the next op of an effect program (§4.2: at once and in full)."""
        _, seat, key, i, opt = top
        prog = self.rules.programs[key]
        st = self.stack
        if i >= len(prog):
            st.pop()
            return
        st[-1] = (F_SEQ, seat, key, i + 1, opt)
        op, a, b, c = prog[i]
        p = self.players[seat]
        if op == D.OP_TRACK:
            st.append((F_TRACK, seat, a, b, c, 0, opt))
        elif op == D.OP_INDUSTRY:
            if a:
                st.append((F_INDUSTRY, seat, a, opt, -1))
        elif op == D.OP_LOCO_OR_FACTORY:
            st.append((F_LOCO, seat, LF_EITHER, 0, 0, opt))
        elif op == D.OP_LOCO_AND_FACTORY:
            st.append((F_LOCO, seat, LF_BOTH, 0, 0, opt))
        elif op == D.OP_LOCO:
            st.append((F_LOCO, seat, LF_LOCO, 0, 0, opt))
        elif op == D.OP_FACTORY:
            st.append((F_LOCO, seat, LF_FACTORY, 0, 0, opt))
        elif op == D.OP_DOUBLERS:
            self._take_doublers(seat, p, a, events)
        elif op == D.OP_COINS:
            p.coins += a
            events.append({"type": "coins", "seat": seat, "amount": a})
        elif op == D.OP_POINTS:
            self._score(seat, p, a, key, events)
        elif op == D.OP_TEMP_WORKERS:
            if self.temp_on_space:
                self.temp_on_space = False
                p.temp += D.TEMP_WORKERS
                events.append({"type": "temp_workers", "seat": seat, "amount": D.TEMP_WORKERS})
        elif op == D.OP_WORKER:
            for _ in range(a):
                self._gain_worker(seat, p, events)
        elif op == D.OP_QUESTION:
            st.append((F_QUESTION, seat))
        elif op == D.OP_END_BONUS:
            self.eb_pending[seat] += 1
            events.append({"type": "end_bonus_due", "seat": seat})
        elif op == D.OP_CLAIM:
            self.claims[a - 1] = seat
            events.append({"type": "claim", "seat": seat, "position": a})
        elif op == D.OP_COPY_SPACE:
            st.append((F_COPY, seat, opt))
        elif op == D.OP_POINTS_TOP2_LOCOS:
            self._score(seat, p, sum(sorted(p.locos, reverse=True)[:2]), key, events)
        elif op == D.OP_POINTS_ENGINEER_SUM:
            self._score(seat, p, sum(D.ENGINEERS[e].number for e in p.engineers), key, events)
        elif op == D.OP_REVALUATION:
            p.revalued = True
            events.append({"type": "revaluation", "seat": seat})
        elif op == D.OP_KIEV_MEDAL:
            p.medal = True
            events.append({"type": "kiev_medal", "seat": seat})
        elif op == D.OP_SECOND_MARKER:
            if p.ind[1] < 0:
                p.ind[1] = self.rules.start_field
                p.indcap = -1
                events.append({"type": "second_industry_marker", "seat": seat})
                steps = self.opts.second_marker_activation_steps
                if steps:
                    st.append((F_INDUSTRY, seat, steps, 1, 1))
        elif op == D.OP_BLACK_WORKER:
            self._gain_black_worker(seat, p, events)
        elif op == D.OP_LOCO9:
            st.append((F_HAND, seat, 9, -1, 1, 1))
        elif op == D.OP_LETTERLESS_ENGINEER:
            p.engineers.append(D.LETTERLESS)
            events.append({"type": "engineer", "seat": seat, "engineer": _ENG_ID[D.LETTERLESS]})

    def _score(self, seat: int, p: Player, points: int, why: str, events: list) -> None:
        if points:
            p.score += points
            events.append({"type": "points", "seat": seat, "points": points, "source": why})

    def _take_doublers(self, seat: int, p: Player, n: int, events: list) -> None:
        room = D.DOUBLER_SPACES - p.doublers
        if self.opts.doubler_supply_limited:
            room = min(room, self.doubler_supply)
        k = min(n, room)
        if k > 0:
            p.doublers += k
            self.doubler_supply -= k
            events.append({"type": "doublers", "seat": seat, "amount": k})

    def _gain_worker(self, seat: int, p: Player, events: list) -> None:
        start = D.PLAYER_COUNT[self.num_players]["start_workers"]
        if p.perm_own - start - (
            1 if p.has_black and not self.opts.black_worker_black_track_only else 0
        ) >= (self.opts.extra_workers_per_player):
            return
        p.perm_own += 1
        p.own += 1
        p.extra += 1
        events.append({"type": "worker", "seat": seat})

    def _gain_black_worker(self, seat: int, p: Player, events: list) -> None:
        p.has_black = True
        p.extra += 1
        if self.opts.black_worker_black_track_only:
            p.black += 1
        else:
            p.perm_own += 1
            p.own += 1
        events.append({"type": "black_worker", "seat": seat})

    def fire_special(self, seat: int, p: Player, kind: str, line: int, events: list) -> None:
        """The effect of a line special that has just fired (§6.5)."""
        if kind == "worker":
            self._gain_worker(seat, p, events)
        elif kind == "question":
            self.gained.append((F_QUESTION, seat))
        elif kind == "line_double":
            p.line_double |= 1 << line

    def _check_all_specials(self, seat: int, p: Player, events: list) -> None:
        for line in range(len(D.LINES)):
            T.check_specials(self, seat, p, line, events)

    def _run_industry(self, top: tuple, events: list) -> bool:
        """Take the next industry step automatically; False if the player must pick
        which of two markers moves (§8.2, §8.3)."""
        _, seat, steps, opt, only = top
        st = self.stack
        if steps <= 0:
            st.pop()
            return True
        p = self.players[seat]
        rules = self.rules
        m0 = (only < 1) and IND.marker_capacity(rules, p, 0) > 0
        m1 = (only != 0) and p.ind[1] >= 0 and IND.marker_capacity(rules, p, 1) > 0
        if m0 and m1:
            return False
        if not (m0 or m1):
            st.pop()  # §8.2: a step into an empty gap (or past the end) is lost
            if steps:
                events.append({"type": "industry_steps_lost", "seat": seat, "steps": steps})
            return True
        st[-1] = (F_INDUSTRY, seat, steps - 1, opt, only)
        self._industry_step(seat, p, 0 if m0 else 1, events)
        return True

    def _industry_step(self, seat: int, p: Player, marker: int, events: list) -> None:
        rules = self.rules
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
                    self.gained.append((F_QUESTION, seat))
        if number:
            # §8.2: the factory's action at once, before the next step (optional, §4.4)
            self.stack.append((F_SEQ, seat, _FACTORY_KEY[number], 0, 1))

    def _take_end_bonus(self, seat: int, index: int, events: list) -> None:
        card = self.deck.pop(index)
        self.players[seat].eb.append(card)
        if self.opts.end_bonus_selection == "choose":
            self.rng.shuffle(self.deck)  # the pile goes back face down, shuffled
        events.append({"type": "end_bonus_taken", "seat": seat})

    # ------------------------------------------------------------------ feasibility

    def _prog_ok(self, seat: int, p: Player, prog: D.Program) -> bool:
        """Whether a competed program can be carried out in full now (§4.4)."""
        for op, a, b, c in prog:
            if op == D.OP_TRACK:
                if not T.can_make(p, b, 1 if c else a):
                    return False
            elif op == D.OP_INDUSTRY:
                cap = IND.capacity(self.rules, p)
                if self.opts.industry_board_steps_may_be_lost:
                    if cap < 1:
                        return False
                elif cap < a:
                    return False
            elif op == D.OP_LOCO_OR_FACTORY:
                if not (L.can_take_factory(self) or L.can_take_loco(self, p)):
                    return False
            elif op == D.OP_LOCO_AND_FACTORY:
                if not L.can_loco_and_factory(self, p):
                    return False
            elif op == D.OP_LOCO:
                if not L.can_take_loco(self, p):
                    return False
            elif op == D.OP_FACTORY:
                if not L.can_take_factory(self):
                    return False
            elif op == D.OP_DOUBLERS:
                if D.DOUBLER_SPACES - p.doublers < a:
                    return False
                if self.opts.doubler_supply_limited and self.doubler_supply < a:
                    return False
            elif op == D.OP_TEMP_WORKERS:
                if not self.temp_on_space:
                    return False
            elif op == D.OP_END_BONUS:
                if len(self.deck) - sum(self.eb_pending) < 1:
                    return False
            elif op == D.OP_CLAIM:
                if claim_refusal(self.order, self.claims, seat, a, self.num_players, self.opts):
                    return False
            elif op == D.OP_COPY_SPACE:
                if not self.copy_targets(seat, p, False):
                    return False
            elif op == D.OP_LOCO9:
                if not L.targets(p, 9, -1):
                    return False
        return True

    def _prog_refusal(self, seat: int, p: Player, prog: D.Program) -> str | None:
        """The reason a competed program cannot be done in full (None if it can)."""
        for op, a, b, c in prog:
            if op == D.OP_TRACK:
                need = 1 if c else a
                cap = T.capacity(p, b)
                if cap < need:
                    cols = "/".join(D.COLOURS[i] for i in range(5) if b >> i & 1)
                    return (
                        f"§4.4, §5.1: only {cap} {cols} step(s) can be made, the action "
                        f"needs {need}"
                    )
            elif op == D.OP_INDUSTRY:
                cap = IND.capacity(self.rules, p)
                need = 1 if self.opts.industry_board_steps_may_be_lost else a
                if cap < need:
                    return (
                        f"§4.4, §8.1: the industry markers can take only {cap} step(s) "
                        f"(an empty factory gap blocks them), the action needs {need}"
                    )
            elif op in (D.OP_LOCO_OR_FACTORY, D.OP_LOCO_AND_FACTORY, D.OP_LOCO, D.OP_FACTORY):
                if not self._prog_ok(seat, p, ((op, a, b, c),)):
                    if op == D.OP_LOCO_AND_FACTORY and not L.lowest_supply(self.supply):
                        return "§5.2 (seed p.10): L-3 needs a locomotive left in the supply"
                    return (
                        "§4.4, §7: no locomotive can be taken and placed and/or no factory "
                        "can be built as this action requires"
                    )
            elif op == D.OP_DOUBLERS:
                if not self._prog_ok(seat, p, ((op, a, b, c),)):
                    return "§5.4: no free doubler space (or the doubler supply is empty)"
            elif op == D.OP_TEMP_WORKERS:
                if not self.temp_on_space:
                    return "§5.4: the turquoise workers were already taken this round"
            elif op == D.OP_END_BONUS:
                if not self._prog_ok(seat, p, ((op, a, b, c),)):
                    return "§15.1: the end bonus pile is empty"
            elif op == D.OP_CLAIM:
                why = claim_refusal(self.order, self.claims, seat, a, self.num_players, self.opts)
                if why:
                    return why[1]
            elif op == D.OP_COPY_SPACE:
                if not self.copy_targets(seat, p, False):
                    return "§4.4: no occupied action space can be carried out in full"
            elif op == D.OP_LOCO9:
                if not L.targets(p, 9, -1):
                    return "§7.2: the #9 locomotive has no slot to go on"
        return None

    def copy_targets(self, seat: int, p: Player, optional: bool) -> list[int]:
        """Occupied board spaces whose action may be copied (§7.5, §10.4)."""
        out = []
        occ = self.occ
        for idx in self.spaces:
            sp = _SPACES[idx]
            if not sp.copyable:
                continue
            if occ[idx] < 0 and not (idx == D.REP_SPACE and self.rep):
                continue
            if optional or self._prog_ok(seat, p, sp.program):
                out.append(idx)
        return out

    # ------------------------------------------------------------------ round end

    def _end_round(self, events: list) -> None:
        """Scoring (§13) then cleanup (§14) or the final scoring (§15)."""
        rules = self.rules
        points = []
        for p in self.players:
            pts = S.round_points(rules, p)
            p.score += pts
            points.append(pts)
        events.append({"type": "round_scored", "round": self.round, "points": points})
        if self.round >= self.rounds:
            self._final_scoring(events)
            return
        # §14.1 cleanup
        self.order = rearrange(self.order, self.claims[0], self.claims[1])
        for p in self.players:
            p.own += p.placed_own
            p.placed_own = 0
            p.black += p.placed_black
            p.placed_black = 0
            p.temp = 0
            p.placed_temp = 0
            p.eng_used = 0
        self.temp_on_space = True
        self.occ = [-1] * D.NUM_SPACES
        self.occ_w = [0] * D.NUM_SPACES
        self.occ_c = [0] * D.NUM_SPACES
        self.rep = []
        self.claims = [-1, -1]
        self.passed = [False] * self.num_players
        self.strip, left = shift(self.strip)
        if left >= 0:
            self.gone.append(left)
        kinds = slot_kinds(self.num_players)
        revealed = [
            _ENG_ID[e]
            for e, kind in zip(self.strip, kinds, strict=True)
            if e >= 0 and kind == "variable"
        ]
        events.append(
            {
                "type": "new_round",
                "round": self.round + 1,
                "order": self.order[:],
                "engineer_left": _ENG_ID[left] if left >= 0 else "",
                "variable_engineers": revealed,
            }
        )
        self.round += 1
        self._compute_spaces()
        self.phase = PH_ACTIONS
        self.cur = 0

    def _final_scoring(self, events: list) -> None:
        """§15: end bonus cards, then the engineer majority; most points wins."""
        breakdown = S.final_breakdown(self.rules, self.players, self.num_players)
        for p, fb in zip(self.players, breakdown, strict=True):
            p.score += sum(fb["end_bonus"].values()) + fb["majority"]
        self.final = breakdown
        scores = [p.score for p in self.players]
        self._result = Result.from_scores(scores, "final_round_scored")
        self.phase = PH_OVER
        events.append(
            {
                "type": "game_over",
                "scores": scores,
                "end_bonus_cards": [[D.END_BONUS_IDS[c] for c in p.eb] for p in self.players],
                "end_bonus_points": [sum(fb["end_bonus"].values()) for fb in breakdown],
                "majority_points": [fb["majority"] for fb in breakdown],
            }
        )

    # ------------------------------------------------------------------ refusals

    def _refuse(self, seat: int, action: Any) -> None:
        """Raise the rule's reason why ``action`` is not legal now (slow path)."""
        from services.transsib.engine.refusals import refuse

        refuse(self, seat, action)
        raise IllegalAction(  # pragma: no cover - refuse always raises
            "not_legal_now", "this action is not legal in the current decision"
        )

    # ------------------------------------------------------------------ serialisation

    def to_json(self) -> dict[str, Any]:
        """Canonical JSON of the whole state, secrets included (rules service/tests)."""
        from services.transsib.engine.views import state_json

        return state_json(self)

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` (or a spectator) may see; see :mod:`.views`."""
        from services.transsib.engine.views import build_view

        return build_view(self, seat)
