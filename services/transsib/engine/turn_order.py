"""Turn order (§5.5, §11).

The player on O-1 becomes 1st and the player on O-2 becomes 2nd; everyone else
keeps their relative order behind them. If the current 1st player takes O-2 and
nobody takes O-1, that player stays 1st (§11.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.options import TranssibOptions


def rearrange(order: list[int], o1: int, o2: int) -> list[int]:
    """The next round's order from this round's ``order`` and the claims (-1 = none).

    >>> A, B, C, D = range(4)
    >>> rearrange([A, B, C, D], B, C)
    [1, 2, 0, 3]
    >>> rearrange([A, B, C, D], -1, A)
    [0, 1, 2, 3]
    """
    if o1 < 0 and o2 < 0:
        return list(order)
    if o1 < 0 and o2 == order[0]:
        return list(order)
    rest = [s for s in order if s != o1 and s != o2]
    new = [o1] if o1 >= 0 else [rest.pop(0)]
    if o2 >= 0:
        new.append(o2)
    return new + rest


def claim_refusal(
    order: list[int],
    claims: list[int],
    seat: int,
    position: int,
    num_players: int,
    options: TranssibOptions,
) -> tuple[str, str] | None:
    """Why ``seat`` may not claim turn ``position`` (1 or 2) now; None if it may (§5.5)."""
    other = claims[1] if position == 1 else claims[0]
    if other == seat:
        return ("claims_both", "§5.5: no player may hold both turn-order spaces")
    current = order.index(seat) + 1
    if num_players >= 3:
        if options.forbid_claiming_own_position and current == position:
            return (
                "claim_own_position",
                f"§5.5: you already hold turn position {position}",
            )
    elif position == 1 and current == 1 and not options.two_player_first_may_take_o1:
        return ("claim_own_position", "§5.5: the first player may not take O-1 (option)")
    return None
