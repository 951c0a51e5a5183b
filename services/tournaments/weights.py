"""What a finished game's result says about dropped seats, as data for the
tournament service and the ratings (pure).

A result (``GameResult`` / its JSON from the rules service) records each seat a
hosted bot took over (``takeovers``: seat, from which version, until which,
the bot, why) and, when any seat was, ``seat_weights``: per seat the share of
its moves its own player made. Ratings scale a seat's update by that weight
(``services/tournaments/ratings.py``, ``RatedSeat.weight``), so a game a bot
finished for a player who timed out moves that player's rating less.
``forfeited_seats`` (the seats ranked last for resigning or forfeiting on
time) is what a tournament's standings show as forfeits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def seat_weights(result: Mapping[str, Any]) -> list[float]:
    """Per seat, the ratings weight (0-1): ``result["seat_weights"]``, or 1.0
    for every seat of a result without takeovers."""
    n = len(result["ranks"])
    weights = list(result.get("seat_weights") or [1.0] * n)
    if len(weights) != n or not all(0.0 <= w <= 1.0 for w in weights):
        raise ValueError(f"seat_weights must be {n} values within 0-1, got {weights}")
    return weights


def forfeited_seats(result: Mapping[str, Any]) -> list[int]:
    """Seats that resigned or forfeited on time (ranked last), in seat order."""
    return sorted(result.get("forfeited_seats", []))


def taken_over_seats(result: Mapping[str, Any]) -> dict[int, int]:
    """Seat -> the version from which a bot played it (its first takeover)."""
    out: dict[int, int] = {}
    for t in result.get("takeovers", []):
        out.setdefault(int(t["seat"]), int(t["from_version"]))
    return out


def rated_seats(result: Mapping[str, Any], accounts: Sequence[str], bots: Sequence[bool]):
    """The ``RatedSeat`` of each seat (``services.tournaments.ratings``): its
    account, rank, whether the account is a bot, and its weight."""
    from services.tournaments.ratings import RatedSeat

    weights = seat_weights(result)
    return tuple(
        RatedSeat(account, int(rank), bool(bot), weight)
        for account, rank, bot, weight in zip(accounts, result["ranks"], bots, weights, strict=True)
    )
