"""What the steps of an operating turn share: the step names, the contract of a step unit,
the turn record, the operating corporation, board queries cached per board position and the
refusal texts.

Spec: the 1894 rules summary, "1894 rules as the reference engine implements them";
designer's rules 1.0.3 section 7.3 (the designer's rulebook).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from services.kernel import steps
from services.kernel.engine import Action, Event, IllegalAction, LegalAction
from services.kernel.steps import StepUnit

from .. import teleport
from ..data import BLOCKED_HEX_WHILE_PLAYER_OWNED, CORPS, PRIVATE_INDEX
from ..graph import Network, reach, route_available
from ..privates import CORP_OWNER

if TYPE_CHECKING:
    from ..state import E1894State

# ---------------------------------------------------------------------- step names

HOME = "home"
"""7.3.1: the home token(s) on the corporation's first turn."""
REDEEM = "redeem"
"""7.3.2: one redemption of pool shares or a reissue."""
TRACK = "track"
"""7.3.3: up to two tile lays (plus LRC's extra lay)."""
REPLACE = "replace"
"""Inside the track step: the corporation re-places its own token removed by a split."""
TELEPORT = teleport.TELEPORT
"""Inside the track step: the GLG/SAC private's free-token decision (errata A4)."""
TOKEN = "token"
"""7.3.4: one station token."""
ROUTE = "route"
"""7.3.5: run the trains."""
DIVIDEND = "dividend"
"""7.3.6: pay out or withhold."""
BUY_TRAIN = "buy_train"
"""7.3.7: buy trains (trade-ins, emergency buying)."""
BUY_COMPANY = "buy_company"
"""The reference's final buy-companies step (errata A5)."""
UPDATE = "update"
"""7.3.8: other corporations re-place the tokens a split removed."""

DONE = "done"
"""A step unit's :func:`OperatingStep.apply` outcome: the step is over; the flow picks the next."""

# ---------------------------------------------------------------------- refusal texts

S_SHARES = "§Shares and the stock market"
S_TRACK = "§Map, track and tokens"
S_TRAINS = "§Trains and phases"
S_LONDON = "§London, ferries and bonuses"


class OperatingStep(StepUnit, Protocol):
    """The contract every step module of :mod:`.operating_round` meets: the kernel's
    :class:`services.kernel.steps.StepUnit` with 1894's arguments (module attributes and
    functions; ``ci`` is the operating corporation's index into :data:`.data.CORPS`).

    * ``NAME``: the value of ``E1894State.step`` while the step runs.
    * ``OWN_TURN``: the corporation decides here, so the moves open all turn long
      (:mod:`.anytime`: privates, ferry, LS token, bankruptcy) are open too.
    * ``WAITS_FOR_TOKEN``: the step waits for a token placement only; every other move is
      refused with ``token_pending``.
    * ``HANDLES``: the action classes the step's :func:`apply` takes; the flow refuses the
      others (``wrong_step``, ``cannot_pass``...).
    """

    NAME: str
    OWN_TURN: bool
    WAITS_FOR_TOKEN: bool
    HANDLES: tuple[type[Action], ...]

    def legal(self, st: E1894State, ci: int) -> list[LegalAction]:
        """The step's own legal moves, in a fixed order."""
        ...

    def apply(
        self, st: E1894State, ci: int, seat: int, action: Action
    ) -> tuple[list[Event], str | None]:
        """Validate (raising :class:`IllegalAction` / :class:`MalformedAction` before any
        change), then change the state. Returns the events and the outcome: ``None`` (the
        step goes on), :data:`DONE` (the step is over) or the name of a step inside this one
        to enter now (:data:`REPLACE`, :data:`TELEPORT`)."""
        ...

    def skip(self, st: E1894State, ci: int) -> bool:
        """True when the step has nothing (more) to decide: the flow moves on. The step's
        automatic part is done first when it returns True (home tokens without a choice,
        revenue 0 without a route, the withhold of no revenue)."""
        ...


# ---------------------------------------------------------------------- the turn


def clear_turn_record(st: E1894State) -> None:
    """Start a corporation's turn with a clean record of what it did in it: no tile laid,
    no token placed, no share redeemed nor reissued, no revenue, no routes, no trade-in, no
    teleport, no private bought: the per-turn limits of the turn's steps. Also the values of
    a new game."""
    st.t_laid = []
    st.t_tokened = False
    st.t_redeemed = 0
    st.t_revenue = 0
    st.t_routes = ()
    st.t_traded = False
    st.t_teleport = ""
    st.t_bought_company = False
    st.t_reissued = False
    st.t_sale_price = 0
    st.t_lrc_hex = ""
    st.t_teleport_step = ""


def operating_corp(st: E1894State) -> int:
    """Index of the corporation whose turn it is."""
    return st.or_order[st.or_pos]


def owns(st: E1894State, ci: int, sym: str) -> bool:
    """Corporation ``ci`` owns the private ``sym``."""
    return st.private_owner[PRIVATE_INDEX[sym]] == CORP_OWNER + ci


def blocked_hexes(st: E1894State) -> tuple[str, ...]:
    """Hexes blocked by privates a player still owns (I14 LRC, H17 GLG, D17 SAC)."""
    out = []
    for sym, hex_id in BLOCKED_HEX_WHILE_PLAYER_OWNED.items():
        owner = st.private_owner[PRIVATE_INDEX[sym]]
        if 0 <= owner < CORP_OWNER:
            out.append(hex_id)
    return tuple(out)


def pass_event(ci: int, step: str) -> Event:
    """The event of the corporation passing the rest of ``step``."""
    return {"type": "pass", "corporation": CORPS[ci].sym, "step": step}


def wrong_step(action: Action, step: str) -> IllegalAction:
    """``wrong_step`` (:func:`services.kernel.steps.wrong_step`): ``action`` is not a move of
    ``step``."""
    return steps.wrong_step(f"§Operating round: {action.TYPE} is not possible in the {step} step")


# ---------------------------------------------------------------------- cached board queries

T = TypeVar("T")


def cached(st: E1894State, what: str, ci: int, compute: Callable[[], T]) -> T:
    """Board queries cached per board position (the board's version counter; a clone starts
    with its parent's entries for the same position, see :meth:`E1894State.clone`)."""
    cache = st.route_cache
    version = st.board.version
    if cache.get("version") != version:
        cache.clear()
        cache["version"] = version
    key = (what, ci)
    hit = cache.get(key)
    if hit is None:
        hit = compute()
        cache[key] = hit
    return hit


def network(st: E1894State, ci: int) -> Network:
    """The corporation's :func:`.graph.reach` network, cached per board position."""
    return cached(st, "network", ci, lambda: reach(st.board, CORPS[ci].sym))


def has_route(st: E1894State, ci: int) -> bool:
    """True if the corporation has a route step (and must own a train): the reference's test
    :func:`..graph.route_available` (two revenue locations met from one token; London counts
    without a ferry), cached per board position. Errata A3 / differential runs."""
    return cached(st, "route", ci, lambda: route_available(st.board, CORPS[ci].sym))
