"""The game state of Chicago Express and its contract methods (spec §3, §14).

The state is a flat record of small ints, lists of ints and bit masks (see the attribute
list of :class:`RailbaronsState`), so that ``clone()`` is a handful of list copies and a
live game takes a few kilobytes. The rules live in one module per rule area
(:mod:`.auction`, :mod:`.dials`, :mod:`.expansion`, :mod:`.development`,
:mod:`.dividends`, :mod:`.chicago`, :mod:`.end`); :mod:`.flow` sequences them;
:mod:`.view` decides what a seat sees (everything is public, §3.7).
"""

from __future__ import annotations

from typing import Any

from services.kernel.engine import (
    Action,
    Event,
    IllegalAction,
    LegalAction,
    Result,
    Seat,
    State,
)
from services.kernel.rng import SeededRandom
from services.railbarons.engine import data, flow, phases, view
from services.railbarons.engine.expansion import place_start_locomotive
from services.railbarons.engine.options import (
    DIAL_NAMES,
    RailbaronsOptions,
    Rules,
    compile_rules,
)

NC = data.NUM_COMPANIES
_ACTIVE = tuple((s,) for s in range(6))


class RailbaronsState(State):
    """One position of a Chicago Express game.

    Attributes (all public information, §3.7):
        num_players: 2..6.
        version: actions applied so far.
        opts / rules: the options and their compiled tables (shared, read-only).
        cash: dollars per seat.
        held: shares held, flat: ``held[seat * 5 + company]``.
        treasury, income, locos, sold: per company index (dollars, dollars per dividend,
            locomotives left on the charter, shares sold).
        opened: bit mask of open companies (the Wabash opens at the first Chicago phase).
        net: per company, the bit mask of hexes holding its locomotives.
        front: per company, the hexes adjacent to ``net`` it may enter (not in ``net``,
            other companies' start hexes removed under ``start_hexes_exclusive``).
        occ: bit mask of hexes holding any locomotive; count: companies per hex.
        developed: bit mask of ordinary hexes carrying a house.
        ind: industrial track values (Detroit, Wheeling, Pittsburgh).
        houses: houses left in the general supply.
        dials: uses so far this round of (auction, develop, expand).
        chicago: bit mask of companies that have reached Chicago.
        phase: a :mod:`.phases` code; turn: the turn player (the banker during the
            opening auction); active: the seat to act now.
        a_kind, a_company, a_starter, a_high, a_bidder, a_out: the running auction (kind,
            company, auctioneer, high bid, high bidder or -1, bit mask of seats that passed).
        opening_i: index of the opening auction running (0..3), 4 once play began.
        first_player: winner of the PRR opening share (-1 while unknown).
        x_company, x_hexes: the expansion in progress (company or -1, hexes placed).
        chi_pending: company whose Chicago phase follows this turn, or -1.
        rounds: general dividend phases paid.
        end_reason: end conditions met so far (``""`` while none), joined with ``+``.
        final: the :class:`Result` once over.
    """

    __slots__ = (
        "game",
        "num_players",
        "version",
        "opts",
        "rules",
        "cash",
        "held",
        "treasury",
        "income",
        "locos",
        "sold",
        "opened",
        "net",
        "front",
        "occ",
        "count",
        "developed",
        "ind",
        "houses",
        "dials",
        "chicago",
        "phase",
        "turn",
        "active",
        "a_kind",
        "a_company",
        "a_starter",
        "a_high",
        "a_bidder",
        "a_out",
        "opening_i",
        "first_player",
        "x_company",
        "x_hexes",
        "chi_pending",
        "rounds",
        "end_reason",
        "final",
    )

    # the types of the slots (for the type checker; no class attributes)
    opts: RailbaronsOptions
    rules: Rules
    cash: list[int]
    held: list[int]
    treasury: list[int]
    income: list[int]
    locos: list[int]
    sold: list[int]
    opened: int
    net: list[int]
    front: list[int]
    occ: int
    count: list[int]
    developed: int
    ind: list[int]
    houses: int
    dials: list[int]
    chicago: int
    phase: int
    turn: int
    active: int
    a_kind: int
    a_company: int
    a_starter: int
    a_high: int
    a_bidder: int
    a_out: int
    opening_i: int
    first_player: int
    x_company: int
    x_hexes: tuple[int, ...]
    chi_pending: int
    rounds: int
    end_reason: str
    final: Result | None

    # ------------------------------------------------------------------ construction

    @classmethod
    def new(
        cls, game: Any, num_players: int, seed: int, opts: RailbaronsOptions
    ) -> RailbaronsState:
        """Set up a game (§3) and open the first opening auction (§4).

        Raises:
            ValueError: ``first_auctioneer`` is not a seat of this game.
        """
        rules = compile_rules(opts)
        banker = opts.first_auctioneer
        if banker is None:
            banker = SeededRandom(seed).randbelow(num_players)
        elif banker >= num_players:
            raise ValueError(
                f"first_auctioneer {banker} is not a seat of a {num_players}-player game"
            )
        st = cls.__new__(cls)
        st.game = game
        st.num_players = num_players
        st.version = 0
        st.opts = opts
        st.rules = rules
        st.cash = [data.STARTING_MONEY[num_players]] * num_players
        st.held = [0] * (num_players * NC)
        st.treasury = [0] * NC
        st.income = [0] * NC
        st.locos = list(data.LOCOMOTIVES)
        st.sold = [0] * NC
        st.opened = 0
        st.net = [0] * NC
        st.front = [0] * NC
        st.occ = 0
        st.count = [0] * data.NUM_HEXES
        for c in range(NC):
            if data.OPEN_AT_START[c]:
                place_start_locomotive(st, c)
                st.income[c] = rules.start_income[c]
        st.developed = 0
        st.ind = list(data.INDUSTRIAL_START)
        st.houses = data.HOUSES_IN_SUPPLY
        st.dials = [0, 0, 0]
        st.chicago = 0
        st.turn = banker
        st.opening_i = 0
        st.first_player = -1
        st.x_company = -1
        st.x_hexes = ()
        st.chi_pending = -1
        st.rounds = 0
        st.end_reason = ""
        st.final = None
        from services.railbarons.engine import auction

        auction.start(st, phases.KIND_OPENING, data.INITIAL_ORDER[0], banker)
        return st

    def clone(self) -> RailbaronsState:
        """An independent copy (list copies; masks and tuples are immutable)."""
        st = RailbaronsState.__new__(RailbaronsState)
        st.game = self.game
        st.num_players = self.num_players
        st.version = self.version
        st.opts = self.opts
        st.rules = self.rules
        st.cash = self.cash[:]
        st.held = self.held[:]
        st.treasury = self.treasury[:]
        st.income = self.income[:]
        st.locos = self.locos[:]
        st.sold = self.sold[:]
        st.opened = self.opened
        st.net = self.net[:]
        st.front = self.front[:]
        st.occ = self.occ
        st.count = self.count[:]
        st.developed = self.developed
        st.ind = self.ind[:]
        st.houses = self.houses
        st.dials = self.dials[:]
        st.chicago = self.chicago
        st.phase = self.phase
        st.turn = self.turn
        st.active = self.active
        st.a_kind = self.a_kind
        st.a_company = self.a_company
        st.a_starter = self.a_starter
        st.a_high = self.a_high
        st.a_bidder = self.a_bidder
        st.a_out = self.a_out
        st.opening_i = self.opening_i
        st.first_player = self.first_player
        st.x_company = self.x_company
        st.x_hexes = self.x_hexes
        st.chi_pending = self.chi_pending
        st.rounds = self.rounds
        st.end_reason = self.end_reason
        st.final = self.final
        return st

    # ------------------------------------------------------------------ contract

    def active_seats(self) -> tuple[Seat, ...]:
        """The one seat to act (the turn player or the bidder), or ``()`` once over."""
        if self.phase == phases.OVER:
            return ()
        return _ACTIVE[self.active]

    def is_terminal(self) -> bool:
        return self.phase == phases.OVER

    def result(self) -> Result:
        """Cash per seat and shared ranks (§11). Raises ``game_not_over`` before the end."""
        if self.final is None:
            raise IllegalAction("game_not_over", "§11: the game has not ended yet")
        return self.final

    def legal_actions(self, seat: Seat) -> list[LegalAction]:  # plain actions only
        """Every move ``seat`` may make now, in a stable order (``[]`` if not active)."""
        if seat != self.active or self.phase == phases.OVER:
            return []
        return flow.legal(self, seat)  # type: ignore[return-value]  # list[Action] is one

    def apply(self, seat: Seat, action: Action) -> list[Event]:
        """Check and apply one move; see :mod:`.flow` for the handlers.

        Raises:
            IllegalAction: ``game_over``, ``not_your_turn``, ``wrong_step`` or the rule's
                own code (``dial_in_red``, ``bid_below_minimum`` ...); nothing changed.
            MalformedAction: unknown action type, company, hex or dial.
        """
        if self.phase == phases.OVER:
            raise IllegalAction("game_over", "§11: the game is over; no more actions are accepted")
        if seat != self.active:
            raise IllegalAction(
                "not_your_turn", f"seat {seat} may not act now; active seat: {self.active}"
            )
        events: list[Event] = flow.apply(self, seat, action)
        self.version += 1
        return events

    def view(self, seat: Seat | None) -> dict[str, Any]:
        """Everything is public (§3.7); see :func:`.view.view`."""
        return view.view(self, seat)

    def to_json(self) -> dict[str, Any]:
        """Canonical JSON of the whole state (see :func:`.view.state_json`)."""
        return view.state_json(self)

    # ------------------------------------------------------------------ helpers

    def shares_of(self, seat: Seat, company: int) -> int:
        """Shares of company index ``company`` held by ``seat``."""
        return self.held[seat * NC + company]

    def dial_in_red(self, dial: int) -> bool:
        """True when dial ``dial`` (0 auction, 1 develop, 2 expand) is in its red zone (§5)."""
        return self.dials[dial] >= self.rules.dial_limits[dial]


__all__ = ["RailbaronsState", "DIAL_NAMES"]
