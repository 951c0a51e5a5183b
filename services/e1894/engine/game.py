"""The 1894 title object (:class:`~services.kernel.engine.Game`).

>>> from services.e1894.engine import GAME
>>> state = GAME.new_state(4, seed=92791301)
>>> state.to_json()["starting_corporations"]
['Est', 'Belge']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from services.kernel.engine import (
    JSON,
    ActionCodec,
    Game,
    LegalAction,
    MalformedAction,
    Seat,
    State,
)

from . import describe as _describe
from .actions import CODEC
from .options import E1894Options
from .setup import new_state
from .state import E1894State


class E1894Game(Game[E1894Options]):
    """1894 (Jan Kłos): northern France and Belgium, 3-4 players."""

    id: ClassVar[str] = "e1894"
    name: ClassVar[str] = "1894"
    rules_version: ClassVar[str] = "1894-18xxgames-111f7f6"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 4
    options_model: ClassVar[type[E1894Options]] = E1894Options
    codec: ClassVar[ActionCodec] = CODEC

    def _new_state(self, num_players: int, seed: int, options: E1894Options) -> E1894State:
        return new_state(self, num_players, seed, options)

    def state_from_view(
        self,
        view: dict[str, JSON],
        seat: Seat | None,
        seed: int,
        options: Mapping[str, Any] | E1894Options | None = None,
    ) -> E1894State:
        """1894 has no hidden information: the view is the whole state, options included (the
        seed only drives the setup, already done). ``seed`` is unused.

        Raises:
            MalformedAction: the view is not a view of this title.
        """
        if not isinstance(view, Mapping) or "corporations" not in view:
            raise MalformedAction("bad_view", "not an 1894 view")
        return E1894State.from_json(self, dict(view), self.parse_options(options))

    def describe(self, state: State, action: LegalAction) -> str:
        """The move in words (:func:`.describe.describe`), e.g. ``"Lay tile 57 on H17
        (Lille), rotation 2"``."""
        assert isinstance(state, E1894State)  # the rules layer unwraps a resignation wrapper
        return _describe.describe(state, action)

    def summarize_view(self, view: dict[str, JSON], num_players: int) -> list[str]:
        """Cash, shares and privates per seat (:func:`.describe.summarize_view`)."""
        return _describe.summarize_view(view)


GAME = E1894Game()
