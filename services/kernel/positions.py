"""Position keys: whether a game is back at a position it has been at (issue 29: no game may
loop without progress). Used by the bots' loop avoidance (``services/bots/loops.py``) and the
rules service's repetition guard (``services/rules/repetition.py``)."""

from __future__ import annotations

import hashlib
import json

from services.kernel.engine import State

IGNORED = ("version", "cash")
"""Fields of ``state.to_json()`` a key leaves out: the move counter, and the players' money
(money that only accumulates, as 1894's all-pass auction pays the privates' revenue, is not
progress)."""


def position_key(state: State) -> str:
    """The position's key: a SHA-1 hex digest (40 characters) of ``state.to_json()`` without
    :data:`IGNORED` (canonical JSON, keys sorted)."""
    data = {k: v for k, v in state.to_json().items() if k not in IGNORED}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()
