"""End of the game and the final ranking (spec §11).

The end is triggered when any of these holds (§11 [V]):

* ``locomotives``: 3 or more companies (of all five) have no locomotives on their charters;
* ``shares``: 3 or more companies have no unsold shares;
* ``houses``: the general supply holds 3 or fewer houses;
* ``detroit``: Detroit's track value reaches 8.

The game then ends right after the next General Dividend phase (§11, §10.4). The player
with the most cash wins; tied players share the rank (``tiebreak`` §11 [S]).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event, Result
from services.railbarons.engine import data, phases

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES
END_CONDITIONS = ("locomotives", "shares", "houses", "detroit")


def conditions_met(st: RailbaronsState) -> list[str]:
    """The end conditions that hold now, in :data:`END_CONDITIONS` order."""
    out = []
    if sum(1 for c in range(NC) if st.locos[c] <= 0) >= data.END_LOCOMOTIVES_COMPANIES:
        out.append("locomotives")
    if sum(1 for c in range(NC) if st.sold[c] >= data.SHARES[c]) >= data.END_SHARES_COMPANIES:
        out.append("shares")
    if st.houses <= data.END_HOUSES:
        out.append("houses")
    if st.ind[data.DETROIT] >= data.DETROIT_MAX:
        out.append("detroit")
    return out


def check(st: RailbaronsState, ev: list[Event]) -> None:
    """Record the end conditions the first time any holds (all are monotone)."""
    if st.end_reason:
        return
    met = conditions_met(st)
    if met:
        st.end_reason = "+".join(met)
        ev.append({"type": "end_triggered", "conditions": met})


def final_result(st: RailbaronsState) -> Result:
    """Cash per seat ranked, ties shared (or broken by shares held, ``tiebreak``)."""
    n = st.num_players
    tiebreak = None
    if st.rules.tiebreak_shares:
        tiebreak = [sum(st.held[s * NC : (s + 1) * NC]) for s in range(n)]
    return Result.from_scores(list(st.cash), st.end_reason, tiebreak)


def finish(st: RailbaronsState, ev: list[Event]) -> None:
    """End the game now (§11). Nobody is active afterwards; the turn pointer is
    set to the first player so a finished state has one canonical form."""
    st.phase = phases.OVER
    st.active = st.turn = st.first_player
    st.final = final_result(st)
    ev.append(
        {
            "type": "game_over",
            "end_reason": st.end_reason,
            "scores": list(st.final.scores),
            "ranks": list(st.final.ranks),
        }
    )
