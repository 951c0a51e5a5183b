"""Step 3 of a corporation's turn: build track.

Spec: designer's rules 7.3.3 "Build track" and 12.3; the 1894 rules summary, "Map, track
and tokens" (the lay rules themselves are :mod:`..track`); errata A8 (teleport once per game).

* Up to two tile lays; ``pass`` ends the step. In the last OR set (after the first D) the
  step is skipped.
* LRC's extra lay (once per game) comes on top of the two; the second ordinary lay may not be
  on the hex LRC's lay used in this turn.
* GLG's / SAC's teleport lay counts as one of the two; the private's token decision follows
  it (:mod:`.teleport_token`).
* The privates' lays (LRC, GLG/SAC) are powers usable until the track step ends, so also in
  the redeem step (:mod:`.redeem`).
* A green -> brown split that removes the corporation's own token makes it re-place that token
  at once (:mod:`.replace`); so does LRC's lay on the printed Paris, which lifts its token
  there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, LegalAction, MalformedAction

from .. import teleport
from .. import tokens as tokens_mod
from .. import track as track_mod
from ..actions import LayTile, Pass
from ..data import CORPS, PHASES, PRIVATE_INDEX, TELEPORT_PRIVATES
from ..privates import CORP_OWNER, price_range
from .common import DONE, REPLACE, S_TRACK, TELEPORT, TRACK, blocked_hexes, owns, pass_event

if TYPE_CHECKING:
    from ..state import E1894State

NAME = TRACK
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (LayTile, Pass)


def lrc_pending(st: E1894State, ci: int) -> bool:
    """LRC's extra lay keeps the track step open after the two lays: when the corporation owns
    LRC and has not used it, or when a player owns it, corporations may buy privates and the
    corporation's cash covers LRC's minimum price (it could be bought and used). Behaviour of
    the reference engine (recorded games; the cash condition from the differential runs)."""
    if st.lrc_used:
        return False
    li = PRIVATE_INDEX["LRC"]
    owner = st.private_owner[li]
    if owner == CORP_OWNER + ci:
        return True
    return (
        0 <= owner < CORP_OWNER
        and PHASES[st.phase].can_buy
        and price_range(li)[0] <= st.corp_cash[ci]
    )


def skip(st: E1894State, ci: int) -> bool:
    """The last OR set, or both lays made and no LRC lay pending."""
    return st.final_set or (len(st.t_laid) >= 2 and not lrc_pending(st, ci))


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """Every lay (ordinary, teleport, LRC's), then ``pass``."""
    out: list[LegalAction] = list(lay_options(st, ci))
    out.append(Pass())
    return out


def lay_options(st: E1894State, ci: int) -> list[LayTile]:
    """The tile lays open now: ordinary and teleport ones while fewer than two were made,
    LRC's while unused (:func:`..track.legal_tile_lays`)."""
    sym = CORPS[ci].sym
    phase = PHASES[st.phase].name
    cash = st.corp_cash[ci]
    blocked = blocked_hexes(st)
    out: list[LayTile] = []
    if len(st.t_laid) < 2:
        for lay in track_mod.legal_tile_lays(
            st.board, sym, phase, laid=st.t_laid, cash=cash, blocked_hexes=blocked
        ):
            out.append(LayTile(lay.hex, lay.tile, lay.rotation))
        for priv in TELEPORT_PRIVATES:
            if owns(st, ci, priv) and not st.teleport_used:
                for lay in track_mod.legal_tile_lays(
                    st.board,
                    sym,
                    phase,
                    laid=st.t_laid,
                    cash=cash,
                    blocked_hexes=blocked,
                    special=priv,
                ):
                    out.append(LayTile(lay.hex, lay.tile, lay.rotation, priv))
    if owns(st, ci, "LRC") and not st.lrc_used:
        for lay in track_mod.legal_tile_lays(
            st.board,
            sym,
            phase,
            laid=st.t_laid,
            cash=cash,
            blocked_hexes=blocked,
            special="LRC",
        ):
            out.append(LayTile(lay.hex, lay.tile, lay.rotation, "LRC"))
    if st.t_lrc_hex and len(st.t_laid) == 1:  # no second lay on LRC's hex of this turn
        out = [a for a in out if a.company == "LRC" or a.hex != st.t_lrc_hex]
    return out


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """A lay (the step goes on; a split of its own token or a teleport decision opens the
    step inside) or ``pass`` (the step ends).

    Raises:
        MalformedAction: ``unknown_special``.
        IllegalAction: ``not_owner``, ``lrc_used``, ``teleport_used``, ``no_lays_left``,
            ``same_hex``, and the lay rules' codes (:func:`..track.lay_tile`).
    """
    if isinstance(action, Pass):
        return [pass_event(ci, NAME)], DONE
    assert isinstance(action, LayTile)
    return lay(st, ci, action)


def lay(st: E1894State, ci: int, action: LayTile) -> tuple[list[Event], str | None]:
    """Check and make one tile lay, in the track step or (a private's lay) in the redeem step
    (:mod:`.redeem`); the outcome is ``None`` or the step inside to enter (:data:`REPLACE`,
    :data:`TELEPORT`), which comes back to the step the lay was made in
    (``t_teleport_step``)."""
    sym = CORPS[ci].sym
    special = action.company or ""
    if special:
        if special not in ("LRC", *TELEPORT_PRIVATES):
            raise MalformedAction("unknown_special", f"{special} has no tile power")
        if not owns(st, ci, special):
            raise IllegalAction("not_owner", f"{S_TRACK}: {sym} does not own {special}")
        if special == "LRC" and st.lrc_used:
            raise IllegalAction("lrc_used", f"{S_TRACK}: LRC's extra tile is once per game")
        if special in TELEPORT_PRIVATES:
            teleport.check_unused(st, special)
    if special != "LRC" and len(st.t_laid) >= 2:
        raise IllegalAction("no_lays_left", f"{S_TRACK}: two tile lays per OR")
    if special != "LRC" and len(st.t_laid) == 1 and action.hex == st.t_lrc_hex:
        raise IllegalAction(
            "same_hex", f"{S_TRACK}: the second lay may not be on a hex laid this turn (LRC's)"
        )
    old_paths = len(st.board.tile(action.hex).base_paths) if special == "LRC" else 0
    res = track_mod.lay_tile(
        st.board,
        sym,
        PHASES[st.phase].name,
        action.hex,
        action.tile,
        action.rotation,
        laid=st.t_laid,
        cash=st.corp_cash[ci],
        blocked_hexes=blocked_hexes(st),
        special=special,
    )
    inner = None
    # LRC on printed Paris (no track): the corporation chooses its token's city (REPLACE)
    if special == "LRC" and tokens_mod.lift_after_special_lay(st.board, sym, res.hex, old_paths):
        inner = REPLACE
        # back to the step of the lay after the token (a lay in the redeem step resumes it:
        # reference engine, its redeem step still open after the home token)
        st.t_teleport_step = st.step
    st.corp_cash[ci] -= res.cost
    if special == "LRC":
        st.lrc_used = True
        st.t_lrc_hex = res.hex
    else:
        st.t_laid.append((res.hex, res.upgrade))
    if special in TELEPORT_PRIVATES and teleport.after_lay(st, ci, special):
        st.t_teleport_step = st.step  # back to it after the decision (redeem or track)
        inner = TELEPORT
    if any(c == sym for c, _ in res.removed):
        inner = REPLACE
        st.t_teleport_step = st.step
    event = {
        "type": "tile",
        "corporation": sym,
        "hex": res.hex,
        "tile": res.tile_id,
        "rotation": action.rotation,
        "cost": res.cost,
    }
    return [event], inner
