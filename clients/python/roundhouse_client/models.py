"""Typed answers of the Roundhouse HTTP API (pydantic models).

The models name the fields clients rely on (``docs/api.md``) and keep any others the server
adds (``extra="allow"``), so a newer server does not break an older client.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Token(_Model):
    """A personal API token (shown once) and its scopes."""

    token: str
    scopes: list[str] = Field(default_factory=list)


class Account(_Model):
    """An account: a person, a bot account or a system bot (``kind``)."""

    username: str
    kind: str = ""
    account_id: str = ""


class Seat(_Model):
    """One seat of a table: its number, and who holds it (``""`` when open)."""

    seat: int
    account: str = ""


class Table(_Model):
    """A lobby table. ``status`` is ``open``, ``running``, ``finished`` or ``aborted``."""

    table_id: str
    title: str = ""
    status: str = ""
    num_players: int = 0
    seats: list[Seat] = Field(default_factory=list)


class Range(_Model):
    """The values one integer field of a move may take: ``min``, ``min + step``, ... ``max``."""

    field: str
    min: int
    max: int
    step: int = 1

    def values(self) -> range:
        """Every legal value of the field, in order."""
        return range(self.min, self.max + 1, max(1, self.step))


class Move(_Model):
    """A legal move: its label in words and the action to send.

    For a ranged move (``range`` set), ``action`` carries the field at ``range.min``; use
    :meth:`with_value` for another value of the range.
    """

    label: str
    action: dict[str, Any]
    range: Range | None = None

    def with_value(self, value: int) -> dict[str, Any]:
        """The action with its ranged field set to ``value``.

        Raises ValueError when the move has no range, or the value is not one of its values.
        """
        if self.range is None or not self.range.field:
            raise ValueError("this move has no range")
        if value not in self.range.values():
            raise ValueError(
                f"{value} is not in {self.range.field} {self.range.min}..{self.range.max}"
                f" step {self.range.step}"
            )
        return {**self.action, self.range.field: value}


class Moves(_Model):
    """The caller's legal moves at ``version`` (empty when it is not the caller's turn)."""

    version: int
    moves: list[Move] = Field(default_factory=list)


def turn_moves(event: dict[str, Any]) -> Moves | None:
    """The moves a ``yourTurn`` event carries (a stream opened with ``moves=True``), or None
    when it carries none (the turn had passed when it was sent: ask ``moves()``)."""
    if event.get("type") != "yourTurn" or event.get("moves") is None:
        return None
    return Moves.model_validate({"version": event["version"], "moves": event["moves"]})


class MoveResult(_Model):
    """The answer to a move: the version after it, the seats to move next, whether it ended."""

    version: int
    active_seats: list[int] = Field(default_factory=list)
    finished: bool = False
