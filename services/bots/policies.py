"""Bot policies: ``choose(state, seat) -> action`` over the engine contract.

* ``random``: over the play-out actions (the legal actions, or the title's
  :func:`~services.kernel.playout.playout_actions` subset), one entry uniformly, then,
  where the entry is a range (an :class:`~services.kernel.engine.ActionRange`, e.g. a
  price from 1 to 630), one of its values uniformly; every entry weighs the same whatever
  its size.
* ``greedy``: one-step look-ahead. Applies each legal action to a clone and
  keeps the one (among the play-out actions) whose resulting position the title's static evaluation
  (:mod:`services.bots.heuristics`) likes best; ties are broken at random.
  Of a range it tries only the few values the title's ``candidate_values``
  proposes (default: the two ends).

* ``search-easy``, ``search-medium``, ``search-hard``: information-set Monte Carlo tree
  search (:mod:`services.bots.search.mcts`) with greedy rollouts cut off by the greedy
  evaluation, each tier with its budget per decision (:data:`SEARCH_TIERS`).

Policies draw randomness only from the :class:`SeededRandom` they are given,
so a bot's choice is reproducible from (policy, seed, state).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from services.bots.heuristics import evaluator_for, greedy_options
from services.bots.search.mcts import TITLE_SETTINGS, SearchConfig, search_policy
from services.kernel.engine import Action, Seat, State
from services.kernel.playout import Policy, random_policy
from services.kernel.rng import SeededRandom
from services.match import botcatalogue
from services.match.botcatalogue import policy_available

__all__ = [
    "POLICIES",
    "POLICY_NAMES",
    "SEARCH_TIERS",
    "TITLE_TIERS",
    "greedy_options",
    "greedy_policy",
    "make_policy",
    "policy_available",
    "policy_buildable",
    "search_config",
]

SEARCH_TIERS: dict[str, SearchConfig] = {
    # budgets are wall-clock seconds per decision; see docs/bots.md for what each buys
    "search-easy": SearchConfig(time_budget=0.05, worlds=4, rollout_depth=2, rollout_sample=3),
    "search-medium": SearchConfig(time_budget=0.2, worlds=8, rollout_depth=4, rollout_sample=4),
    "search-hard": SearchConfig(time_budget=0.5, worlds=16, rollout_depth=6, rollout_sample=4),
}
"""The search tiers' budgets and default knobs
(:class:`~services.bots.search.mcts.SearchConfig`); :data:`TITLE_TIERS` overrides the knobs
(never the budget) per title."""

_E1894_FLAT: dict[str, int | float] = {"rollout_sample": 4, "rollout_depth": 4, "tree_depth": 1}
"""1894's search for medium and hard alike (their budgets differ): see :data:`TITLE_TIERS`."""

TITLE_TIERS: dict[tuple[str, str], dict[str, int | float]] = {
    # 1894's moves are ~10x dearer to simulate (route finding): few iterations per
    # decision, so the search is flat (tree_depth 1) over the root's moves ordered by the
    # estimate's margin, widened progressively (TITLE_SETTINGS), and models every player in
    # short rollouts by the greedy choice among a few options. Hard is medium's search with
    # its larger budget: at ~80-140 iterations a decision a second tree level and longer
    # rollouts spread them too thin (hard with tree_depth 2 and rollouts of 6 lost 3 games
    # of 3 to medium on one deal, wall clock, quiet machine, 2026-12-03)
    ("e1894", "search-easy"): {"root_width": 3, "rollout_sample": 0, "rollout_depth": 4},
    ("e1894", "search-medium"): _E1894_FLAT,
    ("e1894", "search-hard"): _E1894_FLAT,
}


def search_config(tier: str, title: str) -> SearchConfig:
    """The budget and knobs of search tier ``tier`` for ``title``.

    Raises:
        KeyError: unknown tier.
    """
    return dataclasses.replace(SEARCH_TIERS[tier], **TITLE_TIERS.get((title, tier), {}))


def greedy_policy(title: str, rng: SeededRandom) -> Policy:
    """One-step greedy policy for ``title`` (see module docstring).

    Raises:
        KeyError: the title has no heuristic.
    """
    evaluate = evaluator_for(title)
    options = greedy_options(title)

    def choose(state: State, seat: Seat) -> Action:
        legal = options(state, seat)
        if len(legal) == 1:
            return legal[0]
        best: list[Action] = []
        best_value = float("-inf")
        for action in legal:
            child = state.clone()
            child.apply(seat, action)
            value = evaluate(child, seat)
            if value > best_value:
                best, best_value = [action], value
            elif value == best_value:
                best.append(action)
        return rng.choice(best)

    return choose


def _search_factory(tier: str) -> Callable[..., Policy]:
    def factory(title: str, rng: SeededRandom, clock: str | None = None) -> Policy:
        config = search_config(tier, title)
        if clock is not None:
            config = dataclasses.replace(config, clock=clock)
        return search_policy(title, config, rng)

    return factory


POLICIES: dict[str, Callable[[str, SeededRandom], Policy]] = {
    "random": lambda title, rng: random_policy(rng),
    "greedy": greedy_policy,
    **{tier: _search_factory(tier) for tier in SEARCH_TIERS},
}
POLICY_NAMES = botcatalogue.POLICY_NAMES
"""The hosted policies, weakest first: the lobby's strength tiers (docs/bots.md); the
catalogue (:mod:`services.match.botcatalogue`) the lobby checks requests against."""
if tuple(POLICIES) != POLICY_NAMES:  # pragma: no cover - a new policy missing from the catalogue
    raise ImportError(
        f"services.match.botcatalogue names {POLICY_NAMES}, the bots build {tuple(POLICIES)}"
    )


def policy_buildable(name: str, title: str) -> bool:
    """Whether the bots can build policy ``name`` for ``title`` (greedy needs the title's
    heuristic, the search tiers its search settings); :func:`policy_available` (the
    catalogue) must agree, which ``test_search.py`` checks."""
    if name not in POLICIES:
        return False
    if name != "random":
        try:
            evaluator_for(title)
        except KeyError:
            return False
    if name in SEARCH_TIERS and title not in TITLE_SETTINGS:
        return False
    return True


def make_policy(name: str, title: str, seed: int, search_clock: str | None = None) -> Policy:
    """A policy by name for a title, seeded. ``search_clock`` (``"wall"`` or ``"cpu"``)
    overrides the clock a search tier budgets against (the arena's ``--clock``).

    Raises:
        KeyError: unknown policy name, or no heuristic for the title.
    """
    try:
        factory = POLICIES[name]
    except KeyError:
        raise KeyError(f"unknown bot policy {name!r}; known: {', '.join(POLICIES)}") from None
    if search_clock is not None and name in SEARCH_TIERS:
        return factory(title, SeededRandom(seed), search_clock)
    return factory(title, SeededRandom(seed))
