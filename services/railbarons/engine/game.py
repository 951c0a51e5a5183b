"""The Chicago Express title object (``railbarons``), registered as ``GAME``.

>>> from services.railbarons.engine import GAME
>>> state = GAME.new_state(4, seed=1)
>>> state.active_seats(), [str(a) for a in state.legal_actions(0)][:3]
((0,), ['pass', 'bid amount=7', 'bid amount=8'])
"""

from __future__ import annotations

from typing import Any

from services.kernel.engine import Game, InvalidOptions, LegalAction, State
from services.railbarons.engine import describe as _describe
from services.railbarons.engine.actions import CODEC
from services.railbarons.engine.determinise import state_from_view
from services.railbarons.engine.options import RailbaronsOptions
from services.railbarons.engine.state import RailbaronsState


class RailbaronsGame(Game[RailbaronsOptions]):
    """Chicago Express (Queen Games 2008), 2 to 6 players; rules in ``railbarons.md``."""

    id = "railbarons"
    name = "Chicago Express"
    rules_version = "1.1"
    min_players = 2
    max_players = 6
    options_model = RailbaronsOptions
    codec = CODEC

    def _new_state(
        self, num_players: int, seed: int, options: RailbaronsOptions
    ) -> RailbaronsState:
        try:
            return RailbaronsState.new(self, num_players, seed, options)
        except ValueError as exc:
            raise InvalidOptions(str(exc)) from None

    def state_from_view(self, view: dict[str, Any], seat: int | None, seed: int) -> RailbaronsState:
        """The full state behind ``view`` (nothing is hidden, §3.7; ``seed`` is unused).

        Raises:
            MalformedAction: ``view`` is not a railbarons view.
        """
        return state_from_view(self, view)

    def describe(self, state: State, action: LegalAction) -> str:
        """The move in words (:func:`.describe.describe`), e.g. ``"Bid $12 on PRR"``."""
        assert isinstance(state, RailbaronsState)  # the rules layer unwraps a resignation wrapper
        return _describe.describe(state, action)

    def summarize_view(self, view: dict[str, Any], num_players: int) -> list[str]:
        """Cash and shares per seat (:func:`.describe.summarize_view`)."""
        return _describe.summarize_view(view)


GAME = RailbaronsGame()
"""The registered title object."""
