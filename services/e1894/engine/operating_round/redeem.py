"""Step 2 of a corporation's turn: financial operations, one redemption or one reissue.

Spec: designer's rules 7.3.2 (7.3.2.1 "Redeem shares", 7.3.2.2 "Reissue all owned shares");
the 1894 rules summary, "Shares and the stock market"; errata A6 (one redemption per step).

* One redemption of pool shares at the market price each: 1 share, or up to 2 in the first
  OR of a set.
* A reissue of all redeemed shares at 100 each, when they outnumber the Treasury's, not in a
  turn with a redemption.
* Either one, or ``pass``, ends the step. Belge and the drawn French starting corporation do
  neither.
* The privates' lays (LRC, GLG/SAC teleport) may be made in this step already
  (:func:`.track.lay`); the step goes on after them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, LegalAction

from ..actions import LayTile, Pass, RedeemShare, ReissueShares
from ..data import CORPS
from ..market import price
from . import track
from .common import DONE, REDEEM, S_SHARES, pass_event, wrong_step

if TYPE_CHECKING:
    from ..state import E1894State

NAME = REDEEM
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (RedeemShare, ReissueShares, Pass, LayTile)


def can_redeem_at_all(st: E1894State, ci: int) -> bool:
    """Belge and the drawn French starting corporation may not redeem or reissue."""
    return ci not in st.starting_corps


def redeem_limit(st: E1894State) -> int:
    """Shares a corporation may redeem in this OR: 2 in the first OR of a set, else 1."""
    return 2 if st.or_num == 1 else 1


def redeem_counts(st: E1894State, ci: int) -> list[int]:
    """How many shares the operating corporation may redeem now in its one redemption
    (errata A6): 1 up to :func:`redeem_limit`, as many as the pool holds and its cash pays."""
    if not can_redeem_at_all(st, ci) or st.t_reissued or st.t_redeemed:
        return []
    p = price(st, ci)
    top = min(redeem_limit(st), st.pool[ci] // 10)
    return [k for k in range(1, top + 1) if k * p <= st.corp_cash[ci]]


def can_redeem(st: E1894State, ci: int) -> bool:
    """The operating corporation may redeem pool shares now (cash, limit, nothing redeemed or
    reissued this turn)."""
    return bool(redeem_counts(st, ci))


def can_reissue(st: E1894State, ci: int) -> bool:
    """Reissue when the redeemed shares outnumber the Treasury's; a corporation that redeemed
    in this turn does not reissue in it (reference behaviour)."""
    return (
        can_redeem_at_all(st, ci)
        and st.t_redeemed == 0
        and st.redeemed[ci] > 0
        and st.redeemed[ci] > st.ipo[ci]
    )


def skip(st: E1894State, ci: int) -> bool:
    """Nothing to redeem and nothing to reissue."""
    return not (can_redeem(st, ci) or can_reissue(st, ci))


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """Each redemption count, the reissue, ``pass``, then the privates' lays."""
    out: list[LegalAction] = [RedeemShare(k) for k in redeem_counts(st, ci)]
    if can_reissue(st, ci):
        out.append(ReissueShares())
    out.append(Pass())
    # the privates' lays (LRC, GLG/SAC teleport) may come before the track step
    out.extend(a for a in track.lay_options(st, ci) if a.company)
    return out


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """A redemption, a reissue or ``pass``; each ends the step.

    Raises:
        IllegalAction: ``may_not_redeem`` (a starting corporation), ``cannot_reissue``,
            ``redeem_limit``, ``none_in_pool``, ``insufficient_cash``.
    """
    if isinstance(action, Pass):
        return [pass_event(ci, NAME)], DONE
    if isinstance(action, LayTile):
        # the privates' lays (LRC's extra lay, the GLG/SAC teleport) are powers usable until
        # the track step ends, so also here; the redeem step then goes on (it ends if no
        # redemption is affordable any more). Reference engine: its 18xx.games fixture
        # 1894_game_end_bankrupt, actions 445 (LRC) and 568-570 (GLG, its token, the pass).
        if not action.company:
            raise wrong_step(action, NAME)
        return track.lay(st, ci, action)
    sym = CORPS[ci].sym
    if not can_redeem_at_all(st, ci):
        raise IllegalAction(
            "may_not_redeem",
            f"{S_SHARES}: Belge and the starting French corporation may not redeem or reissue",
        )
    if isinstance(action, RedeemShare):
        return _redeem_shares(st, ci, action.count), DONE
    if not can_reissue(st, ci):
        raise IllegalAction(
            "cannot_reissue",
            f"{S_SHARES}: reissue only when the redeemed shares outnumber the Treasury's, and "
            "not in a turn with a redemption",
        )
    n = st.redeemed[ci] // 10
    st.ipo[ci] += st.redeemed[ci]
    st.redeemed[ci] = 0
    st.corp_cash[ci] += 100 * n
    st.par[ci] = 100
    st.t_reissued = True
    return [{"type": "reissued", "corporation": sym, "count": n}], DONE


def _redeem_shares(st: E1894State, ci: int, count: int) -> list[Event]:
    """One redemption of ``count`` pool shares at the market price each (errata A6: one
    action, 1 share, or 2 in the first OR of a set)."""
    sym = CORPS[ci].sym
    if count < 1 or count > redeem_limit(st):
        raise IllegalAction(
            "redeem_limit", f"{S_SHARES}: a redemption is 1 to {redeem_limit(st)} share(s) here"
        )
    if st.pool[ci] < 10 * count:
        raise IllegalAction(
            "none_in_pool", f"{S_SHARES}: the pool holds {st.pool[ci] // 10} {sym} share(s)"
        )
    cost = price(st, ci) * count
    if st.corp_cash[ci] < cost:
        raise IllegalAction("insufficient_cash", f"{S_SHARES}: the shares cost {cost}")
    st.corp_cash[ci] -= cost
    st.pool[ci] -= 10 * count
    st.redeemed[ci] += 10 * count
    st.t_redeemed += count
    return [{"type": "redeemed", "corporation": sym, "count": count, "price": cost}]
