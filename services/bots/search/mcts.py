"""Information-set Monte Carlo tree search over the engine contract, for every title.

One algorithm for all titles (Cowling, Powley & Whitehouse 2012, "Information Set Monte
Carlo Tree Search", single-observer variant, with max^n backups for more than two players):

* **Determinisation.** The searching seat sees only ``state.view(seat)``. Where the title
  hides something (:data:`TITLE_SETTINGS` ``hidden``), the search draws ``worlds`` full
  states from that view with ``Game.state_from_view(view, seat, seed_k)``; iteration ``i``
  plays in world ``i mod worlds``. One tree is shared by all worlds; a child is only
  selectable in a world where its action is legal, and UCB counts how often it was
  available (the "availability count" of IS-MCTS). Titles with nothing hidden use one
  world: an exact copy of the state.
* **Tree policy.** UCB1 on the acting seat's own mean reward (max^n): every node keeps one
  reward total per seat, and a seat picks the child best for itself. The root's untried
  children are expanded in the order the cut-off's value prefers them (the estimate's margin
  for ``"margin"`` titles, greedy's evaluation otherwise), so that a search with very few
  iterations still chooses like a one-step look-ahead does. A title with ``widen``
  (:class:`TitleSettings`) offers at the root only the best ``WIDEN_BASE + WIDEN_COEF *
  sqrt(visits)`` moves of that order (progressive widening).
* **Moves.** The concrete actions a node offers are those the greedy policy considers
  (:func:`services.bots.heuristics.greedy_options`): the title's play-out actions, with each
  :class:`~services.kernel.engine.ActionRange` reduced to the few values the title's
  ``candidate_values`` proposes.
* **Rollout.** ``rollout_depth`` plies of greedy play (each ply the greedy choice among at
  most ``rollout_sample`` of the options, drawn at random: ``0`` = all, i.e. exactly the
  ``greedy`` bot), then a cut-off: the title's static evaluation
  (:mod:`services.bots.heuristics`) of the position for every seat, squashed to a reward in
  ``[0, 1]`` by a logistic of scale ``eval_scale`` (the title's unit: dollars, points,
  francs). A finished game scores ``WIN_WEIGHT`` for first place (shared equally by tied
  winners) plus ``1 - WIN_WEIGHT`` times the normalised rank ``(n - rank) / (n - 1)``.
  ``"margin"`` titles (:attr:`TitleSettings.reward`) instead score every position by the
  logistic of the seat's margin over the best rival: of the title's ``estimates`` (each
  seat's estimated final score, :func:`services.bots.heuristics.estimator_for`) at a
  cut-off, of the final scores at the end.
* **Keep-moving guard.** After ``stall_moves`` moves of a game (:class:`TitleSettings`) the
  search plays the greedy choice, so a game cannot be stalled by searched moves that do
  not move it on.
* **Budget.** The search stops at ``max_iterations`` or when the wall-clock time since the
  call began plus the slowest iteration seen so far would pass ``BUDGET_TARGET`` (85%) of
  ``time_budget`` seconds;
  rollouts stop early at the deadline (they then evaluate where they are). It also stops
  once the most visited root move leads the next by more visits than the budget has
  iterations left (it cannot be overtaken). The move is the root child visited most; ties
  go to the move the greedy evaluation prefers, so a search starved of iterations (a
  loaded machine) plays like ``greedy`` rather than worse.

All randomness comes from the :class:`~services.kernel.rng.SeededRandom` given, so a choice
is reproducible from (seed, state) when only the iteration budget binds.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence

from services.bots.heuristics import estimator_for, evaluator_for, greedy_options
from services.kernel.engine import Action, Seat, State
from services.kernel.rng import SeededRandom

Clock = Callable[[], float]
"""Seconds as a float, monotonic (``time.perf_counter``); injectable for tests."""

CLOCKS: dict[str, Clock] = {"wall": time.perf_counter, "cpu": time.process_time}
"""The clocks a :class:`SearchConfig` may budget against."""

BUDGET_TARGET = 0.85
"""The share of ``time_budget`` the search plans to use: the rest absorbs the last
iteration's overrun, the choice of the move and the scheduler's jitter on a loaded
machine (the arena checks p99 decision time against 1.1 x budget)."""

EARLY_STOP_EVERY = 8
"""Iterations between checks whether the root's choice is already decided (then the search
stops early: the most visited move cannot be overtaken in the budget left)."""

WIDEN_BASE = 2
WIDEN_COEF = 1.0
"""Progressive widening (:attr:`TitleSettings.widen`): root moves offered after ``v``
visits."""

WIN_WEIGHT = 0.75
"""Share of a finished game's reward that goes to first place (the rest follows the rank)."""


