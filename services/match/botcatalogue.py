"""The catalogue of hosted bot policies: their names, weakest first, and the titles each
can play.

The lobby, the accounts service and the command line check a requested policy against
this catalogue without importing the bots (imports point one way: the lobby never
imports ``services.bots``; pyproject's import-linter contracts). The bots' own table
(:data:`services.bots.policies.POLICIES`) must agree with it: ``services.bots.policies``
refuses to import otherwise, and ``services/bots/tests/test_search.py`` checks
:func:`policy_available` against what the bots can build (docs/bots.md, "Tiers").

>>> POLICY_NAMES[:2]
('random', 'greedy')
>>> policy_available("greedy", "e1894"), policy_available("greedy", "no-such-title")
(True, False)
"""

from __future__ import annotations

POLICY_NAMES: tuple[str, ...] = (
    "random",
    "greedy",
    "search-easy",
    "search-medium",
    "search-hard",
)
"""The hosted policies, weakest first: the lobby's strength tiers (docs/bots.md)."""

POLICY_TITLES: dict[str, frozenset[str] | None] = {
    # random plays any title over the engine contract alone
    "random": None,
    # greedy needs the title's static evaluation (services/bots/heuristics/<title>.py)
    "greedy": frozenset({"railbarons", "transsib", "e1894"}),
    # the search tiers need the evaluation and the title's search settings (mcts.TITLE_SETTINGS)
    "search-easy": frozenset({"railbarons", "transsib", "e1894"}),
    "search-medium": frozenset({"railbarons", "transsib", "e1894"}),
    "search-hard": frozenset({"railbarons", "transsib", "e1894"}),
}
"""Policy -> the titles it can play (None: every title)."""


def policy_available(name: str, title: str) -> bool:
    """Whether hosted policy ``name`` can play ``title`` (an unknown name: False)."""
    if name not in POLICY_TITLES:
        return False
    titles = POLICY_TITLES[name]
    return titles is None or title in titles
