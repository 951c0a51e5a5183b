"""The first Swiss round seeded from ratings (``docs/tournaments.md``, "Seeding").

The field is ordered by OpenSkill's ``predict_rank`` (:func:`.ratings.predicted_order`;
an account with no rating has the prior), then dealt to the planned tables by the
organiser's ``mode``:

* ``balanced``: a snake draft (seed 1 to table 1, 2 to table 2, ... the last table takes
  two, then back up), so every table has a like share of strong and weak players;
* ``top_seeds_apart``: the top seeds, one per table, then everyone else in a seeded
  random draw: the favourites cannot meet in round 1, the rest is luck;
* ``random``: a seeded random draw, ratings unused.

Byes (if the plan has any) go to the lowest seeds. Seats by the seat cost (a seeded
order in round 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from services.kernel.rng import SeededRandom
from services.tournaments.errors import TournamentError
from services.tournaments.pairing import DEFAULT_CONFIG, PairingConfig, finish_round, table_plan
from services.tournaments.pairing_cost import CostModel, Entrant, History, RoundPairing
from services.tournaments.ratings import DEFAULT_MODEL, Rating, RatingModel, predicted_order

SeedingMode = Literal["balanced", "top_seeds_apart", "random"]
SEEDING_MODES = ("balanced", "top_seeds_apart", "random")


def seed_order(
    players: Sequence[str], ratings: Mapping[str, Rating], model: RatingModel = DEFAULT_MODEL
) -> list[str]:
    """``players``, expected best first (``predict_rank``; ties by name)."""
    rs = [ratings.get(p) or Rating("", p, model.mu, model.sigma) for p in players]
    return [r.account for r, _ in predicted_order(rs, model)]


def seed_first_round(
    players: Sequence[str],
    ratings: Mapping[str, Rating],
    mode: SeedingMode = "balanced",
    config: PairingConfig = DEFAULT_CONFIG,
    seed: int = 0,
    model: RatingModel = DEFAULT_MODEL,
) -> RoundPairing:
    """Round 1 of a Swiss of ``players`` seeded by their ``ratings`` (see the module).

    Raises :class:`TournamentError` ``bad_seeding_mode``, ``too_few_players`` or
    ``duplicate_player``.
    """
    if mode not in SEEDING_MODES:
        raise TournamentError(
            "bad_seeding_mode",
            f"seeding must be one of {', '.join(SEEDING_MODES)}, not {mode}",
            mode=mode,
        )
    sizes, bye_count = table_plan(len(players), config.table_size, config.smallest)
    model_ = CostModel([Entrant(p) for p in players], History(), config.weights)
    rng = SeededRandom(seed)
    order = seed_order(players, ratings, model) if mode != "random" else list(players)
    if mode == "random":
        rng.shuffle(order)
    byes = order[len(order) - bye_count :] if bye_count else []
    order = order[: len(order) - bye_count]
    index = {p: i for i, p in enumerate(model_.players)}
    tables: list[list[int]] = [[] for _ in sizes]
    if mode == "balanced":
        k, step = 0, 1
        for p in order:
            while len(tables[k]) >= sizes[k]:  # full: move on along the snake
                k, step = _snake(k, step, len(sizes))
            tables[k].append(index[p])
            k, step = _snake(k, step, len(sizes))
    else:
        top, rest = order[: len(sizes)], order[len(sizes) :]
        if mode == "top_seeds_apart":
            rng.shuffle(rest)
        for k, p in enumerate(top):
            tables[k].append(index[p])
        k = 0
        for p in rest:
            while len(tables[k]) >= sizes[k]:
                k += 1
            tables[k].append(index[p])
    return finish_round(1, model_, tables, byes, rng)


def _snake(k: int, step: int, n: int) -> tuple[int, int]:
    """The next table of a snake draft over ``n`` tables: 0, 1, ..., n-1, n-1, ..., 0, 0..."""
    if 0 <= k + step < n:
        return k + step, step
    return k, -step
