"""The arena: bots play whole games in-process, in parallel, and are measured.

``roundhouse arena --title T --policies search-medium,greedy,greedy,greedy --games N
--workers W [--report FILE] [--seed S]`` (see :func:`run_arena`).

* **Seats.** The ``--policies`` list names one policy per seat (``n`` = its length = the
  number of players). Game ``g`` deals seed ``S + g // n`` and rotates the list by
  ``g mod n``: seat ``s`` plays entry ``(s - g) mod n``. So every block of ``n`` games plays
  one deal ``n`` times with every entry in every seat once (duplicate style: the deal's luck
  is shared), and ``N`` must be a multiple of ``n``.
* **Wins.** A seat with rank 1 wins; ``k`` seats tied for first share the win, ``1/k`` each.
  A policy's ``games`` counts seat-games (a policy named three times plays three per game),
  ``wins`` the sum of its win shares, ``win_share = wins / games``, ``ci95`` the Wilson
  score interval of that share at 95% (z = 1.96) over ``games``. ``mean_rank`` is the mean
  competition rank (1 = best).
* **Rating.** Every seat entry is one OpenSkill player (Plackett-Luce model of the
  ``openskill`` package, default priors), rated after each game in the order games were
  dealt; a policy's ``openskill`` is the mean ``mu``/``sigma``/``ordinal`` of its entries.
* **Time.** Every decision is timed (wall clock and this process's CPU time, the policy
  call only); the report gives each policy's decision-time p50/p99/max on both clocks and,
  for search policies, the mean iterations per searched decision, beside the machine's
  load averages at start and end. The search tiers budget wall-clock time (what a player
  waits): on a loaded machine they do fewer iterations and are weaker. ``--clock cpu``
  makes them budget CPU time instead, so a measurement of strength does not depend on the
  load (their wall time then exceeds the budget by the load's factor).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from services.bots.policies import POLICY_NAMES, SEARCH_TIERS, make_policy, policy_available
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game

Z95 = 1.959963984540054

MAX_MOVES = 20_000
"""Moves after which every seat of an arena game plays ``greedy`` (whose evaluations reward
the game's progress), so that a game cannot run for ever (the longest measured game of any
title took ~1,200 moves); such a game is counted in the report's ``capped_games``."""


