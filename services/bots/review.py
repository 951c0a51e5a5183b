"""Game review: the search's judgement of every move of a finished game (issue 31).

:func:`review_game` replays a game's recorded moves from its seed with the title's engine
and, at each decision, runs the IS-MCTS search (:meth:`MCTS.analyse
<services.bots.search.mcts.MCTS.analyse>`) from the moving seat's information set only: the
search draws its worlds from ``state.view(seat)`` where the title hides anything
(``Game.state_from_view``), exactly as a hosted bot does, so a review never uses a card,
a pile or a future draw the seat did not see.

Per move it records (:class:`ReviewEntry`): the seat, the move's label
(``Game.describe`` on the position before it), each seat's estimated win chance before the
move (after the move the search prefers) and after the move played, the preferred move's
label and the loss (the mover's estimate after the preferred move minus after the move
played, at least 0). The search's estimate is its mean reward in ``[0, 1]``: for rank
titles (Chicago Express, Russian Railroads) 0.75 of it is first place and 0.25 the rank, for
1894 the logistic of the seat's estimated margin over the best rival
(:data:`~services.bots.search.mcts.TITLE_SETTINGS`); the "win chance" is that reward through
the title's fitted monotone calibration map (:mod:`services.bots.calibration`; the reward
itself where a title has no map); ``docs/bots.md`` says how well it is calibrated. The other
seats' chances are as the mover's search sees them, through the same map.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from services.bots.calibration import IDENTITY, Calibration, for_title
from services.bots.policies import search_config
from services.bots.search.mcts import MCTS, SearchConfig
from services.kernel.engine import JSON, Action, ActionRange, Game, Seat, State
from services.kernel.rng import SeededRandom

DEFAULT_TIER = "search-medium"
"""The search tier whose knobs a review uses (its budget is :class:`ReviewConfig`'s)."""

DEFAULT_BUDGETS: dict[str, float] = {"railbarons": 0.1, "transsib": 0.1, "e1894": 0.2}
"""CPU seconds of search per decision by title at the default budget (see docs/bots.md,
"Game review", for what a whole review costs)."""

FORCED_SHARE = 0.25
"""A move with one legal option gets this share of the budget (only its estimate is asked)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewConfig:
    """How hard a review searches.

    Attributes:
        time_budget: seconds of search per decision (``0``: the title's
            :data:`DEFAULT_BUDGETS`); ``None``-free so it can travel in a task's arguments.
        max_iterations: iterations per decision (``0`` = no limit; with ``time_budget`` the
            first limit reached binds). Tests use iterations only (``clock`` then matters not).
        clock: ``"cpu"`` (the worker's CPU time: the same review on a busy machine as on an
            idle one) or ``"wall"``.
        tier: the search tier whose knobs (worlds, rollouts, widening) are used.
        seed: the review's random draws derive from it and the move's version.
        calibrate: map the search's rewards to win probabilities with the title's fitted
            map (:func:`services.bots.calibration.for_title`); off, the raw rewards (the
            calibration benchmark fits on those).

    Raises:
        ValueError: a negative budget.
    """

    time_budget: float = 0.0
    max_iterations: int = 0
    clock: str = "cpu"
    tier: str = DEFAULT_TIER
    seed: int = 0
    calibrate: bool = True

    def __post_init__(self) -> None:
        if self.time_budget < 0 or self.max_iterations < 0:
            raise ValueError("review budgets are non-negative")


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewEntry:
    """The review of one move.

    Attributes:
        version: the game's version after the move (1 = the first move).
        seat: the seat that moved.
        label: the move in words (``Game.describe`` before it).
        win_chance_before: per seat, the estimate after the move the search prefers.
        win_chance_after: per seat, the estimate after the move played.
        best_label: the preferred move in words (the label itself when the move was best).
        loss: ``win_chance_before[seat] - win_chance_after[seat]``, at least 0.
        iterations: search iterations spent on the move.
    """

    version: int
    seat: int
    label: str
    win_chance_before: tuple[float, ...]
    win_chance_after: tuple[float, ...]
    best_label: str
    loss: float
    iterations: int

    def to_json(self) -> dict[str, Any]:
        """The entry as the API gives it (chances and loss rounded to 4 decimals)."""
        return {
            "version": self.version,
            "seat": self.seat,
            "label": self.label,
            "win_chance_before": [round(x, 4) for x in self.win_chance_before],
            "win_chance_after": [round(x, 4) for x in self.win_chance_after],
            "best_label": self.best_label,
            "loss": round(self.loss, 4),
            "iterations": self.iterations,
        }


Progress = Callable[[int, int], None]
"""``progress(done, total)``: called after each reviewed move."""


def decision_seed(seed: int, version: int) -> int:
    """The search seed of the decision at ``version`` (stable: a review run twice with an
    iteration budget gives the same entries)."""
    digest = hashlib.sha256(f"review:{seed}:{version}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def reviewable(moves: Iterable[tuple[int, JSON]]) -> list[tuple[int, JSON]]:
    """The moves a review replays: up to a resignation entry (``{"type": "resign"}``, which
    the lobby records but the engine does not play), which ends the game."""
    out = []
    for seat, action in moves:
        if isinstance(action, Mapping) and action.get("type") == "resign":
            break
        out.append((seat, action))
    return out


def review_game(
    game: Game,
    num_players: int,
    seed: int,
    options: Mapping[str, Any] | None,
    moves: Iterable[tuple[int, JSON | Action]],
    config: ReviewConfig | None = None,
    progress: Progress | None = None,
) -> list[ReviewEntry]:
    """Review a recorded game move by move.

    Args:
        game: the title's engine (``services.rules.titles.get_game(title)``).
        num_players: seats.
        seed: the game's seed (public once the game is over: the replay page uses it).
        options: the game's options.
        moves: ``(seat, action)`` in order, actions typed or as canonical JSON; a resignation
            entry ends the review there (:func:`reviewable`).
        config: the budget (default :class:`ReviewConfig()`).
        progress: called with ``(done, total)`` after each move.

    Returns:
        One :class:`ReviewEntry` per move replayed, in order.

    Raises:
        KeyError: the title has no search (``TITLE_SETTINGS``) or the tier is unknown.
        services.kernel.engine.IllegalAction: a move the rules refuse.
    """
    config = config or ReviewConfig()
    budget = config.time_budget or DEFAULT_BUDGETS.get(game.id, 0.1)
    search = dataclasses.replace(
        search_config(config.tier, game.id),
        time_budget=budget if not config.max_iterations or config.time_budget else 0.0,
        max_iterations=config.max_iterations,
        clock=config.clock,
    )
    forced = dataclasses.replace(
        search,
        time_budget=search.time_budget * FORCED_SHARE,
        max_iterations=max(1, int(search.max_iterations * FORCED_SHARE))
        if search.max_iterations
        else 0,
    )
    log = [
        (seat, a if isinstance(a, Action) else game.parse_action(a))
        for seat, a in reviewable(moves)  # type: ignore[arg-type]
    ]
    state = game.new_state(num_players, seed, options)
    calibration = for_title(game.id) if config.calibrate else IDENTITY
    entries: list[ReviewEntry] = []
    for i, (seat, action) in enumerate(log):
        version = i + 1
        legal = state.legal_actions(seat)
        cfg = forced if len(legal) == 1 and not isinstance(legal[0], ActionRange) else search
        entries.append(
            review_move(
                game,
                state,
                seat,
                action,
                version,
                cfg,
                decision_seed(config.seed, version),
                calibration,
            )
        )
        state.apply(seat, action)
        if progress is not None:
            progress(version, len(log))
    return entries


def review_move(
    game: Game,
    state: State,
    seat: Seat,
    action: Action,
    version: int,
    search: SearchConfig,
    seed: int,
    calibration: Calibration = IDENTITY,
) -> ReviewEntry:
    """The review of ``seat`` playing ``action`` in ``state`` (which it does not change): the
    search (:meth:`MCTS.analyse`) runs on determinisations of ``state.view(seat)`` only, so two
    states the seat cannot tell apart get the same entry. ``version`` is the game's version
    after the move. Every seat's chance goes through ``calibration`` (the search's reward
    to a win probability; the loss is then in probability points).

    Raises:
        ValueError: ``seat`` has no legal action.
    """
    analysis = MCTS(game.id, search, SeededRandom(seed)).analyse(state, seat, action)
    before = calibration.apply_all(analysis.best_means)
    after = calibration.apply_all(analysis.played_means)
    label = game.describe(state, action)
    best_label = label if analysis.best == action else game.describe(state, analysis.best)
    return ReviewEntry(
        version=version,
        seat=seat,
        label=label,
        win_chance_before=before,
        win_chance_after=after,
        best_label=best_label,
        loss=max(0.0, before[seat] - after[seat]),
        iterations=analysis.iterations,
    )


def costliest(entries: Iterable[ReviewEntry], seat: int, n: int = 3) -> list[ReviewEntry]:
    """The ``n`` moves of ``seat`` with the largest loss (largest first; ties: earlier first;
    moves with no loss are left out)."""
    mine = [e for e in entries if e.seat == seat and e.loss > 0]
    mine.sort(key=lambda e: (-e.loss, e.version))
    return mine[:n]