@dataclasses.dataclass(frozen=True, slots=True)
class TitleSettings:
    """What the search needs to know about a title.

    Attributes:
        hidden: the title hides information from a seat (``state_from_view`` samples it).
        eval_scale: the logistic scale of the static evaluation, in the title's score unit:
            a lead of ``eval_scale`` over the best rival counts as a reward of 0.73.
        reward: ``"rank"`` (a finished game by rank, a cut-off by the squashed ``evaluate``
            of each seat) or ``"margin"`` (every position by the squashed margin of the
            seat's estimate over the best rival's: the title's ``estimates`` at a cut-off,
            the final scores at the end, :meth:`MCTS.rewards`).
        widen: progressive widening at the root: the root offers its best
            ``WIDEN_BASE + WIDEN_COEF * sqrt(visits)`` moves (by the ordering), more as its
            visits grow, instead of trying every move once first.
        stall_moves: after this many moves of a game (``0`` = never) the search plays the
            ``greedy`` choice: a guard that a game in which the search keeps making moves
            that do not move the game on still ends (greedy's evaluation rewards progress).

    Raises:
        ValueError: ``reward`` is neither ``"rank"`` nor ``"margin"``.
    """

    hidden: bool
    eval_scale: float
    reward: str = "rank"
    widen: bool = False
    stall_moves: int = 0

    def __post_init__(self) -> None:
        if self.reward not in ("rank", "margin"):
            raise ValueError(f"reward is 'rank' or 'margin', not {self.reward!r}")


TITLE_SETTINGS: dict[str, TitleSettings] = {
    # Chicago Express hides nothing (§3.7); cash in dollars, final scores ~ $100-$300
    "railbarons": TitleSettings(hidden=False, eval_scale=25.0),
    # Russian Railroads hides end bonus cards and the draw piles; points, finals ~ 100-300
    "transsib": TitleSettings(hidden=True, eval_scale=20.0),
    # 1894 hides nothing (the seed only drives the setup); francs, finals ~ 2000-8000;
    # games last ~600-1200 moves
    "e1894": TitleSettings(
        hidden=False, eval_scale=600.0, reward="margin", widen=True, stall_moves=3000
    ),
}


@dataclasses.dataclass(frozen=True, slots=True)
class SearchConfig:
    """A search budget and its knobs.

    Attributes:
        time_budget: wall-clock seconds per decision (``0`` = no time limit).
        max_iterations: iterations per decision (``0`` = no limit; one limit must be set).
        worlds: determinisations drawn where the title hides information.
        rollout_depth: greedy plies after the tree before the static evaluation.
        rollout_sample: options the rollout's greedy ply evaluates (``0`` = all).
        exploration: the UCB1 constant ``c`` in ``mean + c * sqrt(ln(avail) / visits)``.
        root_width: root options searched, the best by the greedy evaluation first
            (``0`` = all); a small budget then goes to the few moves worth comparing.
        tree_depth: the deepest level of the tree (``0`` = unlimited; ``1`` = flat Monte
            Carlo: only the root's moves are nodes, everything after them is rollout).
        clock: ``"wall"`` (the default: what a player waits, ``time.perf_counter``) or
            ``"cpu"`` (this process's CPU time, ``time.process_time``: the same search on
            a busy machine as on an idle one, for measuring strength; it then takes longer
            than ``time_budget`` of wall time when the machine is loaded).
    """

    time_budget: float = 0.2
    max_iterations: int = 0
    worlds: int = 8
    rollout_depth: int = 4
    rollout_sample: int = 4
    exploration: float = 0.5
    root_width: int = 0
    tree_depth: int = 0
    clock: str = "wall"

    def __post_init__(self) -> None:
        if self.time_budget < 0 or self.max_iterations < 0:
            raise ValueError("budgets are non-negative")
        if not self.time_budget and not self.max_iterations:
            raise ValueError("a search needs a time budget or an iteration budget")
        if (
            self.worlds < 1
            or self.rollout_depth < 0
            or self.rollout_sample < 0
            or (self.root_width < 0 or self.tree_depth < 0)
        ):
            raise ValueError("worlds >= 1; rollout_depth, rollout_sample, root_width >= 0")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock is one of {', '.join(CLOCKS)}")


@dataclasses.dataclass(slots=True)
class SearchStats:
    """What the last decision did (for the arena and the benchmarks)."""

    iterations: int = 0
    seconds: float = 0.0
    root_options: int = 0


