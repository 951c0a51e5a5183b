"""Seeded setup of 1894: the reference engine's random draws and the starting position.

Spec: the 1894 rules summary, "Replay semantics" (the LCG) and "Setup and auction":

* the random generator is ``state = (1103515245 * state + 12345) mod 2^31`` started from the
  seed (``data/game_constants_effective.json`` RAND_A/C/M);
* first 5 draws, one per French regular corporation in the order PLM, Ouest, Nord, Est, CFOR:
  the smallest draw names the *French starting corporation*; then 2 draws for GLG and SAC: the
  one with the smaller draw is removed;
* the four other 180 major shareholdings are removed; BMS is always in;
* each player gets one 10% share of the French starting corporation and one of Belge (the
  shares numbered 8, 7, 6, 5 in seat order); with 3 players one more of each goes to the pool.

>>> draw_setup(1)
('Ouest', 'GLG')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .data import (
    CORP_INDEX,
    FRENCH_REGULAR,
    MAJOR_PRIVATE_OF,
    PRIVATE_INDEX,
    PRIVATES,
    STARTING_CASH,
    TELEPORT_PRIVATES,
)

if TYPE_CHECKING:
    from .game import E1894Game
    from .options import E1894Options
    from .state import E1894State

RAND_A = 1103515245
RAND_C = 12345
RAND_M = 2**31


class LCG:
    """The reference engine's linear congruential generator (its state is one int)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed

    def next(self) -> int:
        """Advance the generator and return the new state (0 <= value < 2^31)."""
        self.state = (RAND_A * self.state + RAND_C) % RAND_M
        return self.state


def draw_setup(seed: int) -> tuple[str, str]:
    """(French starting corporation, removed teleport private) for a seed."""
    rng = LCG(seed)
    draws = [rng.next() for _ in FRENCH_REGULAR]
    french = FRENCH_REGULAR[draws.index(min(draws))]
    tdraws = [rng.next() for _ in TELEPORT_PRIVATES]
    removed = TELEPORT_PRIVATES[tdraws.index(min(tdraws))]
    return french, removed


def initial_shares(num_players: int) -> tuple[list[int], int]:
    """Share numbers handed to seats 0.. (8, 7, 6, 5) and the pool share number (5 with three
    players, else -1), for both starting corporations."""
    numbers = [8 - s for s in range(num_players)]
    return numbers, (5 if num_players == 3 else -1)


def new_state(game: E1894Game, num_players: int, seed: int, options: E1894Options) -> E1894State:
    """The position before the first auction action."""
    from .privates import CLOSED, UNSOLD
    from .state import E1894State

    st = E1894State.blank(game, num_players, options)
    french, removed = draw_setup(seed)
    st.starting_corps = (CORP_INDEX[french], CORP_INDEX["Belge"])
    st.cash = [STARTING_CASH[num_players]] * num_players
    for pi, info in enumerate(PRIVATES):
        out = info.sym == removed or (info.major_of and info.major_of not in (french, "Belge"))
        st.private_owner[pi] = CLOSED if out else UNSOLD
    st.auc_companies = sorted(
        (pi for pi in range(len(PRIVATES)) if st.private_owner[pi] == UNSOLD),
        key=lambda pi: (PRIVATES[pi].value, pi),
    )
    for ci in st.starting_corps:
        for seat in range(num_players):
            st.holdings[ci][seat] += 10
            st.ipo[ci] -= 10
        if num_players == 3:
            st.pool[ci] += 10
            st.ipo[ci] -= 10
    assert PRIVATE_INDEX[MAJOR_PRIVATE_OF["Belge"]] in st.auc_companies
    return st
