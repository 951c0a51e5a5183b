"""Every committed golden playthrough (tests/goldens/<title>/) is what the engines play today,
step by step (tests/goldens/generate.py); a rule changed on purpose means regenerating them
with ``.venv/bin/python -m tests.goldens.generate`` and saying which rule in the commit."""

from __future__ import annotations

import pytest

from tests.goldens.generate import GOLDENS, Golden, first_difference, playthrough


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda g: g.path.stem.join((g.title + "-", "")))
def test_the_golden_playthrough_is_unchanged(golden: Golden):
    assert golden.path.exists(), f"{golden.path} is missing: run python -m tests.goldens.generate"
    where = first_difference(golden.path.read_text(), playthrough(golden))
    assert not where, (
        f"{golden.path.name} of {golden.title} changed (step = the line's first field):\n{where}"
    )


def test_two_goldens_per_title_at_different_player_counts():
    from services.rules.titles import TITLE_MODULES

    for title in TITLE_MODULES:
        counts = {g.players for g in GOLDENS if g.title == title}
        assert len(counts) >= 2, title


def test_a_changed_step_is_named():
    """The checker names the first line that differs (so the step), and the end of a shorter
    text."""
    golden = GOLDENS[0]
    text = golden.path.read_text()
    lines = text.splitlines()
    lines[7] = lines[7].replace("|", "| changed", 1)
    where = first_difference(text, "\n".join(lines) + "\n")
    assert where.startswith("line 8 differs") and "changed" in where
    assert "ends at line 7" in first_difference(text, "\n".join(lines[:7]))
    assert first_difference(text, text) == ""
