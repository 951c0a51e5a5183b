"""NDJSON stream reading with resume, shared by the sync and async clients.

A Roundhouse stream (``docs/api.md``) is one JSON object per line, with an empty line sent as a
keep-alive at least every ``keepalive_s`` seconds (10 s on the server). A stream that stays silent
longer than ``silence_s`` is taken as dead: the client reconnects and resumes after the last
version (table streams) or event id (account event streams) it saw, so no line is lost and none
repeats.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ResumePoint:
    """Where a stream resumes: after ``version`` (table streams) or after ``event_id``
    (event streams; ``moves``: ask for the moves on each current ``yourTurn``)."""

    version: int | None = None
    event_id: str | None = None
    finished: bool = False
    seen_events: set[str] = field(default_factory=set)
    moves: bool = False

    def params(self, kind: str) -> dict[str, Any]:
        """The query parameters that resume a stream of ``kind`` (``table`` or ``events``)."""
        if kind == "table":
            return {} if self.version is None else {"from_version": self.version}
        params: dict[str, Any] = {"moves": "true"} if self.moves else {}
        if self.event_id is not None:
            params["from_id"] = self.event_id
        return params

    def accept(self, kind: str, line: dict[str, Any]) -> bool:
        """Record ``line``; False when it repeats one already delivered (after a resume)."""
        if kind == "table":
            version = line.get("version")
            if isinstance(version, int):
                if (
                    self.version is not None
                    and version <= self.version
                    and line.get("type") != "state"
                ):
                    return False
                self.version = version
            if line.get("finished"):
                self.finished = True
            return True
        event_id = line.get("id")
        if isinstance(event_id, str):
            if event_id in self.seen_events:
                return False
            self.seen_events.add(event_id)
            self.event_id = event_id
        return True


def parse_line(raw: str) -> dict[str, Any] | None:
    """One decoded stream line, or None for a keep-alive (an empty line)."""
    raw = raw.strip()
    if not raw:
        return None
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError(f"stream line is not a JSON object: {raw[:80]}")
    return value
