"""Every uncertain rule is a named, documented option (spec §14; docs/railbarons-rules.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from services.railbarons.engine import GAME
from services.railbarons.engine.options import RailbaronsOptions

DOC = Path(__file__).resolve().parents[4] / "docs" / "railbarons-rules.md"


def test_every_option_names_its_tag_and_section():
    """§14: each option's description cites a spec section and an uncertainty tag."""
    for name, field in RailbaronsOptions.model_fields.items():
        text = field.description or ""
        assert re.search(r"§\d+", text), name
        assert re.search(r"\[(S|U|C|V value, U)[^\]]*\]", text), name


def test_docs_list_every_option_with_its_default():
    """docs/railbarons-rules.md has one table row per option with the model's default."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Rule options", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` \| `([^`]*)` \|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    fields = RailbaronsOptions.model_fields
    assert set(rows) == set(fields)
    for name, field in fields.items():
        assert json.loads(rows[name]) == field.default, name


def test_defaults_are_the_spec_choices():
    """§4-§11: the defaults (spot checks of the spec's chosen values)."""
    o = RailbaronsOptions()
    assert o.build_cost_formula == "multiply" and o.dividend_rounding == "up"
    assert not o.auctioneer_must_open and o.start_hexes_exclusive
    assert o.wabash_start_income == 1 and not o.wabash_auction_uses_dial
    assert (o.wheeling_step, o.wheeling_max, o.pittsburgh_step, o.pittsburgh_max) == (1, 6, 2, 8)
    assert GAME.options_schema()["properties"]["tiebreak"]["default"] == "shared"
