"""Per-action conformance with the reference engine's traces
(``tests/fixtures/e1894/traces``): after every effective action of both recorded games our
player cash, corporation cash, share prices and cells, pars, holdings, pool, Treasury and
redeemed shares, presidents, trains, tokens (per city in multi-city hexes), tiles and
rotations, ferry markers, private owners, phase and player order equal the reference's. A
failure names the first action id where the engines part."""

from __future__ import annotations

import pytest

from .trace_compare import GAMES, compare, trace


@pytest.mark.parametrize("game", GAMES)
def test_state_matches_the_reference_after_every_action(game):
    seen = 0
    for line, differences in compare(game):
        assert not differences, (
            f"first divergence after action id {line['id']} ({line['type']} "
            f"{line['entity']}): " + "; ".join(differences[:10])
        )
        seen += 1
    assert seen == len(trace(game)) - 1


@pytest.mark.parametrize("game", GAMES)
def test_the_comparison_detects_a_difference(game):
    """The oracle is not vacuous: a changed field is reported with its action id."""
    from .trace_compare import diff, expected, snapshot

    line, _ = next(iter(compare(game)))
    ours = expected(line)
    ours["players"] = dict(ours["players"])
    first = next(iter(ours["players"]))
    ours["players"][first] += 1
    assert diff(ours, expected(line)) == [
        f".players.{first}: ours {ours['players'][first]!r}, "
        f"reference {expected(line)['players'][first]!r}"
    ]
    assert snapshot  # the same snapshot function feeds the comparison above
