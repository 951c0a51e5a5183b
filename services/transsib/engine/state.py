"""The game state of Russian Railroads: the engine contract (§3 setup).

This module holds the state's fields, its setup (§3), clone, and the
:class:`~services.kernel.engine.State` contract (``active_seats``, ``legal_actions``,
``apply``, ``view``, ``result``...). The rest lives in one module per job:

* :mod:`.flow`: the turn flow (rounds, turns, relocation, scoring, the automatic steps
  after each action);
* :mod:`.effects`: the interpreter of action-space effects (one table row per op: how it
  runs, whether it is feasible, why not);
* :mod:`.decisions`: the legal actions of each pending decision (:mod:`.frames`) and what
  each action does; :mod:`.placement`: board spaces, costs and the placements;
  :mod:`.refusals`: why an action is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kernel.engine import Action, IllegalAction, LegalAction, Result, State
from services.kernel.rng import SeededRandom
from services.transsib.engine import data as D
from services.transsib.engine import flow as FL
from services.transsib.engine import placement as P
from services.transsib.engine.decisions import HANDLERS
from services.transsib.engine.engineers import setup_strip, variable_slots
from services.transsib.engine.frames import PH_ACTIONS, PH_OVER, PH_START, Frame, StartBonus
from services.transsib.engine.options import Rules, TranssibOptions
from services.transsib.engine.placement import SpaceRow
from services.transsib.engine.player import NO_CAP, Player

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.game import TranssibGame


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

    game: TranssibGame
    num_players: int
    version: int
    rules: Rules
    opts: TranssibOptions
    rng: SeededRandom
    players: list[Player]
    round: int
    rounds: int
    phase: int
    order: list[int]
    cur: int
    passed: list[bool]
    occ: list[int]
    occ_w: list[int]
    occ_c: list[int]
    rep: list[int]
    claims: list[int]
    strip: list[int]
    box: list[int]
    gone: list[int]
    supply: list[int]
    supply_total: int
    pool: list[int]
    pool_total: int
    doubler_supply: int
    deck: list[int]
    removed: list[int]
    qcards: list[bool]
    start_cards: list[str]
    start_queue: list[int]
    stack: list[Frame]
    gained: list[Frame]
    eb_pending: list[int]
    in_turn: bool
    turn_seat: int
    reloc_queue: list[tuple[int, int]]
    temp_on_space: bool
    spaces: tuple[int, ...]
    space_info: tuple[SpaceRow, ...]
    final: list[dict[str, Any]] | None
    active: int
    legal: list[Action]
    outcome: Result | None

    __slots__ = tuple(__annotations__)  # the fields are the annotations above

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
        s.outcome = None
        s.refresh_spaces()
        if s.start_queue:
            s.phase = PH_START
            first = s.start_queue[0]
            s.stack.append(StartBonus(first))
            FL.begin_turn(s, first)
        else:
            s.phase = PH_ACTIONS
        s.legal = []
        s.active = -1
        FL.settle(s, [])
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
        s.legal = self.legal
        s.outcome = self.outcome
        return s

    def refresh_spaces(self) -> None:
        """The action spaces on the board this round (board side, options, last-round
        tile, §5, §14.2, §16), in data order, and the per-round table ``space_info``
        that ``placement.main_legal`` walks (cached on the rules: the engineers on the variable
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
        if self.outcome is None:
            raise IllegalAction("game_not_over", "the game is not over yet")
        return self.outcome

    def legal_actions(self, seat: int) -> list[LegalAction]:
        """Every action ``seat`` may take now (see :mod:`.actions`), in a stable order."""
        if seat != self.active:
            return []
        return list(self.legal)

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
        legal = self.legal
        for a in legal:
            if a is action:
                break
        else:
            if not isinstance(action, Action) or action not in legal:
                self._refuse(seat, action)
            action = legal[legal.index(action)]
        events: list[dict[str, Any]] = []
        HANDLERS[action.__class__](self, seat, action, events)
        self.version += 1
        FL.settle(self, events)
        return events

    def refresh_caches(self) -> None:
        """Recompute the cached spaces, the seat to act, its legal actions and the result
        from the fields (after a state was built or edited field by field; no other
        change)."""
        for p in self.players:
            p.cap = NO_CAP
            p.indcap = -1
        self.refresh_spaces()
        if self.phase == PH_OVER:
            self.active = -1
            self.legal = []
            self.outcome = Result.from_scores([p.score for p in self.players], "final_round_scored")
            return
        self.outcome = None
        self.active = self.stack[-1].seat if self.stack else self.order[self.cur]
        self.legal = FL.decision_legal(self)

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
        from services.transsib.engine.view import state_json

        return state_json(self)

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` (or a spectator) may see; see :mod:`.view`."""
        from services.transsib.engine.view import build_view

        return build_view(self, seat)
