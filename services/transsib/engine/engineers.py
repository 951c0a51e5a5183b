"""The engineers strip (§3.1 step 9, §10).

Strip slots left to right: upcoming (dark side up), variable action spaces (light
side up, public action spaces E-VAR-1/E-VAR-2) and the hiring space (E-HIRE).
At each cleanup every engineer moves one slot right; an unhired engineer on the
hiring space leaves the game (§10.1).
"""

from __future__ import annotations

from services.kernel.rng import SeededRandom
from services.transsib.engine import data as D


def setup_strip(num_players: int, rng: SeededRandom) -> tuple[list[int], list[int]]:
    """Deal the strip for ``num_players`` (§3.1 step 9, data ``engineer_strip``).

    Returns:
        (strip, box): engineer indices per slot (-1 = empty) and the unused
        lettered engineers (secret, in the box).
    """
    stacks: dict[str, list[int]] = {"A": [], "B": []}
    for e in D.ENGINEERS:
        if e.stack in stacks:
            stacks[e.stack].append(e.index)
    for pile in stacks.values():
        rng.shuffle(pile)
    layout = D.PLAYER_COUNT[num_players]["engineer_strip"]
    strip = []
    for letter in layout:
        strip.append(stacks[letter].pop() if letter else -1)
    box = sorted(stacks["A"] + stacks["B"])
    return strip, box


def slot_kinds(num_players: int) -> tuple[str, ...]:
    """``upcoming`` / ``variable`` / ``hire`` per strip slot."""
    return tuple(D.PLAYER_COUNT[num_players]["engineer_strip_kinds"])


def variable_slots(num_players: int) -> tuple[int, ...]:
    """Strip slots of E-VAR-1, E-VAR-2 (as many as the board side has)."""
    return tuple(i for i, k in enumerate(slot_kinds(num_players)) if k == "variable")


def shift(strip: list[int]) -> tuple[list[int], int]:
    """Every engineer one slot right (§10.1); returns (new strip, engineer that left or -1)."""
    left = strip[-1]
    return [-1] + strip[:-1], left
