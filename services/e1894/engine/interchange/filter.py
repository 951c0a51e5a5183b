"""Undo/redo filtering of a recorded 18xx.games action list.

Spec: the 1894 rules summary, "Action JSON format" (``filtered_actions``): walk the raw list;
an ``undo`` removes the kept actions after its target (``action_id``; 0 = everything; none =
the last kept action) and pushes them as one group; a ``redo`` puts the most recent group back;
any other action clears the stack of groups. Chat ``message`` actions are never undone and
never clear the stack.

>>> raw = [{"id": 1, "type": "bid"}, {"id": 2, "type": "pass"}, {"id": 3, "type": "undo"},
...        {"id": 4, "type": "redo"}, {"id": 5, "type": "undo", "action_id": 1}]
>>> [a["id"] for a in filtered_actions(raw)]
[1]
"""

from __future__ import annotations

from typing import Any


def filtered_actions(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The effective actions, in order (undo/redo resolved, undo/redo entries dropped)."""
    kept: list[dict[str, Any]] = []
    groups: list[list[dict[str, Any]]] = []
    for action in actions:
        kind = action.get("type")
        if kind == "undo":
            target = action.get("action_id")
            if target is None:
                idx = _last_undoable(kept)
                cut = idx if idx >= 0 else len(kept)
            elif target == 0:
                cut = 0
            else:
                pos = [i for i, a in enumerate(kept) if a.get("id") == target]
                cut = pos[-1] + 1 if pos else len(kept)
            group = [a for a in kept[cut:] if a.get("type") != "message"]
            kept = kept[:cut] + [a for a in kept[cut:] if a.get("type") == "message"]
            groups.append(group)
        elif kind == "redo":
            if groups:
                kept.extend(groups.pop())
        else:
            if kind != "message":
                groups = []
            kept.append(action)
    return kept


def _last_undoable(kept: list[dict[str, Any]]) -> int:
    for i in range(len(kept) - 1, -1, -1):
        if kept[i].get("type") != "message":
            return i
    return -1
