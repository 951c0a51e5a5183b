"""The industry track (§8).

Fields (default layout, §8.1): B1 B2 B3 B4 | F1 | B5 | F2 | B6 | F3 | B7 | F4 | B8 | F5 | B9,
where F* are the five factory gaps. A marker cannot enter or jump an empty gap; a
step that would is lost. Entering a field that holds a factory gives that
factory's action at once (§8.2). Specials (the "?" fields) fire once per player.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.options import Rules
    from services.transsib.engine.player import Player


def marker_capacity(rules: Rules, p: Player, marker: int) -> int:
    """Steps marker ``marker`` can still take before an empty gap or the end."""
    pos = p.ind[marker]
    if pos < 0:
        return 0
    gap_of = rules.gap_of_field
    last = len(gap_of) - 1
    factories = p.factories
    n = 0
    while pos < last:
        g = gap_of[pos + 1]
        if g >= 0 and not factories[g]:
            break
        pos += 1
        n += 1
    return n


def capacity(rules: Rules, p: Player) -> int:
    """Steps all active markers together can still take (cached on the player)."""
    v = p.indcap
    if v < 0:
        v = marker_capacity(rules, p, 0) + marker_capacity(rules, p, 1)
        p.indcap = v
    return v


def field_score(rules: Rules, p: Player) -> int:
    """Round points of the industry markers (§8.1, §13): each active marker scores its
    field (a factory field scores the previous board field)."""
    pts = rules.field_points
    total = 0
    for pos in p.ind:
        if pos >= 0:
            total += pts[pos]
    return total
