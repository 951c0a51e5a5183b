"""``State.clone()`` copies every attribute of every title's state (the contract: a clone is
the same state, independent of the original).

The clones are written out field by field for speed (no ``deepcopy``), so a field added to a
state and forgotten in its ``clone`` would make a clone that plays differently. This test
finds such a field: after some moves, the clone has exactly the attributes of the original,
each with an equal value (compared field by field, down into the records it holds).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from services.kernel.playout import choose_per_entry
from services.kernel.rng import SeededRandom
from services.rules.titles import available_titles, get_game

CASES = [
    (title, n)
    for title in available_titles()
    for n in range(get_game(title).min_players, get_game(title).max_players + 1)
]


REBUILT_LAZILY: dict[str, set[str]] = {
    # a player's capacity cache: a clone starts empty and rebuilds it on first use
    # (services/transsib/engine/player.py, ``Player.clone``)
    "transsib": {"state.players[].cap"},
}
"""Caches a clone leaves out on purpose, by title (paths with the indices dropped)."""


def _attributes(obj: Any) -> dict[str, Any]:
    """Every attribute an object holds: its ``__dict__`` and its slots (all classes)."""
    out = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                out[name] = getattr(obj, name)
    return out


def _differences(a: Any, b: Any, path: str, depth: int = 0) -> list[str]:
    if a is b:
        return []
    if type(a) is not type(b):
        return [f"{path}: {type(a).__name__} in the original, {type(b).__name__} in the clone"]
    if isinstance(a, int | float | str | bytes | bool | type(None) | frozenset):
        return [] if a == b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items in the original, {len(b)} in the clone"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, f"{path}[{i}]", depth + 1)
        ]
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys differ"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}[{k!r}]", depth + 1)]
    if isinstance(a, set):
        return [] if a == b else [f"{path}: sets differ"]
    if isinstance(a, SeededRandom):
        return [] if a.state == b.state else [f"{path}: generator state differs"]
    if depth > 6:
        return []
    attrs_a, attrs_b = _attributes(a), _attributes(b)
    if not attrs_a and not attrs_b:
        return [] if a == b else [f"{path}: {a!r} != {b!r}"]
    missing = sorted(set(attrs_a) - set(attrs_b))
    extra = sorted(set(attrs_b) - set(attrs_a))
    out = [f"{path}.{name}: not copied" for name in missing]
    out += [f"{path}.{name}: only in the clone" for name in extra]
    for name in sorted(set(attrs_a) & set(attrs_b)):
        out += _differences(attrs_a[name], attrs_b[name], f"{path}.{name}", depth + 1)
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}p")
@pytest.mark.parametrize("moves", [0, 40, 120])
def test_clone_copies_every_attribute(case, moves):
    title, n = case
    state = get_game(title).new_state(n, 20261207)
    rng = SeededRandom(7)
    for _ in range(moves):
        if state.is_terminal():
            break
        seat = state.active_seats()[0]
        state.apply(seat, choose_per_entry(state.legal_actions(seat), rng))
    twin = state.clone()
    allowed = REBUILT_LAZILY.get(title, set())
    found = _differences(state, twin, "state")
    assert [d for d in found if re.sub(r"\[\d+\]", "[]", d.split(":")[0]) not in allowed] == []
