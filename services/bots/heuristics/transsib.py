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

Cheap by design: it reads the engine's state directly (one call per legal action).
"""

from __future__ import annotations

from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import scoring as S
from services.transsib.engine.frames import (
    F_END_BONUS,
    F_HAND,
    F_INDUSTRY,
    F_LOCO,
    F_QUESTION,
    F_SEQ,
    F_TRACK,
)
from services.transsib.engine.state import TranssibState

_PENDING = {
    F_TRACK: 2.5,
    F_INDUSTRY: 3.0,
    F_LOCO: 6.0,
    F_HAND: 1.0,
    F_QUESTION: 5.0,
    F_END_BONUS: 9.0,
}
_UNLOCK_SPACES = sorted(space for space, _ in D.UNLOCKS)
WORKER_VALUE = 1.0
"""Points a free (unplaced) worker is worth while its owner has not passed."""


def _unreached_value(state: TranssibState, p, rounds_left: int) -> float:
    """Track laid beyond the reach and reach beyond the track, valued at a fraction."""
    total = 0.0
    for line in range(len(D.LINES)):
        reach = p.reach(line)
        length = D.LINE_LENGTH[line]
        base = line * 5
        front = p.pos[base]
        values = D.VALUES_REVALUED if p.revalued else D.VALUES
        if front > reach:
            # the colours on spaces reach+1..front would score with more locomotives
            prev = 0
            for c in range(4, -1, -1):
                q = p.pos[base + c]
                if q > prev:
                    lo = max(prev, reach)
                    if q > lo:
                        total += 0.35 * values[c] * (q - lo)
                    prev = q
        elif reach > front and front < length:
            total += 0.4 * min(reach - front, length - front)
    return total * max(rounds_left - 1, 0)


def evaluate(state: TranssibState, seat: int) -> float:
    """Estimated final points of ``seat`` (higher is better)."""
    p = state.players[seat]
    if state.is_terminal():
        best_other = max((q.score for i, q in enumerate(state.players) if i != seat), default=0)
        return p.score + 0.5 * (p.score - best_other)
    rules = state.rules
    rounds_left = state.rounds - state.round + 1
    value = float(p.score) + S.round_points(rules, p) * rounds_left
    value += _unreached_value(state, p, rounds_left)
    # the black Trans-Siberian marker opens the better colours (§6.3)
    ts_black = p.pos[0]
    for space in _UNLOCK_SPACES:
        if ts_black < space:
            value += 2.0 * ts_black / space * min(rounds_left, 3)
            break
    value += 1.5 * bin(p.unlocked).count("1") * min(rounds_left, 4)
    value += 0.8 * IND.capacity(rules, p) if rounds_left > 1 else 0.0
    value += 1.2 * p.coins + 1.0 * p.doublers
    value += 9.0 * len(p.engineers) + 8.0 * len(p.eb)
    value += 3.0 * p.extra * max(rounds_left - 1, 0)
    value += 1.5 * sum(1 for f in p.factories if f)
    # actions taken but not yet carried out
    for frame in state.stack:
        if frame[1] != seat:
            continue
        k = frame[0]
        if k == F_TRACK or k == F_INDUSTRY:
            value += _PENDING[k] * frame[2]
        elif k == F_SEQ:
            prog = rules.programs[frame[2]]
            value += 2.5 * (len(prog) - frame[3])
        else:
            value += _PENDING.get(k, 0.0)
    # a free worker is still worth something this round, unless the seat has passed
    if not state.passed[seat]:
        value += WORKER_VALUE * (p.own + p.temp + p.black)
    value += 5.0 * state.eb_pending[seat]
    value += 4.0 * sum(1 for f in state.gained if f[1] == seat)
    return value
