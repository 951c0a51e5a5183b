"""The per-title schemas of the OpenAPI document (issue 32, item 6), generated from the
engines' own types: for each title ``P`` (``Railbarons``, ``Transsib``, ``E1894``)

* ``PAction``: its actions, a ``oneOf`` discriminated on ``type``, one schema per action class
  (``PBuild``, ``PBid``, ...; :mod:`services.kernel.schema`, from the engine's ``codec``);
* ``POptions``: its table options (the engine's ``options_model``, with each rule's default).

``Move.action``, ``MoveOut.action`` and ``NewTable.options`` then name these (``anyOf`` the
titles': the table's title decides). The gateway still passes actions and options through
as they are: the rules service judges them, with its own reason codes.
"""

from __future__ import annotations

from typing import Any

from services.kernel.schema import action_schema
from services.rules.titles import TITLE_MODULES, get_game

REF = "#/components/schemas/{model}"

PREFIXES: dict[str, str] = {"railbarons": "Railbarons", "transsib": "Transsib", "e1894": "E1894"}
"""Title -> the prefix of its schemas' names."""


def ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(model=name)}


def title_schemas() -> dict[str, dict[str, Any]]:
    """Every per-title schema, by component name."""
    out: dict[str, dict[str, Any]] = {}
    for title in TITLE_MODULES:
        game, prefix = get_game(title), PREFIXES[title]
        actions = action_schema(game.codec, prefix, REF)
        out.update(actions.pop("$defs"))
        actions["description"] = f"an action of {game.name} ({title}), by its type"
        out[f"{prefix}Action"] = actions
        options = game.options_model.model_json_schema(ref_template=REF)
        out.update(options.pop("$defs", {}))
        options["title"] = f"{prefix}Options"
        options["description"] = f"the table options of {game.name} ({title})"
        out[f"{prefix}Options"] = options
    return out


def add_title_schemas(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (FastAPI's OpenAPI) with the per-title schemas, and the action and options
    fields naming them."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(title_schemas())
    prefixes = [PREFIXES[t] for t in TITLE_MODULES]
    for model, field, kind, what in (
        ("Move", "action", "Action", "the action's canonical JSON, of the table's title"),
        ("MoveOut", "action", "Action", "for a ranged move: its field at range.min"),
        ("NewTable", "options", "Options", "the title's table options"),
    ):
        prop = schemas[model]["properties"][field]
        schemas[model]["properties"][field] = {
            "anyOf": [ref(f"{p}{kind}") for p in prefixes],
            "description": prop.get("description", what),
            **({"default": prop["default"]} if "default" in prop else {}),
        }
    return document
