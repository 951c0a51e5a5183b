"""Shared pieces of the bot tests."""

from __future__ import annotations

from services.bots.policies import make_policy
from services.kernel.playout import play_out, random_policy
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game


def greedy_wins(title: str, n: int, games: int, first_seed: int) -> int:
    """Games out of ``games`` (seeds ``first_seed``, ``first_seed + 1``, ...) that
    one greedy seat wins (rank 1, ties included) against ``n - 1`` random seats;
    the greedy seat rotates over the seats."""
    game = get_game(title)
    wins = 0
    for g in range(games):
        seat = g % n
        state = game.new_state(n, first_seed + g)
        policies = {s: random_policy(SeededRandom(first_seed * 100 + g * 10 + s)) for s in range(n)}
        policies[seat] = make_policy("greedy", title, first_seed + g)
        play_out(state, policies, SeededRandom(g))
        assert state.is_terminal()
        wins += state.result().ranks[seat] == 1
    return wins
