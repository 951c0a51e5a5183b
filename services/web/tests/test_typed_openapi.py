"""The OpenAPI document types each title's actions and options (issue 32, item 6): every action
the engines accept, collected from random games of each title (every legal action of every
active seat at every step; a ranged one at both ends of its range), validates against the
title's ``<Title>Action`` schema in the document, and the SDK's generated types
(``roundhouse_client.actions``) parse it; malformed actions fail both. The committed SDK module
is the generator's output."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError
from roundhouse_client.actions import parse_action

from services.kernel.engine import ActionRange
from services.kernel.rng import SeededRandom
from services.rules.titles import TITLE_MODULES, get_game
from services.web.openapi import document
from services.web.sdk_types import module_source
from services.web.typed import PREFIXES

SDK_ACTIONS = Path(__file__).resolve().parents[3] / "clients/python/roundhouse_client/actions.py"
GAMES_PER_TITLE = 3
STEPS_PER_GAME = 250
"""Random games per title, and the steps of each at most (an 1894 game runs past 1,000)."""


@pytest.fixture(scope="module")
def doc():
    return document()


def validator(doc, name: str) -> Draft202012Validator:
    return Draft202012Validator(
        {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    )


def accepted_actions(title: str) -> list[dict]:
    """The canonical JSON of every action legal somewhere in a few random games of ``title``."""
    game = get_game(title)
    seen: dict[str, dict] = {}
    for seed in range(GAMES_PER_TITLE):
        players = game.min_players + seed % (game.max_players - game.min_players + 1)
        state = game.new_state(players, seed)
        rng = SeededRandom(seed)
        for _ in range(STEPS_PER_GAME):
            if state.is_terminal():
                break
            for seat in state.active_seats():
                for entry in state.legal_actions(seat):
                    concrete = (
                        [entry.at(entry.min), entry.at(entry.max)]
                        if isinstance(entry, ActionRange)
                        else [entry]
                    )
                    for action in concrete:
                        obj = action.to_json()
                        seen.setdefault(repr(sorted(obj.items(), key=str)), obj)
            seat = state.active_seats()[0]
            legal = state.legal_actions(seat)
            pick = rng.choice(legal)
            state.apply(seat, pick.sample(rng) if isinstance(pick, ActionRange) else pick)
    return list(seen.values())


@pytest.mark.parametrize("title", list(TITLE_MODULES))
def test_every_action_the_engine_accepts_validates_against_the_schema(doc, title):
    game, prefix = get_game(title), PREFIXES[title]
    check = validator(doc, f"{prefix}Action")
    actions = accepted_actions(title)
    assert len({a["type"] for a in actions}) >= 3, "the random games reached too few moves"
    for action in actions:
        game.parse_action(action)  # the engine accepts it ...
        errors = [e.message for e in check.iter_errors(action)]
        assert not errors, (action, errors)  # ... so does the schema
        assert parse_action(title, action).model_dump() == action  # and the SDK's types
    # every action type of the engine has its schema, and no other type is allowed
    one_of = doc["components"]["schemas"][f"{prefix}Action"]["oneOf"]
    assert len(one_of) == len(game.codec.types)
    for bad in (
        {"type": "no_such_move"},
        {**actions[0], "surprise": 1},
        {k: v for k, v in actions[0].items() if k != "type"},
    ):
        assert not check.is_valid(bad), bad
        with pytest.raises(ValidationError):
            parse_action(title, bad)


def test_a_mistyped_field_fails_the_schema_and_the_sdk_as_the_engine(doc):
    check = validator(doc, "RailbaronsAction")
    assert check.is_valid({"type": "bid", "amount": 7})
    for bad in ({"type": "bid", "amount": "7"}, {"type": "bid", "amount": True}, {"type": "bid"}):
        assert not check.is_valid(bad), bad
        with pytest.raises(ValidationError):
            parse_action("railbarons", bad)


@pytest.mark.parametrize("title", list(TITLE_MODULES))
def test_table_options_are_typed(doc, title):
    game, prefix = get_game(title), PREFIXES[title]
    check = validator(doc, f"{prefix}Options")
    assert check.is_valid({})
    assert check.is_valid(game.parse_options({}).model_dump(mode="json"))
    assert not check.is_valid({"no_such_rule": 1})
    schemas = doc["components"]["schemas"]
    refs = [r["$ref"] for r in schemas["NewTable"]["properties"]["options"]["anyOf"]]
    assert f"#/components/schemas/{prefix}Options" in refs
    refs = [r["$ref"] for r in schemas["Move"]["properties"]["action"]["anyOf"]]
    assert f"#/components/schemas/{prefix}Action" in refs


def test_the_sdk_action_types_are_generated_from_the_engines():
    assert SDK_ACTIONS.read_text() == module_source(), (
        "clients/python/roundhouse_client/actions.py is stale: "
        ".venv/bin/python -m services.web.sdk_types > clients/python/roundhouse_client/actions.py"
    )
