"""The one conversion of a game result (and of the clocks and takeovers that go
with it) to its message."""

from __future__ import annotations

from typing import Any

from roundhouse.v1 import game_pb2


def takeovers_proto(takeovers: list[dict[str, Any]]) -> list[game_pb2.SeatTakeover]:
    """``Takeover.to_json()`` items as ``SeatTakeover`` messages (an open
    takeover's ``until_version`` is 0)."""
    return [
        game_pb2.SeatTakeover(
            seat=t["seat"],
            from_version=t["from_version"],
            until_version=t.get("until_version") or 0,
            policy=t["policy"],
            reason=t["reason"],
        )
        for t in takeovers
    ]


def result_proto(result: dict[str, Any]) -> game_pb2.GameResult:
    """``{"scores", "ranks", "end_reason"}`` (``Result.to_json()``, plus
    ``takeovers`` and ``seat_weights`` when a seat was taken over) as a
    ``GameResult``. Scores are whole units of the title (dollars, points,
    francs); every title scores in integers."""
    return game_pb2.GameResult(
        scores=[int(s) for s in result["scores"]],
        ranks=list(result["ranks"]),
        end_reason=result["end_reason"],
        takeovers=takeovers_proto(result.get("takeovers", [])),
        seat_weights=result.get("seat_weights", []),
        forfeited_seats=result.get("forfeited_seats", []),
        timed_out_seats=result.get("timed_out_seats", []),
    )


def result_dict(result: game_pb2.GameResult) -> dict[str, Any]:
    """A ``GameResult`` back as the JSON :func:`result_proto` reads."""
    out: dict[str, Any] = {
        "scores": list(result.scores),
        "ranks": list(result.ranks),
        "end_reason": result.end_reason,
    }
    if result.forfeited_seats:
        out["forfeited_seats"] = list(result.forfeited_seats)
    if result.timed_out_seats:
        out["timed_out_seats"] = list(result.timed_out_seats)
    if result.takeovers:
        out["takeovers"] = [
            {
                "seat": t.seat,
                "from_version": t.from_version,
                "until_version": t.until_version or None,
                "policy": t.policy,
                "reason": t.reason,
            }
            for t in result.takeovers
        ]
        out["seat_weights"] = [round(w, 4) for w in result.seat_weights]
    return out


def clocks_proto(clock_json: dict[str, Any], at_ms: int, state=None) -> list[game_pb2.SeatClock]:
    """Every seat's ``SeatClock``: from a ``ClockState`` (``state``, remaining
    time as of ``at_ms``, i.e. now) or from its JSON stored with a log entry
    (as of the entry's ``at_ms``)."""
    out = []
    for s, c in enumerate(clock_json["seats"]):
        remaining = (
            state.remaining_ms(s, at_ms)
            if state is not None
            else max(0, c["bank_ms"] + c["grace_ms"])
        )
        out.append(
            game_pb2.SeatClock(
                seat=s,
                remaining_ms=remaining,
                running=c["running"],
                deadline_ms=c["deadline_ms"] or 0,
                flagged=c["flagged"],
            )
        )
    return out
