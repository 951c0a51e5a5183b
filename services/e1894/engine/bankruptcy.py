"""Bankruptcy of a corporation's president (the forced train he cannot pay).

Spec: the 1894 rules summary, "Game end" (a bankruptcy ends the game at once); the
condition and the scoring are the reference engine's (errata A, "bankruptcy"):

* Allowed in any step of the corporation's turn when its cash plus the president's cash, plus
  in the buy-train step everything he could sell, is below the depot's cheapest train. A
  train the corporation must buy is not required, and a train another corporation could sell
  does not prevent it.
* Declared in the buy-train step, the bankrupt president sells every share he can, by the
  emergency-sale rules (each
  corporation's largest allowed sale, again until none is allowed: pool limit, the
  president's certificate only to a player who can take it over, never a sale that passes
  on the presidency of the corporation that needed the train), the prices dropping as for
  any sale (declared in another step he sells nothing); then his cash is set to 0. His
  unsold shares and his privates stay with him and count in his final score.
* ``options.bankrupt_score`` (default ``liquidated``) can score him ``zero`` or, without the
  liquidation, like everybody else (``holdings``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event

from .data import CORPS
from .shares import can_sell_count, sell

if TYPE_CHECKING:
    from .state import E1894State


def liquidate(st: E1894State, seat: int, operating: int) -> list[Event]:
    """Sell everything ``seat`` may sell, corporation by corporation, largest sale first and
    again until nothing is allowed (the presidency of ``operating`` stays); then his cash is
    0. Returns the ``sold`` events."""
    events: list[Event] = []
    for ci in range(len(CORPS)):
        if not st.par[ci]:
            continue
        keep = ci == operating
        while True:
            held = st.holdings[ci][seat] // 10
            count = next(
                (
                    k
                    for k in range(held, 0, -1)
                    if can_sell_count(st, ci, seat, k, keep_presidency=keep) is None
                ),
                0,
            )
            if not count:
                break
            amount = sell(st, ci, seat, count)
            events.append(
                {
                    "type": "sold",
                    "player": seat,
                    "corporation": CORPS[ci].sym,
                    "count": count,
                    "amount": amount,
                }
            )
    st.cash[seat] = 0
    return events


def declare(st: E1894State, ci: int) -> list[Event]:
    """The president of ``ci`` goes bankrupt (checked beforehand): his holdings are
    liquidated (unless ``options.bankrupt_score`` is ``holdings``) and the game ends."""
    seat = st.president[ci]
    events: list[Event] = [{"type": "bankrupt", "player": seat, "corporation": CORPS[ci].sym}]
    if st.options.bankrupt_score != "holdings":
        if st.step == "buy_train":  # the only step with (emergency) selling
            events += liquidate(st, seat, ci)
        else:
            st.cash[seat] = 0
    st.bankrupt_seat = seat
    st.end_game("bankrupt")
    return events
