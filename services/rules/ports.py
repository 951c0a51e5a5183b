"""The ports of the rules layer: what it needs from the layers above, as protocols.

The GameRules servicer answers a finished game that Redis no longer holds from the archive. The
archive sits above the rules layer (it replays games through the rules' message builders), so
the rules layer names only this protocol; ``services.archive.fallback.ArchiveFallback``
implements it, and the entry point that starts a rules service plugs it in
(``services.cli.rules``). So no import runs from the rules up to the archive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from roundhouse.v1 import game_pb2


class ArchivePort(Protocol):
    """Finished games of one title, as the archive keeps them.

    ``stored`` is the archive's own record of a game (whatever :meth:`load` returns); the rules
    layer only hands it back.
    """

    async def load(self, game_id: str) -> Any | None:
        """The archived game of this title, or None."""

    async def has(self, game_id: str) -> bool:
        """Whether ``game_id`` is taken by an archived game of any title."""

    async def view(self, stored: Any, seat: int | None) -> game_pb2.GetViewResponse:
        """The final view of ``seat`` (None: a spectator)."""

    async def updates(self, stored: Any, from_version: int) -> list[game_pb2.GameUpdate]:
        """The game's updates from ``from_version`` on (WatchGame)."""

    def result(self, stored: Any) -> game_pb2.GetResultResponse:
        """The final result."""

    def legal_actions(self, stored: Any, seat: int) -> game_pb2.ListLegalActionsResponse:
        """No legal actions: the game is over (NOT_FOUND-free answer)."""

    def refuse_action(self, stored: Any, seat: int) -> None:
        """Raises the refusal of a move in a finished game."""


ArchiveFactory = Callable[[str, Any, int], ArchivePort]
"""``(title, database engine, cached games) -> ArchivePort``: how an entry point builds the
archive of the rules service it starts."""