def wilson(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` of a proportion ``successes / trials``
    (``successes`` may be fractional: shared wins). ``(0, 1)`` for no trials."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def seating(policies: Sequence[str], game_index: int) -> list[int]:
    """Which entry of ``policies`` each seat plays in game ``game_index`` (see the module
    docstring): ``seating(p, g)[s] == (s - g) % n``."""
    n = len(policies)
    return [(s - game_index) % n for s in range(n)]


@dataclasses.dataclass(slots=True)
class GameRecord:
    """One finished arena game: per seat its entry index, rank and score; per entry the
    decision times (seconds) and search iterations."""

    index: int
    seed: int
    entries: list[int]
    ranks: list[int]
    scores: list[float]
    moves: int
    seconds: list[list[float]]
    cpu_seconds: list[list[float]]
    iterations: list[list[int]]
    capped: bool = False


def play_game(
    title: str, policies: Sequence[str], index: int, base_seed: int, clock: str | None = None
) -> GameRecord:
    """Play arena game ``index`` to the end (seating and deal as the module docstring says);
    ``clock`` overrides the search tiers' budget clock (``"wall"``, ``"cpu"``)."""
    n = len(policies)
    seed = base_seed + index // n
    entries = seating(policies, index)
    game = get_game(title)
    state = game.new_state(n, seed)
    players = [
        make_policy(policies[entries[s]], title, seed * 7919 + s * 104729 + index, clock)
        for s in range(n)
    ]
    seconds: list[list[float]] = [[] for _ in range(n)]
    cpu_seconds: list[list[float]] = [[] for _ in range(n)]
    iterations: list[list[int]] = [[] for _ in range(n)]
    rng = SeededRandom(seed ^ 0x5EED)
    clock, cpu = time.perf_counter, time.process_time
    capped = False
    while not state.is_terminal():
        seats = state.active_seats()
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        if state.version >= MAX_MOVES and not capped:
            capped = True
            players = [make_policy("greedy", title, seed + s) for s in range(n)]
        policy = players[seat]
        c0 = cpu()
        t0 = clock()
        action = policy(state, seat)
        took = clock() - t0
        entry = entries[seat]
        seconds[entry].append(took)
        cpu_seconds[entry].append(cpu() - c0)
        searcher = getattr(policy, "searcher", None)
        if searcher is not None and searcher.stats.iterations:
            iterations[entry].append(searcher.stats.iterations)
        state.apply(seat, action)
    result = state.result()
    return GameRecord(
        index=index,
        seed=seed,
        entries=entries,
        ranks=list(result.ranks),
        scores=[float(x) for x in result.scores],
        moves=state.version,
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        iterations=iterations,
        capped=capped,
    )


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[k]


def summarise(
    title: str, policies: Sequence[str], records: Sequence[GameRecord]
) -> dict[str, dict[str, Any]]:
    """Per distinct policy name: ``games, wins, win_share, ci95, mean_rank, openskill``,
    decision times and iterations (see the module docstring)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=f"{p}#{i}") for i, p in enumerate(policies)]
    n = len(policies)
    acc = {
        name: {"games": 0, "wins": 0.0, "rank_sum": 0, "seconds": [], "cpu": [], "iterations": []}
        for name in policies
    }
    for rec in sorted(records, key=lambda r: r.index):
        winners = sum(1 for r in rec.ranks if r == 1)
        for seat in range(n):
            name = policies[rec.entries[seat]]
            a = acc[name]
            a["games"] += 1
            a["rank_sum"] += rec.ranks[seat]
            if rec.ranks[seat] == 1:
                a["wins"] += 1.0 / winners
        for entry in range(n):
            acc[policies[entry]]["seconds"].extend(rec.seconds[entry])
            acc[policies[entry]]["cpu"].extend(rec.cpu_seconds[entry])
            acc[policies[entry]]["iterations"].extend(rec.iterations[entry])
        order = [rec.entries[seat] for seat in range(n)]
        teams = [[ratings[e]] for e in order]
        rated = model.rate(teams, ranks=[rec.ranks[seat] for seat in range(n)])
        for e, team in zip(order, rated, strict=True):
            ratings[e] = team[0]
    out: dict[str, dict[str, Any]] = {}
    for name, a in acc.items():
        mine = [ratings[i] for i, p in enumerate(policies) if p == name]
        games = a["games"]
        lo, hi = wilson(a["wins"], games)
        secs = a["seconds"]
        budget = SEARCH_TIERS[name].time_budget if name in SEARCH_TIERS else None
        out[name] = {
            "games": games,
            "wins": round(a["wins"], 4),
            "win_share": round(a["wins"] / games, 4) if games else 0.0,
            "ci95": [round(lo, 4), round(hi, 4)],
            "mean_rank": round(a["rank_sum"] / games, 4) if games else 0.0,
            "seats": len(mine),
            "openskill": {
                "mu": round(sum(r.mu for r in mine) / len(mine), 3),
                "sigma": round(sum(r.sigma for r in mine) / len(mine), 3),
                "ordinal": round(sum(r.ordinal() for r in mine) / len(mine), 3),
            },
            "decisions": len(secs),
            "decision_seconds": {
                "p50": round(_quantile(secs, 0.5), 4),
                "p99": round(_quantile(secs, 0.99), 4),
                "max": round(max(secs, default=0.0), 4),
            },
            "decision_cpu_seconds": {
                "p50": round(_quantile(a["cpu"], 0.5), 4),
                "p99": round(_quantile(a["cpu"], 0.99), 4),
                "max": round(max(a["cpu"], default=0.0), 4),
            },
            "budget_seconds": budget,
            "searched_decisions": len(a["iterations"]),
            "iterations_mean": (
                round(sum(a["iterations"]) / len(a["iterations"]), 1) if a["iterations"] else None
            ),
        }
    return out


class ArenaError(ValueError):
    """Arena arguments that cannot run (unknown policy or title, bad game count)."""


def check_arguments(title: str, policies: Sequence[str], games: int, workers: int) -> None:
    """Raises :class:`ArenaError` with the reason when the arena cannot run these."""
    try:
        game = get_game(title)
    except Exception as exc:  # UnknownTitle
        raise ArenaError(str(exc)) from None
    unknown = sorted({p for p in policies if p not in POLICY_NAMES})
    if unknown:
        raise ArenaError(f"unknown policies {unknown}; known: {', '.join(POLICY_NAMES)}")
    unable = sorted({p for p in policies if not policy_available(p, title)})
    if unable:
        raise ArenaError(f"policies {unable} cannot play {title}")
    n = len(policies)
    if not game.min_players <= n <= game.max_players:
        raise ArenaError(
            f"{title} takes {game.min_players} to {game.max_players} players; --policies names {n}"
        )
    if games < n or games % n:
        raise ArenaError(
            f"--games must be a positive multiple of the {n} seats (each policy plays "
            f"every seat equally often); got {games}"
        )
    if workers < 1:
        raise ArenaError("--workers must be at least 1")


def run_arena(
    title: str,
    policies: Sequence[str],
    games: int,
    workers: int = 1,
    seed: int = 1,
    progress: bool = True,
    clock: str | None = None,
    partial: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Play ``games`` games of ``title`` with ``workers`` processes and return the report:
    ``{"title", "players", "games", "seed", "workers", "policies": {name: {...}},
    "load_average": {"start", "end"}, "wall_seconds", "mean_moves", "complete"}``.
    ``partial`` (when given) gets the report of the games finished so far after every ``n``
    finished games (``"complete": false``; in the order games finish, so its seats need not be
    balanced), so a long run stopped early still has figures.

    Raises:
        ArenaError: see :func:`check_arguments`.
    """
    policies = list(policies)
    check_arguments(title, policies, games, workers)
    load_start = list(os.getloadavg())
    started = time.perf_counter()
    records: list[GameRecord] = []
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )

    def report(complete: bool) -> dict[str, Any]:
        return {
            "title": title,
            "players": len(policies),
            "policy_list": policies,
            "games": len(records),
            "games_asked": games,
            "complete": complete,
            "seed": seed,
            "workers": workers,
            "budget_clock": clock or "wall",
            "policies": summarise(title, policies, records),
            "mean_moves": round(sum(r.moves for r in records) / max(len(records), 1), 1),
            "max_moves": max((r.moves for r in records), default=0),
            "capped_games": sum(1 for r in records if r.capped),
            "wall_seconds": round(time.perf_counter() - started, 1),
            "load_average": {"start": load_start, "end": list(os.getloadavg())},
            "cpu_count": os.cpu_count(),
        }

    def finished(record: GameRecord) -> None:
        records.append(record)
        bar.advance(task)
        if partial is not None and len(records) % len(policies) == 0 and len(records) < games:
            partial(report(False))

    with Progress(*columns, disable=not progress, transient=False) as bar:
        task = bar.add_task(f"{title}: {','.join(policies)}", total=games)
        if workers == 1:
            for g in range(games):
                finished(play_game(title, policies, g, seed, clock))
        else:
            with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
                futures = [
                    pool.submit(play_game, title, policies, g, seed, clock) for g in range(games)
                ]
                for fut in concurrent.futures.as_completed(futures):
                    finished(fut.result())
    return report(True)


def draw_report(report: dict[str, Any], console) -> None:
    """A rich table of the report's per-policy figures, narrow enough for an 80-column
    terminal (no vertical rules; the search's iterations per decision in the caption)."""
    from rich.table import Table

    iterations = ", ".join(
        f"{name} {p['iterations_mean']:.0f}"
        for name, p in report["policies"].items()
        if p["iterations_mean"] is not None
    )
    load = report["load_average"]
    table = Table(
        title=f"{report['title']}: {report['games']} games, {report['players']} seats "
        f"(load {load['start'][0]:.1f} -> {load['end'][0]:.1f})",
        caption=f"iterations per searched decision: {iterations}" if iterations else None,
        box=None,
        padding=(0, 1),
        pad_edge=False,
        header_style="bold underline",
    )
    table.add_column("policy", no_wrap=True)
    cpu = report.get("budget_clock") == "cpu"  # the budget is CPU time: its p99 is the one
    timed = "decision_cpu_seconds" if cpu else "decision_seconds"
    p99 = "p99 CPU s/budget" if cpu else "p99 s/budget"
    for col in ("games", "wins", "share", "95% CI", "rank", "ordinal", p99):
        table.add_column(col, justify="right", no_wrap=True)
    for name, p in report["policies"].items():
        lo, hi = p["ci95"]
        budget = p["budget_seconds"]
        timing = f"{p[timed]['p99']:.3f}" + (f"/{budget:.2f}" if budget else "")
        table.add_row(
            name,
            str(p["games"]),
            f"{p['wins']:g}",
            f"{p['win_share']:.1%}",
            f"{lo:.1%}-{hi:.1%}",
            f"{p['mean_rank']:.2f}",
            f"{p['openskill']['ordinal']:.2f}",
            timing,
        )
    console.print(table)
