"""Static evaluation of a Russian Railroads position for the one-step greedy bot.

``evaluate(state, seat)`` estimates the points ``seat`` will have at the end of the game:

* its score now, plus what the position would score at this and every later round
  scoring (round points × rounds left, §13);
* a share of what is built but not yet scoring (track beyond the locomotives' reach,
  reach beyond the track), progress of the Trans-Siberian black marker towards the next
  colour unlock (§6.3), industry room, coins, doublers, engineers (majority, §10.3),
  extra workers and end bonus cards;
* an estimate for actions taken but not finished (pending track steps, locomotive or
  factory choices...), so that placing workers is not judged before its effect lands.

It sees the engine only through its read API (:mod:`services.transsib.engine.reading`).
"""

from __future__ import annotations

from services.transsib.engine.reading import (
    COLOUR_VALUES,
    COLOUR_VALUES_REVALUED,
    UNLOCK_SPACES,
    PlayerReading,
    read,
)

_PENDING = {
    "track": 2.5,
    "industry": 3.0,
    "loco_choice": 6.0,
    "loco_in_hand": 1.0,
    "question": 5.0,
    "end_bonus": 9.0,
}
WORKER_VALUE = 1.0
"""Points a free (unplaced) worker is worth while its owner has not passed."""


def _unreached_value(p: PlayerReading, rounds_left: int) -> float:
    """Track laid beyond the reach and reach beyond the track, valued at a fraction."""
    total = 0.0
    values = COLOUR_VALUES_REVALUED if p.revalued else COLOUR_VALUES
    for line in p.lines:
        reach = line.reach
        length = line.length
        markers = line.markers
        front = markers[0]
        if front > reach:
            # the colours on spaces reach+1..front would score with more locomotives
            prev = 0
            for c in range(4, -1, -1):
                q = markers[c]
                if q > prev:
                    lo = max(prev, reach)
                    if q > lo:
                        total += 0.35 * values[c] * (q - lo)
                    prev = q
        elif reach > front and front < length:
            total += 0.4 * min(reach - front, length - front)
    return total * max(rounds_left - 1, 0)


def evaluate(state, seat: int) -> float:
    """Estimated final points of ``seat`` (higher is better)."""
    r = read(state)
    if r.over:
        scores = r.scores
        mine = scores[seat]
        best_other = max((q for i, q in enumerate(scores) if i != seat), default=0)
        return mine + 0.5 * (mine - best_other)
    return _value(r, seat)


def _value(r, seat: int) -> float:
    """:func:`evaluate` of an unfinished position's reading."""
    p = r.player(seat)
    rounds_left = r.rounds - r.round + 1
    value = float(p.score) + p.round_points * rounds_left
    value += _unreached_value(p, rounds_left)
    # the black Trans-Siberian marker opens the better colours (§6.3)
    ts_black = p.lines[0].markers[0]
    for space in UNLOCK_SPACES:
        if ts_black < space:
            value += 2.0 * ts_black / space * min(rounds_left, 3)
            break
    value += 1.5 * p.colours_unlocked * min(rounds_left, 4)
    value += 0.8 * p.industry_room if rounds_left > 1 else 0.0
    value += 1.2 * p.coins + 1.0 * p.doublers
    value += 9.0 * p.engineers + 8.0 * p.end_bonus_cards
    value += 3.0 * p.extra_workers * max(rounds_left - 1, 0)
    value += 1.5 * p.factories
    # actions taken but not yet carried out
    for pending in r.pending:
        if pending.seat != seat:
            continue
        kind = pending.kind
        if kind == "track" or kind == "industry":
            value += _PENDING[kind] * pending.left
        elif kind == "effects":
            value += 2.5 * pending.left
        else:
            value += _PENDING.get(kind, 0.0)
    # a free worker is still worth something this round, unless the seat has passed
    if not p.passed:
        value += WORKER_VALUE * p.free_workers
    value += 5.0 * p.end_bonus_due
    value += 4.0 * p.bonuses_gained
    return value


def estimates(state) -> list[float]:
    """Each seat's estimated final points (index = seat), for the search's cut-offs: the
    unfinished position's :func:`evaluate` of every seat from one reading; a finished game's
    scores."""
    r = read(state)
    if r.over:
        return [float(q) for q in r.scores]
    return [_value(r, s) for s in range(r.num_players)]
