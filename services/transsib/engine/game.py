"""The Russian Railroads title object (``transsib``)."""

from __future__ import annotations

from typing import Any, ClassVar

from services.kernel.engine import ActionCodec, Game, LegalAction, State
from services.transsib.engine import describe as _describe
from services.transsib.engine.actions import CODEC
from services.transsib.engine.options import TranssibOptions, compile_rules
from services.transsib.engine.state import TranssibState


class TranssibGame(Game[TranssibOptions]):
    """Russian Railroads (Hans im Glück 2013), base game, 2-4 players.

    >>> from services.transsib.engine import GAME
    >>> state = GAME.new_state(4, seed=7)
    >>> state.active_seats() == (state.order[3],)  # the 4th player picks a bonus card first
    True
    """

    id: ClassVar[str] = "transsib"
    name: ClassVar[str] = "Russian Railroads"
    rules_version: ClassVar[str] = "transsib-spec-2026.11/engine-3"  # issue 27: sourced rules
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    options_model: ClassVar[type[TranssibOptions]] = TranssibOptions
    codec: ClassVar[ActionCodec] = CODEC

    def _new_state(self, num_players: int, seed: int, options: TranssibOptions) -> TranssibState:
        return TranssibState.new(self, num_players, seed, compile_rules(options))

    def state_from_view(self, view: dict[str, Any], seat: int | None, seed: int) -> TranssibState:
        """A full state consistent with ``view`` (see :func:`.view.state_from_view`)."""
        from services.transsib.engine.view import state_from_view

        return state_from_view(self, view, seat, seed)

    def describe(self, state: State, action: LegalAction) -> str:
        """The move in words (:func:`.describe.describe`), e.g. ``"Place 2 workers on
        Black track (3 black track steps)"``."""
        assert isinstance(state, TranssibState)  # the rules layer unwraps a resignation wrapper
        return _describe.describe(state, action)

    def summarize_view(self, view: dict[str, Any], num_players: int) -> list[str]:
        """Points, coins, workers... per seat (:func:`.describe.summarize_view`)."""
        return _describe.summarize_view(view)


GAME = TranssibGame()
