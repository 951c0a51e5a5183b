"""The 1894 game state: the engine contract (:class:`~services.kernel.engine.State`) on top of
the rule modules.

Spec: the 1894 rules summary. The rounds live in :mod:`.auction`, :mod:`.stock_round` and
:mod:`.operating_round` (one module per step), sequenced by :mod:`.flow`; shares in
:mod:`.shares`, the market in :mod:`.market`, trains and phases in :mod:`.trains`, privates in
:mod:`.privates`, the map in :mod:`.board`.

State is plain lists of ints/strings indexed by seat (0..n-1), corporation
(:data:`.data.CORPS` order) and private (:data:`.data.PRIVATES` order), plus the
:class:`~.board.Board`. 1894 has no hidden information and no randomness after the setup, so
``view(seat)`` shows the whole state (the seed is never part of it) and
:meth:`from_json` rebuilds a state from any view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kernel.engine import (
    JSON,
    Action,
    Event,
    IllegalAction,
    LegalAction,
    MalformedAction,
    Result,
    State,
)

from . import auction, flow
from . import view as _view
from .actions import Bankrupt
from .board import Board
from .data import CORPS, MARKET, PRIVATES
from .market import price
from .operating_round.common import clear_turn_record
from .privates import CORP_OWNER, UNSOLD
from .trains import initial_depot

if TYPE_CHECKING:  # pragma: no cover
    from .game import E1894Game
    from .options import E1894Options

NUM_CORPS = len(CORPS)

_LIST_FIELDS = (
    "cash",
    "corp_cash",
    "ipo",
    "pool",
    "redeemed",
    "president",
    "par",
    "row",
    "col",
    "stamp",
    "floated",
    "operated",
    "homed",
    "home",
    "private_owner",
    "depot_left",
    "depot_next",
    "order",
    "auc_companies",
    "pending_par",
    "sr_sold",
    "sr_passed",
    "sr_pass_order",
    "or_order",
    "t_laid",
    "discard",
)
_SCALAR_FIELDS = (
    "num_players",
    "version",
    "round",
    "phase",
    "stamp_counter",
    "late_available",
    "last_set_triggered",
    "final_set",
    "lrc_used",
    "teleport_used",
    "end_reason",
    "bankrupt_seat",
    "starting_corps",
    "auc_discount",
    "auc_turn",
    "auc_passes",
    "auc_auctioning",
    "sr_number",
    "sr_turn",
    "sr_acted",
    "sr_buys",
    "sr_buy_corp",
    "pending_home",
    "or_num",
    "or_total",
    "or_pos",
    "step",
    "t_tokened",
    "t_redeemed",
    "t_revenue",
    "t_routes",
    "t_traded",
    "t_teleport",
    "t_bought_company",
    "t_reissued",
    "t_sale_price",
    "t_lrc_hex",
    "t_teleport_step",
    "game",
    "options",
)


class E1894State(State):
    """One position of a game of 1894 (see the module docstring).

    Every field, by group. ``seat`` lists have ``num_players`` entries (index = seat
    0..n-1); ``corp`` lists one entry per :data:`.data.CORPS` (index ``ci``);
    ``private`` lists one per :data:`.data.PRIVATES` (index ``pi``). Money is in francs,
    holdings in percent (10 = one share), ``ci`` / ``seat`` values of -1 mean "none".

    Game:

    * ``game`` (:class:`.game.E1894Game`), ``options`` (:class:`.options.E1894Options`).
    * ``num_players`` (3 or 4); ``version`` (int: actions applied so far).
    * ``round`` (str): ``"auction"``, ``"stock"``, ``"operating"`` or ``"over"``.
    * ``phase`` (int): index into :data:`.data.PHASES` (Yellow .. Purple).
    * ``order`` (seat list, player order): who acts first in the auction and stock rounds.
    * ``end_reason`` (str, ``""`` while playing): ``final_phase``, ``stock_market`` or
      ``bankrupt``; ``bankrupt_seat`` (seat or -1).

    Players:

    * ``cash`` (seat list, francs).
    * ``holdings`` (corp list of seat lists, percent): ``holdings[ci][seat]``.

    Corporations (corp lists):

    * ``corp_cash`` (francs); ``ipo`` (percent in the Treasury, buyable); ``pool``
      (percent in the bank pool); ``redeemed`` (percent bought back by the corporation, not
      buyable; reissued at 100).
    * ``president`` (seat or -1); ``par`` (par price in francs, 0 before the par).
    * ``row`` / ``col`` (stock market cell, -1 before the par); ``stamp`` (int: arrival
      order in the cell, the later the lower in its stack; ``stamp_counter`` the last one
      given).
    * ``floated`` / ``operated`` / ``homed`` (bool: 60% sold / has finished a dividend step /
      home tokens placed); ``home`` (str: the hex LF/LB chose, ``""`` for the others).
    * ``trains`` (corp list of train-id lists, e.g. ``["2-0", "3-1"]``).
    * ``starting_corps`` (tuple of 2 ``ci``: Belge and the drawn French starting
      corporation).

    Privates, depot, once-per-game powers:

    * ``private_owner`` (private list): a seat, ``CORP_OWNER + ci`` for a corporation,
      ``UNSOLD`` in the auction or ``CLOSED`` (:mod:`.privates`).
    * ``depot_left`` / ``depot_next`` (list per :data:`.data.TRAINS` type: copies left,
      ``UNLIMITED`` for the last type / number of the next copy, the ``n`` of ``"3-n"``).
    * ``late_available`` (bool: LF/LB may be opened, after the first 5+1).
    * ``last_set_triggered`` (bool: the first D was bought) and ``final_set`` (bool: the
      last OR set runs; no track nor token steps).
    * ``lrc_used`` / ``teleport_used`` (bool: LRC's extra tile / the GLG-SAC teleport is
      spent, errata A8).

    Auction (:mod:`.auction`):

    * ``auc_companies`` (list of ``pi``, unsold, cheapest first); ``auc_bids`` (dict ``pi``
      -> list of (seat, francs)); ``auc_discount`` (francs off LRC after all passed, errata
      A1); ``auc_turn`` (index into ``order`` of the normal turn); ``auc_passes`` (bit set of
      seats passed since their last bid or buy); ``auc_auctioning`` (``pi`` being auctioned
      among its bidders, or -1); ``pending_par`` (list of (seat, ``ci``): major shareholdings
      bought whose par is still to set).

    Stock round (:mod:`.stock_round`):

    * ``sr_number`` (int, 1 = the first stock round); ``sr_turn`` (index into ``order``);
      ``sr_acted`` (bool: the player did something this turn); ``sr_buys`` (int: shares
      bought this turn) and ``sr_buy_corp`` (``ci`` of that buy or -1); ``sr_sold`` (seat
      list of bit sets of ``ci`` sold this round); ``sr_passed`` (seat list of bool: passed
      since his last action); ``sr_pass_order`` (seats in the order they passed: the next
      player order); ``pending_home`` (``ci`` of LF/LB waiting for its home, or -1).

    Operating round (:mod:`.operating_round`, sequenced by :mod:`.flow`):

    * ``or_num`` / ``or_total`` (int: this OR's number in the set, 1-based / ORs in the
      set); ``or_order`` (list of ``ci``, operating order, re-sorted after each turn);
      ``or_pos`` (index into ``or_order`` of the operating corporation).
    * ``step`` (str: the current step's name, :mod:`.operating_round.common`; ``""`` outside
      the ORs); ``discard`` (list of ``ci`` over the train limit, in discarding order).
    * The turn record, cleared at each turn's start
      (:func:`.operating_round.common.clear_turn_record`): ``t_laid`` (list of (hex, bool
      upgrade): ordinary lays this turn); ``t_lrc_hex`` (hex of LRC's lay this turn or
      ``""``); ``t_tokened`` (bool: a token placed); ``t_redeemed`` (int: shares redeemed);
      ``t_reissued`` (bool); ``t_revenue`` (francs, this turn's routes); ``t_routes`` (tuple
      of route strings, :func:`.routes.route_to_string`); ``t_traded`` (bool: the turn's one
      trade-in used); ``t_teleport`` (str: GLG/SAC, the private whose lay opened the token
      decision, or ``""``); ``t_teleport_step`` (str: the step the lay that opened an
      inner step was made in, ``redeem`` or ``track``, which the turn goes back to after it:
      the teleport's token decision, or the re-placement of a token lifted by a split or by
      LRC's lay on the printed Paris; ``""`` none); ``t_bought_company`` (bool: a private
      bought); ``t_sale_price`` (francs per share of the president's last emergency sale, 0
      none).

    Map: ``board`` (:class:`.board.Board`: tiles, tokens, reservations, waiting tokens,
    ferries; in views as :func:`.view.board_to_view`).

    Not part of the position (never in :meth:`to_json`):

    * ``route_cache`` (dict: board queries keyed by (what, ``ci``), valid for one board
      version, ``"version"`` key); ``or_events`` (list of event dicts of automatic steps, e.g.
      private revenue, flushed into the next :meth:`apply` result).
    """

    game: E1894Game
    options: E1894Options
    num_players: int
    version: int
    round: str
    phase: int
    order: list[int]
    end_reason: str
    bankrupt_seat: int
    cash: list[int]
    holdings: list[list[int]]
    corp_cash: list[int]
    ipo: list[int]
    pool: list[int]
    redeemed: list[int]
    president: list[int]
    par: list[int]
    row: list[int]
    col: list[int]
    stamp: list[int]
    stamp_counter: int
    floated: list[bool]
    operated: list[bool]
    homed: list[bool]
    home: list[str]
    trains: list[list[str]]
    starting_corps: tuple[int, ...]
    private_owner: list[int]
    depot_left: list[int]
    depot_next: list[int]
    late_available: bool
    last_set_triggered: bool
    final_set: bool
    lrc_used: bool
    teleport_used: bool
    auc_companies: list[int]
    auc_bids: dict[int, list[tuple[int, int]]]
    auc_discount: int
    auc_turn: int
    auc_passes: int
    auc_auctioning: int
    pending_par: list[tuple[int, int]]
    sr_number: int
    sr_turn: int
    sr_acted: bool
    sr_buys: int
    sr_buy_corp: int
    sr_sold: list[int]
    sr_passed: list[bool]
    sr_pass_order: list[int]
    pending_home: int
    or_num: int
    or_total: int
    or_order: list[int]
    or_pos: int
    step: str
    discard: list[int]
    t_laid: list[tuple[str, bool]]
    t_lrc_hex: str
    t_tokened: bool
    t_redeemed: int
    t_reissued: bool
    t_revenue: int
    t_routes: tuple[str, ...]
    t_traded: bool
    t_teleport: str
    t_teleport_step: str
    t_bought_company: bool
    t_sale_price: int
    board: Board
    route_cache: dict[Any, Any]
    """Values differ by key (see :func:`.operating_round.common.cached`)."""
    or_events: list[Event]

    __slots__ = (
        *_LIST_FIELDS,
        *_SCALAR_FIELDS,
        "holdings",
        "trains",
        "auc_bids",
        "board",
        "route_cache",
        "or_events",
    )

    # ------------------------------------------------------------------ construction

    @classmethod
    def blank(cls, game: E1894Game, num_players: int, options: E1894Options) -> E1894State:
        """An empty position (no setup yet) for ``num_players`` seats."""
        st = cls.__new__(cls)
        st.game = game
        st.options = options
        st.num_players = num_players
        st.version = 0
        n = num_players
        st.cash = [0] * n
        st.corp_cash = [0] * NUM_CORPS
        st.holdings = [[0] * n for _ in range(NUM_CORPS)]
        st.ipo = [100] * NUM_CORPS
        st.pool = [0] * NUM_CORPS
        st.redeemed = [0] * NUM_CORPS
        st.president = [-1] * NUM_CORPS
        st.par = [0] * NUM_CORPS
        st.row = [-1] * NUM_CORPS
        st.col = [-1] * NUM_CORPS
        st.stamp = [0] * NUM_CORPS
        st.stamp_counter = 0
        st.floated = [False] * NUM_CORPS
        st.operated = [False] * NUM_CORPS
        st.homed = [False] * NUM_CORPS
        st.home = [""] * NUM_CORPS
        st.trains = [[] for _ in range(NUM_CORPS)]
        st.private_owner = [UNSOLD] * len(PRIVATES)
        st.depot_left, st.depot_next = initial_depot()
        st.phase = 0
        st.late_available = False
        st.last_set_triggered = False
        st.final_set = False
        st.lrc_used = False
        st.teleport_used = False
        st.end_reason = ""
        st.bankrupt_seat = -1
        st.starting_corps = ()
        st.order = list(range(n))
        st.round = "auction"
        st.auc_companies = []
        st.auc_bids = {}
        st.auc_discount = 0
        st.auc_turn = 0
        st.auc_passes = 0
        st.auc_auctioning = -1
        st.pending_par = []
        st.sr_number = 0
        st.sr_turn = 0
        st.sr_acted = False
        st.sr_buys = 0
        st.sr_buy_corp = -1
        st.sr_sold = [0] * n
        st.sr_passed = [False] * n
        st.sr_pass_order = []
        st.pending_home = -1
        st.or_num = 0
        st.or_total = 0
        st.or_order = []
        st.or_pos = 0
        st.step = ""
        clear_turn_record(st)
        st.discard = []
        st.board = Board.from_data()
        st.route_cache = {}
        st.or_events = []
        return st

    def clone(self) -> E1894State:
        st = E1894State.__new__(E1894State)
        for f in _SCALAR_FIELDS:
            setattr(st, f, getattr(self, f))
        for f in _LIST_FIELDS:
            setattr(st, f, getattr(self, f)[:])
        st.holdings = [h[:] for h in self.holdings]
        st.trains = [t[:] for t in self.trains]
        st.auc_bids = {k: v[:] for k, v in self.auc_bids.items()}
        st.board = self.board.clone()
        st.route_cache = dict(self.route_cache)
        st.or_events = []
        return st

    # ------------------------------------------------------------------ helpers for the rules

    def corp_sym(self, ci: int) -> str:
        """Symbol of corporation ``ci``."""
        return CORPS[ci].sym

    def board_home_candidates(self, corp: str) -> list[str]:
        """Home hexes LF/LB (``corp``) may choose now (:func:`.tokens.late_home_candidates`)."""
        from .tokens import late_home_candidates

        return late_home_candidates(self.board, corp)

    def end_game(self, reason: str) -> None:
        """End the game now with ``reason`` (``final_phase``, ``stock_market``, ``bankrupt``)."""
        self.round = "over"
        self.end_reason = reason

    def check_stock_market_end(self) -> bool:
        """The game ends at once when a share price reaches the 450 cell."""
        for ci in range(NUM_CORPS):
            if self.row[ci] >= 0 and MARKET.is_endgame(self.row[ci], self.col[ci]):
                self.end_game("stock_market")
                return True
        return False

    def acting_corporation(self) -> str:
        """Symbol of the corporation that must act in an OR, else ``""``."""
        return flow.acting_corporation(self)

    # ------------------------------------------------------------------ contract

    def active_seats(self) -> tuple[int, ...]:
        return flow.active_seats(self)

    def legal_actions(self, seat: int) -> list[LegalAction]:
        if seat not in self.active_seats():
            return []
        return flow.legal(self, seat)

    def playout_actions(self, seat: int) -> list[LegalAction]:
        """The legal actions a random play-out picks from (see
        :func:`services.kernel.playout.playout_actions`): all of them, except auction bids
        that would leave the bidder unable to buy the cheapest private
        (:func:`.auction.playout`) and a voluntary ``bankrupt`` while another move exists
        (the reference allows it in any step of a poor corporation's turn, and random
        players would end most games early). Not a rule: ``apply`` accepts every legal
        action."""
        legal = self.legal_actions(seat)
        if self.round == "auction":
            return auction.playout(self, seat, legal)
        if self.round == "operating":
            moves = [a for a in legal if not isinstance(a, Bankrupt)]
            return moves or legal
        return legal

    def apply(self, seat: int, action: Action) -> list[Event]:
        self._check_turn(seat)
        if not isinstance(action, Action) or action.TYPE not in self.game.codec.types:
            raise MalformedAction("unknown_action", f"not an 1894 action: {action!r}")
        events = flow.apply(self, seat, action)
        self.version += 1
        if self.or_events:
            events = events + self.or_events
            self.or_events = []
        return events

    def is_terminal(self) -> bool:
        return self.round == "over"

    def scores(self) -> list[int]:
        """Each seat's value: cash + shares at the market price + face value of privates
        still held (spec "Game end")."""
        out = list(self.cash)
        for ci in range(NUM_CORPS):
            if self.row[ci] < 0:
                continue
            p = price(self, ci)
            for seat, pct in enumerate(self.holdings[ci]):
                out[seat] += pct * p // 10
        for pi, owner in enumerate(self.private_owner):
            if 0 <= owner < CORP_OWNER:
                out[owner] += PRIVATES[pi].value
        if self.bankrupt_seat >= 0 and self.options.bankrupt_score == "zero":
            # "liquidated" (the reference) already sold his shares and zeroed his cash
            out[self.bankrupt_seat] = 0
        return out

    def result(self) -> Result:
        if not self.is_terminal():
            raise IllegalAction("game_not_over", "the game is not over yet")
        return Result.from_scores(self.scores(), self.end_reason)

    def view(self, seat: int | None) -> dict[str, JSON]:
        """The whole state and ``viewer`` (see :func:`.view.view`)."""
        return _view.view(self, seat)

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, JSON]:
        """Canonical JSON of the whole state (see :func:`.view.state_json`)."""
        return _view.state_json(self)

    @classmethod
    def from_json(cls, game: E1894Game, obj: dict[str, JSON], options: E1894Options) -> E1894State:
        """Rebuild a state from :meth:`to_json` (or a view); see :func:`.view.state_from_json`.

        Raises:
            MalformedAction: ``obj`` is not an 1894 view (``"bad_view"``).
        """
        return _view.state_from_json(cls, game, obj, options)
