"""The game state of Russian Railroads and its flow (§3 setup, §4 rounds and turns).

Flow: starting bonus picks (4th, 3rd, 2nd position, §3.3) -> rounds of action phase
(§4.1: in turn order, place workers on one space or pass), worker relocation
(§11.3), scoring (§13) and cleanup (§14); after the last round the final scoring
(§15).

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

from typing import Any

from services.common.engine import Action, IllegalAction, Result, State
from services.common.rng import SeededRandom
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import locos as L
from services.transsib.engine import scoring as S
from services.transsib.engine import track as T
from services.transsib.engine.engineers import setup_strip, shift, slot_kinds, variable_slots
from services.transsib.engine.options import Rules
from services.transsib.engine.player import Player
from services.transsib.engine.turn_order import claim_refusal, rearrange

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

_SPACES = D.SPACES
_FACTORY_KEY = tuple(f"factory:{n}" for n in range(D.MAX_LOCO + 1))
_TOKEN_KEY = tuple(f"token:{t}" for t in D.QUESTION_TOKENS)
_CARD_KEY = tuple(f"card:{c}" for c in D.QUESTION_CARDS)
_ENG_ID = tuple(e.id for e in D.ENGINEERS)
_PLACE = A.PLACE
_PASS = A.PASS
_DONE = A.DONE
_BLACK_TRACK = D.BLACK_TRACK_SPACES


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
            cached = self._build_spaces(n, last, var_slots)
            self.rules.space_cache[key] = cached
        self.spaces, self.space_info = cached

    def _build_spaces(self, n: int, last: bool, var_slots: tuple[int, ...]) -> tuple:
        opts = self.opts
        out = []
        for sp in _SPACES:
            if n == 2 and sp.in_2p is False:
                continue
            if sp.index == D.TEMP_SPACE and n == 2 and not opts.temp_workers_space_in_2p:
                continue
            if sp.area == "turn_order" and last and opts.last_round_tile != "none":
                continue
            if sp.area == "last_round" and not (last and opts.last_round_tile == "industry_3"):
                continue
            if sp.area == "engineer" and D.VAR_SPACES.index(sp.index) >= len(var_slots):
                continue
            out.append(sp.index)
        info = []
        for idx in out:
            sp = _SPACES[idx]
            cost = self._space_cost(idx) if sp.area != "hire" else (sp.workers, sp.coins, ())
            if cost is None:
                continue
            w, m, prog = cost
            # feasibility check kind: 0 none, 1 track only, 2 industry only, 3 general
            need = mask = 0
            if not prog or all(op[0] in (D.OP_COINS, D.OP_POINTS) for op in prog):
                kind = 0
            elif len(prog) == 1 and prog[0][0] == D.OP_TRACK:
                kind = 1
                need, mask = (1 if prog[0][3] else prog[0][1]), prog[0][2]
            elif len(prog) == 1 and prog[0][0] == D.OP_INDUSTRY:
                kind = 2
                need = prog[0][1]
            else:
                kind = 3
            info.append(
                (
                    idx,
                    sp.repeatable,
                    self._variant_table(sp.id, w, m),
                    idx in _BLACK_TRACK,
                    kind,
                    need,
                    mask,
                    prog,
                    sp.area == "hire",
                )
            )
        return tuple(out), tuple(info)

    def _variant_table(self, sid: str, w: int, m: int) -> tuple:
        """``table[coins held, max 4][free workers, max 3]``: the ``place`` actions for a
        space needing ``w`` workers and ``m`` coins besides (one per allowed number of
        coins standing in for workers, §4.3); cached on the rules."""
        key = (sid, w, m)
        cache = self.rules.variant_cache
        table = cache.get(key)
        if table is None:
            table = tuple(
                tuple(
                    tuple(_PLACE[(sid, c)] for c in self._coin_variants(w, m, coins, avail))
                    for avail in range(4)
                )
                for coins in range(5)
            )
            cache[key] = table
        return table

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
        _HANDLERS[action.__class__](self, seat, action, events)
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
                legal = _FRAME_LEGAL[k](self, top)
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
            self._legal = self._main_legal(seat)
            return

    def _decision_legal(self) -> list[Action]:
        """The legal actions of the current decision, computed afresh (no mutation)."""
        if self.stack:
            top = self.stack[-1]
            return _FRAME_LEGAL[top[0]](self, top)
        if self.phase == PH_ACTIONS and not self.in_turn:
            return self._main_legal(self.order[self.cur])
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
                if not self._copy_targets(seat, p, False):
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
                if not self._copy_targets(seat, p, False):
                    return "§4.4: no occupied action space can be carried out in full"
            elif op == D.OP_LOCO9:
                if not L.targets(p, 9, -1):
                    return "§7.2: the #9 locomotive has no slot to go on"
        return None

    def _space_cost(self, idx: int) -> tuple[int, int, D.Program] | None:
        """(workers, extra coins, program) of an available board space now, or None
        if it holds no engineer (engineer spaces) / nothing to hire."""
        sp = _SPACES[idx]
        area = sp.area
        if area == "engineer":
            slot = variable_slots(self.num_players)[D.VAR_SPACES.index(idx)]
            e = self.strip[slot]
            if e < 0:
                return None
            eng = D.ENGINEERS[e]
            return eng.var_workers, eng.var_coins, eng.program
        if area == "hire":
            if self.strip[-1] < 0:
                return None
            return sp.workers, sp.coins, ()
        if idx == D.TEMP_SPACE:
            return self.opts.temp_workers_cost, 0, sp.program
        return sp.workers, sp.coins, sp.program

    def _coin_variants(self, w: int, m: int, coins: int, avail: int) -> list[int]:
        """The numbers of coins that may stand in for workers on a space needing ``w``
        workers and ``m`` coins besides, given the player's coins and free workers
        (§4.3 and its options)."""
        if coins < m:
            return []
        opts = self.opts
        max_sub = 0
        if w and opts.coins_substitute_workers and (w == 1 or opts.coins_on_multi_worker_spaces):
            max_sub = min(w, coins - m)
        out = []
        for c in range(max_sub + 1):
            if 0 < c < w and not opts.coins_mixing_allowed:
                continue
            if avail >= w - c:
                out.append(c)
        return out

    def _main_legal(self, seat: int) -> list[Action]:
        """Placements (§4.2) and pass for the player to move in the action phase."""
        p = self.players[seat]
        occ = self.occ
        acts: list[Action] = []
        coins = p.coins
        cc = coins if coins < 4 else 4
        base_avail = p.own + p.temp
        black = p.black
        aa = base_avail if base_avail < 3 else 3
        hire_open = self.strip[-1] >= 0
        ind_need = 1 if self.opts.industry_board_steps_may_be_lost else 0
        for idx, rep, vt, black_ok, kind, need, mask, prog, hire in self.space_info:
            if occ[idx] >= 0 and not rep:
                continue
            if black_ok and black:
                avail = base_avail + black
                variants = vt[cc][avail if avail < 3 else 3]
            else:
                variants = vt[cc][aa]
            if not variants:
                continue
            if hire and not hire_open:
                continue
            if kind == 1:
                if not T.can_make(p, mask, need):
                    continue
            elif kind == 2:
                if IND.capacity(self.rules, p) < (ind_need or need):
                    continue
            elif kind == 3 and not self._prog_ok(seat, p, prog):
                continue
            acts.extend(variants)
        if p.engineers:
            used = p.eng_used
            for e in p.engineers:
                if used >> e & 1:
                    continue
                eng = D.ENGINEERS[e]
                acts.extend(self._variant_table(eng.id, eng.own_workers, 0)[cc][aa])
        acts.append(_PASS)
        return acts

    def _copy_targets(self, seat: int, p: Player, optional: bool) -> list[int]:
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
    acts: list[Action] = [
        A.COPY_SPACE[i] for i in s._copy_targets(seat, s.players[seat], bool(opt))
    ]
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
        cost = s._space_cost(idx)
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


_FRAME_LEGAL = (
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
    """Take ``workers`` from the player's supply: turquoise first, then the restricted
    black worker where it may stand, then own workers (§5.4, §9)."""
    t = min(p.temp, workers)
    p.temp -= t
    p.placed_temp += t
    workers -= t
    if workers and p.black and idx in _BLACK_TRACK:
        b = min(p.black, workers)
        p.black -= b
        p.placed_black += b
        workers -= b
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
        w, m, _prog = s._space_cost(idx)
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


_HANDLERS = {
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
