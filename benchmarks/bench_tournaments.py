"""Benchmarks of the tournament cores: pairing, the simulated Swiss, rating updates.

Run: ``.venv/bin/python -m benchmarks.run tournaments``

* ``pair_1000_players``: pair round 4 of a 1,000-player Swiss into 4-player tables (the
  field and history of the simulation of :mod:`benchmarks.swiss_sim` after 3 rounds; round
  4 is the hardest round of seats, as everyone needs his one unused position). Median of
  3. Target: <= 2 s.
* ``swiss_1000_players_7_rounds``: the simulation of :mod:`benchmarks.swiss_sim` (ours
  and the plain slice on the same random scores); the value is our repeat pairs in
  rounds 2-5 (target 0); the detail gives both methods per round. The same figures as
  a table: ``.venv/bin/python -m benchmarks.swiss_sim``.
* ``rating_update_6_players``: one :func:`rate_game` of a 6-player game with no tie, and
  one with two seats tied (mean of 2,000 each). Target: <= 1 ms.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.common import Measurement
from benchmarks.swiss_sim import play_round, simulate
from services.tournaments.pairing import PairingConfig, pair_round
from services.tournaments.pairing_cost import Entrant, History
from services.tournaments.ratings import RatedGame, RatedSeat, rate_game


def _field_after(rounds: int, players: int = 1000, seed: int = 1):
    """The field (points) and history after ``rounds`` rounds of the simulation."""
    points = {f"p{i:04d}": 0.0 for i in range(players)}
    history = History()
    for r in range(1, rounds + 1):
        rnd = pair_round(r, [Entrant(p, x) for p, x in points.items()], history, seed=seed)
        history.add(rnd)
        play_round(points, rnd, seed)
    return [Entrant(p, x) for p, x in points.items()], history


def pair_1000_players() -> Measurement:
    field, history = _field_after(3)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        rnd = pair_round(4, field, history, PairingConfig(table_size=4), seed=1)
        times.append(time.perf_counter() - t0)
    return Measurement(
        name="pair a 1,000-player Swiss round into tables of 4",
        value=statistics.median(times),
        unit="s",
        target=2,
        higher_is_better=False,
        detail=f"round 4, {len(rnd.tables)} tables, local search; runs "
        + ", ".join(f"{t:.2f}" for t in times),
    )


def swiss_1000_players_7_rounds() -> Measurement:
    ours, sliced = simulate("ours"), simulate("slice")
    value = sum(f.repeat_pairs for f in ours if 2 <= f.round <= 5)
    detail = "repeats ours/slice " + " ".join(
        f"r{a.round}:{a.repeat_pairs}/{b.repeat_pairs}" for a, b in zip(ours, sliced, strict=True)
    )
    detail += "; seat imbalance mean ours/slice " + " ".join(
        f"{a.imbalance_mean:.2f}/{b.imbalance_mean:.2f}" for a, b in zip(ours, sliced, strict=True)
    )
    return Measurement(
        name="1,000-player 7-round Swiss: our repeat pairs in rounds 2-5",
        value=value,
        unit="pairs",
        target=0,
        higher_is_better=False,
        detail=detail,
    )


def rating_update_6_players() -> Measurement:
    plain = RatedGame("railbarons", "g", tuple(RatedSeat(f"a{i}", i + 1) for i in range(6)))
    tied = RatedGame(
        "railbarons", "g", tuple(RatedSeat(f"a{i}", r) for i, r in enumerate([1, 2, 2, 4, 5, 6]))
    )
    current = {r.account: r for r in rate_game(plain, {}).ratings}
    figures = []
    for game in (plain, tied):
        rate_game(game, current)
        reps = 2000
        t0 = time.perf_counter()
        for _ in range(reps):
            rate_game(game, current)
        figures.append((time.perf_counter() - t0) / reps * 1e3)
    return Measurement(
        name="OpenSkill rating update of a 6-player game",
        value=max(figures),
        unit="ms",
        target=1,
        higher_is_better=False,
        detail=f"no tie {figures[0]:.3f} ms, two seats tied {figures[1]:.3f} ms "
        "(the tie is rated as 2 strict finishes)",
    )


BENCHMARKS = [pair_1000_players, swiss_1000_players_7_rounds, rating_update_6_players]
