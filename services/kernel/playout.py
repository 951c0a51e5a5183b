"""Random play-outs over the engine contract, shared by tests, benchmarks,
the embedded CLI mode and the ``random`` bot."""

from __future__ import annotations

from collections.abc import Callable

from services.kernel.engine import Action, LegalAction, Seat, State, choose_per_entry
from services.kernel.rng import SeededRandom

Policy = Callable[[State, Seat], Action]
"""``choose(state, seat) -> action``: picks one concrete action of
``state.legal_actions(seat)`` (a plain entry or a value of one of its ranges)."""


def playout_actions(state: State, seat: Seat) -> list[LegalAction]:
    """The entries a random play-out chooses from: ``state.playout_actions(seat)`` when the
    title defines it (a non-empty subset of the legal entries, a range possibly narrowed,
    that keeps random games finite, e.g. 1894's auction, where bids may otherwise absorb
    every franc for ever), else ``state.legal_actions(seat)``. Plain entries and ranges as
    in ``legal_actions``; every concrete action they stand for is legal."""
    hint = getattr(state, "playout_actions", None)
    return hint(seat) if hint is not None else state.legal_actions(seat)


def random_choice(state: State, seat: Seat, rng: SeededRandom) -> Action:
    """One action of :func:`playout_actions`: an entry drawn uniformly, then a value of it
    where it is a range (:func:`~services.kernel.engine.choose_per_entry`)."""
    return choose_per_entry(playout_actions(state, seat), rng)


def random_policy(rng: SeededRandom) -> Policy:
    """A policy that picks one play-out entry (:func:`playout_actions`) uniformly, then a
    value of it uniformly where the entry is a range (:func:`random_choice`). Uniform over
    concrete actions instead (:func:`~services.kernel.engine.choose_uniform`) lets a range of
    hundreds of prices drown every other move: all-random 1894 games then run to 75,000 moves.
    """

    def choose(state: State, seat: Seat) -> Action:
        return random_choice(state, seat, rng)

    return choose


def play_out(
    state: State,
    policies: dict[Seat, Policy] | Policy,
    rng: SeededRandom,
    max_steps: int = 100_000,
    on_step: Callable[[Seat, Action, list], None] | None = None,
) -> State:
    """Play ``state`` to the end in place and return it.

    When several seats are active, the seat to move is drawn with ``rng``.

    Raises:
        RuntimeError: the game did not end within ``max_steps`` actions.
    """
    for _ in range(max_steps):
        if state.is_terminal():
            return state
        seats = state.active_seats()
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        policy = policies[seat] if isinstance(policies, dict) else policies
        action = policy(state, seat)
        events = state.apply(seat, action)
        if on_step is not None:
            on_step(seat, action, events)
    raise RuntimeError(f"game did not end within {max_steps} steps")
