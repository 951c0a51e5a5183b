"""Calibration of the review's win chances (issue 31, "Honest numbers"): a monotone map per
title from the search's reward in ``[0, 1]`` to a probability of winning the game.

The search's estimate is a reward (for Chicago Express and Russian Railroads 0.75 first place
and 0.25 the rank; for 1894 the logistic of the margin), not a probability. :func:`fit` fits a
non-decreasing map from bot games' ``(estimate, won)`` pairs by isotonic regression
(pool-adjacent-violators, :func:`scipy.optimize.isotonic_regression`) and keeps it as a
piecewise-linear table of knots; :meth:`Calibration.apply` interpolates between them. The
fitted tables are data files, ``services/bots/calibration_maps/<title>.json`` (written by
``benchmarks/bench_calibration.py --write``); a title without one maps every estimate to
itself (:data:`IDENTITY`). ``docs/bots.md`` ("Game review") has the reliability tables and
what the fits were made of.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

MAPS = Path(__file__).with_name("calibration_maps")
"""Where the fitted maps are kept, one ``<title>.json`` each."""


@dataclasses.dataclass(frozen=True, slots=True)
class Calibration:
    """A non-decreasing piecewise-linear map of ``[0, 1]`` onto ``[0, 1]``.

    Attributes:
        xs: the knots' estimates, increasing, from 0 to 1.
        ys: the probabilities at the knots, non-decreasing, in ``[0, 1]``.
        positions: how many positions the map was fitted on (0 for :data:`IDENTITY`).
        note: how it was fitted (games, budget), for the record.

    Raises:
        ValueError: knots that are not increasing from 0 to 1, or values not
            non-decreasing within ``[0, 1]``.
    """

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    positions: int = 0
    note: str = ""

    def __post_init__(self) -> None:
        if len(self.xs) != len(self.ys) or len(self.xs) < 2:
            raise ValueError("a calibration needs at least two knots, as many xs as ys")
        if self.xs[0] != 0.0 or self.xs[-1] != 1.0:
            raise ValueError("the knots run from 0 to 1")
        if any(b <= a for a, b in zip(self.xs, self.xs[1:], strict=False)):
            raise ValueError("the knots' estimates must increase")
        if any(b < a for a, b in zip(self.ys, self.ys[1:], strict=False)):
            raise ValueError("a calibration is non-decreasing")
        if self.ys[0] < 0.0 or self.ys[-1] > 1.0:
            raise ValueError("probabilities lie in [0, 1]")

    def apply(self, estimate: float) -> float:
        """The probability for ``estimate`` (clipped into ``[0, 1]`` first)."""
        return float(np.interp(min(1.0, max(0.0, estimate)), self.xs, self.ys))

    def apply_all(self, estimates: Sequence[float]) -> tuple[float, ...]:
        """:meth:`apply` of each."""
        return tuple(self.apply(x) for x in estimates)

    def to_json(self) -> dict[str, Any]:
        return {
            "xs": [round(x, 6) for x in self.xs],
            "ys": [round(y, 6) for y in self.ys],
            "positions": self.positions,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        """Raises ``ValueError`` (as the constructor) or ``KeyError`` (a missing field)."""
        return cls(
            tuple(float(x) for x in data["xs"]),
            tuple(float(y) for y in data["ys"]),
            int(data.get("positions", 0)),
            str(data.get("note", "")),
        )


IDENTITY = Calibration((0.0, 1.0), (0.0, 1.0))
"""The map of a title not calibrated: the estimate itself."""


def fit(pairs: Iterable[tuple[float, float]], note: str = "") -> Calibration:
    """The isotonic (non-decreasing, least-squares) fit of ``won`` on ``estimate``.

    Args:
        pairs: ``(estimate in [0, 1], won in [0, 1])`` per position (a win shared by k tied
            winners may count 1/k).
        note: kept with the map.

    Returns:
        The map flat across each of PAV's pooled blocks (knots at its lowest and highest
        estimate), linear between blocks, the ends held flat out to 0 and 1.

    Raises:
        ValueError: no pairs.
    """
    data = sorted((min(1.0, max(0.0, float(p))), float(w)) for p, w in pairs)
    if not data:
        raise ValueError("nothing to fit")
    # equal estimates are one point, weighted by their count
    xs: list[float] = []
    sums: list[float] = []
    counts: list[int] = []
    for p, w in data:
        if xs and xs[-1] == p:
            sums[-1] += w
            counts[-1] += 1
        else:
            xs.append(p)
            sums.append(w)
            counts.append(1)
    y = np.asarray(sums) / np.asarray(counts)
    result = isotonic_regression(y, weights=np.asarray(counts, dtype=float), increasing=True)
    fitted = np.clip(result.x, 0.0, 1.0)
    knots_x: list[float] = []
    knots_y: list[float] = []
    for start, stop in zip(result.blocks[:-1], result.blocks[1:], strict=True):
        # flat across the block (PAV's step), linear from one block's end to the next
        for x in dict.fromkeys((xs[start], xs[stop - 1])):
            knots_x.append(x)
            knots_y.append(float(fitted[start]))
    if knots_x[0] > 0.0:
        knots_x.insert(0, 0.0)
        knots_y.insert(0, knots_y[0])
    if knots_x[-1] < 1.0:
        knots_x.append(1.0)
        knots_y.append(knots_y[-1])
    return Calibration(tuple(knots_x), tuple(knots_y), len(data), note)


def map_path(title: str) -> Path:
    return MAPS / f"{title}.json"


@functools.cache
def for_title(title: str) -> Calibration:
    """The title's fitted map (:data:`IDENTITY` when it has none).

    Raises:
        ValueError: a map file that is not a valid calibration.
    """
    path = map_path(title)
    if not path.is_file():
        return IDENTITY
    return Calibration.from_json(json.loads(path.read_text()))


def write(title: str, calibration: Calibration) -> Path:
    """Store ``calibration`` as the title's map (the benchmark's ``--write``)."""
    MAPS.mkdir(exist_ok=True)
    path = map_path(title)
    path.write_text(json.dumps(calibration.to_json(), indent=1) + "\n")
    for_title.cache_clear()
    return path