MIN_PLAYED_VISITS = 4
"""Visits :meth:`MCTS.analyse` gives the move played at least (so its estimate is not one
rollout's)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Analysis:
    """:meth:`MCTS.analyse`'s answer.

    Attributes:
        best: the move the search prefers (the root move visited most).
        best_means: per seat, the mean reward in ``[0, 1]`` of the iterations through ``best``.
        played_means: the same through the move played.
        iterations: iterations run (the forced ones for the move played included).
    """

    best: Action
    best_means: tuple[float, ...]
    played_means: tuple[float, ...]
    iterations: int


class _Node:
    __slots__ = ("children", "visits", "avail", "totals")

    def __init__(self, n: int) -> None:
        self.children: dict[tuple[Seat, Action], _Node] = {}
        self.visits = 0
        self.avail = 0
        self.totals = [0.0] * n


class MCTS:
    """An IS-MCTS searcher for one title (see the module docstring).

    Args:
        title: the title id (its heuristic and :data:`TITLE_SETTINGS` entry must exist).
        config: budget and knobs.
        rng: the source of every random draw.
        clock: the clock (default: the one ``config.clock`` names).

    Raises:
        KeyError: the title has no heuristic or no search settings.
    """

    def __init__(
        self,
        title: str,
        config: SearchConfig,
        rng: SeededRandom,
        clock: Clock | None = None,
    ) -> None:
        self.title = title
        self.config = config
        self.settings = TITLE_SETTINGS[title]
        self.rng = rng
        self.clock = clock or CLOCKS[config.clock]
        self.evaluate = evaluator_for(title)
        self.estimates = estimator_for(title) if self.settings.reward == "margin" else None
        self.options = greedy_options(title)
        self.stats = SearchStats()

    # ------------------------------------------------------------------ rewards

    def rewards(self, state: State) -> list[float]:
        """Per-seat rewards in ``[0, 1]`` of a position. ``"rank"`` titles: a finished game by
        rank, else the squashed static evaluation. ``"margin"`` titles: the logistic of
        ``(mine - best rival's) / eval_scale``, of the final scores when the game is over, of
        the title's ``estimates`` otherwise."""
        n = state.num_players
        if self.settings.reward == "margin":
            if state.is_terminal():
                values = [float(x) for x in state.result().scores]
            elif self.estimates is not None:
                values = self.estimates(state)
            else:
                values = [self.evaluate(state, s) for s in range(n)]
            return _margin_rewards(values, self.settings.eval_scale)
        if state.is_terminal():
            ranks = state.result().ranks
            winners = sum(1 for r in ranks if r == 1)
            rest = 1.0 - WIN_WEIGHT
            return [
                (WIN_WEIGHT / winners if r == 1 else 0.0) + rest * (n - r) / (n - 1) for r in ranks
            ]
        scale = self.settings.eval_scale
        out = []
        for s in range(n):
            x = self.evaluate(state, s) / scale
            x = 30.0 if x > 30.0 else -30.0 if x < -30.0 else x
            out.append(1.0 / (1.0 + math.exp(-x)))
        return out

    # ------------------------------------------------------------------ policies

    def _to_move(self, state: State) -> Seat:
        seats = state.active_seats()
        return seats[0] if len(seats) == 1 else self.rng.choice(seats)

    def _greedy_pick(self, state: State, seat: Seat, options: Sequence[Action]) -> Action:
        k = self.config.rollout_sample
        if k and len(options) > k:
            pool = list(options)
            for i in range(k):  # a partial Fisher-Yates shuffle: k distinct options
                j = i + self.rng.randbelow(len(pool) - i)
                pool[i], pool[j] = pool[j], pool[i]
            options = pool[:k]
        return self._greedy_all(state, seat, options)

    def _greedy_all(self, state: State, seat: Seat, options: Sequence[Action]) -> Action:
        """The ``greedy`` choice among all ``options`` (ties at random)."""
        best: list[Action] = []
        best_value = float("-inf")
        for action in options:
            child = state.clone()
            child.apply(seat, action)
            value = self.evaluate(child, seat)
            if value > best_value:
                best, best_value = [action], value
            elif value == best_value:
                best.append(action)
        return best[0] if len(best) == 1 else self.rng.choice(best)

    def _rollout(self, state: State, deadline: float) -> None:
        for _ in range(self.config.rollout_depth):
            if state.is_terminal() or (deadline and self.clock() >= deadline):
                return
            seat = self._to_move(state)
            options = self.options(state, seat)
            action = options[0] if len(options) == 1 else self._greedy_pick(state, seat, options)
            state.apply(seat, action)

    def _ordered_root(
        self, state: State, seat: Seat, options: list[Action], deadline: float
    ) -> list[Action]:
        """Root options, best static evaluation first (ties keep the engine's order). At the
        deadline the options not yet evaluated follow, in the engine's order."""
        scored = []
        for i, action in enumerate(options):
            if deadline and i and self.clock() >= deadline:
                return [a for _, _, a in sorted(scored)] + options[i:]
            child = state.clone()
            child.apply(seat, action)
            scored.append((-self._value(child, seat), i, action))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [a for _, _, a in scored]

    def _value(self, state: State, seat: Seat) -> float:
        """How the root ordering values a position for ``seat``: the margin of its estimate
        over the best rival's (``"margin"`` titles with ``estimates``), else ``evaluate``."""
        if self.estimates is None or state.is_terminal():
            return self.evaluate(state, seat)
        values = self.estimates(state)
        mine = values[seat]
        return mine - max(v for s, v in enumerate(values) if s != seat)

    # ------------------------------------------------------------------ search

    def worlds(self, state: State, seat: Seat) -> list[State]:
        """The determinisations of ``state`` as ``seat`` sees it."""
        if not self.settings.hidden:
            return [state.clone()]
        view = state.view(seat)
        game = state.game
        return [
            game.state_from_view(view, seat, self.rng.randbelow(2**63))
            for _ in range(self.config.worlds)
        ]

    def choose(self, state: State, seat: Seat) -> Action:
        """The move for ``seat`` (active in ``state``) within the budget.

        Raises:
            ValueError: ``seat`` has no legal action.
        """
        start = self.clock()
        cfg = self.config
        deadline = start + cfg.time_budget * BUDGET_TARGET if cfg.time_budget else 0.0
        options = self.options(state, seat)
        self.stats = SearchStats(root_options=len(options))
        if not options:
            raise ValueError(f"seat {seat} has no legal action")
        if len(options) == 1:
            self.stats.seconds = self.clock() - start
            return options[0]
        stall = self.settings.stall_moves
        if stall and state.version > stall:  # the keep-moving guard
            action = self._greedy_all(state, seat, options)
            self.stats.seconds = self.clock() - start
            return action
        worlds = self.worlds(state, seat)
        root_order = self._ordered_root(worlds[0], seat, options, deadline)
        if cfg.root_width:
            root_order = root_order[: cfg.root_width]
        root = self._search(worlds, seat, root_order, start, deadline)
        best = _most_visited(root, seat, root_order)
        self.stats.seconds = self.clock() - start
        return best if best is not None else root_order[0]

    def _search(
        self,
        worlds: list[State],
        seat: Seat,
        root_order: list[Action],
        start: float,
        deadline: float,
    ) -> _Node:
        """Iterate from a new root over ``worlds`` until a budget binds; the root."""
        cfg = self.config
        root = _Node(worlds[0].num_players)
        slowest = 0.0
        iterations = 0
        while True:
            now = self.clock()
            if cfg.max_iterations and iterations >= cfg.max_iterations:
                break
            if deadline and now + slowest >= deadline:
                break  # (no time left even for one iteration: the greedy favourite)
            world = worlds[iterations % len(worlds)].clone()
            self._iterate(world, root, seat, root_order, deadline)
            iterations += 1
            took = self.clock() - now
            if took > slowest:
                slowest = took
            if iterations % EARLY_STOP_EVERY == 0 and self._decided(
                root, seat, iterations, now + took - start, deadline - now - took
            ):
                break
        self.stats.iterations = iterations
        return root

    def analyse(self, state: State, seat: Seat, played: Action) -> Analysis:
        """The search's judgement of ``played``, ``seat``'s move in ``state``: the same search
        as :meth:`choose` (the seat's determinisations only, :meth:`worlds`; no keep-moving
        guard), with ``played`` always among the root's moves (second in the order, so
        progressive widening offers it and ties still go to the greedy favourite) and given at
        least ``min_played`` visits.

        Returns:
            :class:`Analysis`: the preferred move and, per seat, the mean reward in ``[0, 1]``
            after it and after ``played``.

        Raises:
            ValueError: ``seat`` has no legal action.
        """
        start = self.clock()
        cfg = self.config
        deadline = start + cfg.time_budget * BUDGET_TARGET if cfg.time_budget else 0.0
        worlds = self.worlds(state, seat)  # everything below reads these, never ``state``
        options = self.options(worlds[0], seat)
        self.stats = SearchStats(root_options=len(options))
        if not options:
            raise ValueError(f"seat {seat} has no legal action")
        root_order = self._ordered_root(worlds[0], seat, options, deadline)
        if cfg.root_width:
            root_order = root_order[: cfg.root_width]
        root_order = [a for a in root_order if a != played]
        root_order.insert(min(1, len(root_order)), played)
        root = self._search(worlds, seat, root_order, start, deadline)
        i = 0
        while root.children.get((seat, played)) is None or (
            root.children[(seat, played)].visits < MIN_PLAYED_VISITS
        ):
            world = worlds[i % len(worlds)].clone()
            self._iterate(world, root, seat, [played], 0.0)
            i += 1
        best = _most_visited(root, seat, root_order) or played
        self.stats.seconds = self.clock() - start

        def means(action: Action) -> tuple[float, ...]:
            child = root.children[(seat, action)]
            return tuple(t / child.visits for t in child.totals)

        return Analysis(
            best=best,
            best_means=means(best),
            played_means=means(played),
            iterations=self.stats.iterations + i,
        )

    def _decided(self, root: _Node, seat: Seat, iterations: int, spent: float, left: float) -> bool:
        """Whether the most visited root move can no longer be overtaken in the iterations
        left (by the iteration budget, or the time left at the mean iteration's pace)."""
        cfg = self.config
        remaining = cfg.max_iterations - iterations if cfg.max_iterations else 1 << 30
        if cfg.time_budget:
            remaining = min(remaining, int(left / (spent / iterations)) + 1)
        first = second = 0
        for child in root.children.values():
            v = child.visits
            if v > first:
                first, second = v, first
            elif v > second:
                second = v
        return first - second > remaining

    def _iterate(
        self, world: State, root: _Node, me: Seat, root_order: list[Action], deadline: float
    ) -> None:
        node = root
        path = [root]
        c = self.config.exploration
        max_depth = self.config.tree_depth or 1_000_000
        while not world.is_terminal() and len(path) <= max_depth:
            seat = self._to_move(world)
            # the root seat's options are the same in every world (state_from_view keeps
            # the seat's legal actions), so the root uses its greedy-ordered list
            if node is root:
                options = root_order
                if self.settings.widen:
                    options = root_order[: WIDEN_BASE + int(WIDEN_COEF * math.sqrt(root.visits))]
            else:
                options = self.options(world, seat)
            children = node.children
            untried = [a for a in options if (seat, a) not in children]
            if untried:
                action = untried[0] if node is root else self.rng.choice(untried)
                world.apply(seat, action)
                child = children[(seat, action)] = _Node(world.num_players)
                child.avail = 1
                path.append(child)
                break
            best = None
            best_score = float("-inf")
            for action in options:
                child = children[(seat, action)]
                child.avail += 1
                score = child.totals[seat] / child.visits + c * math.sqrt(
                    math.log(child.avail) / child.visits
                )
                if score > best_score:
                    best, best_score, best_action = child, score, action
            world.apply(seat, best_action)
            node = best
            path.append(node)
        self._rollout(world, deadline)
        rewards = self.rewards(world)
        for visited in path:
            visited.visits += 1
            totals = visited.totals
            for s, r in enumerate(rewards):
                totals[s] += r


def _most_visited(root: _Node, seat: Seat, root_order: Sequence[Action]) -> Action | None:
    """The root move visited most (ties: the first in ``root_order``); ``None`` if none was."""
    best = None
    best_visits = -1
    for action in root_order:  # best greedy evaluation first: it wins ties
        child = root.children.get((seat, action))
        if child is not None and child.visits > best_visits:
            best, best_visits = action, child.visits
    return best


def _margin_rewards(values: Sequence[float], scale: float) -> list[float]:
    """Per seat the logistic of ``(values[s] - max of the others) / scale`` (clamped)."""
    out = []
    for s, v in enumerate(values):
        best = max(x for t, x in enumerate(values) if t != s)
        x = (v - best) / scale
        x = 30.0 if x > 30.0 else -30.0 if x < -30.0 else x
        out.append(1.0 / (1.0 + math.exp(-x)))
    return out


def search_policy(title: str, config: SearchConfig, rng: SeededRandom, clock: Clock | None = None):
    """A ``choose(state, seat) -> action`` policy searching with ``config``; its
    :class:`MCTS` is the policy's ``searcher`` attribute (for its ``stats``)."""
    searcher = MCTS(title, config, rng, clock)

    def choose(state: State, seat: Seat) -> Action:
        return searcher.choose(state, seat)

    choose.searcher = searcher  # type: ignore[attr-defined]
    return choose
