"""Write the Python SDK's action types from the engines' own action classes, the source of the
OpenAPI document's action schemas too (:mod:`services.kernel.schema`); a test checks that the
committed module is this output:

    .venv/bin/python -m services.web.sdk_types > clients/python/roundhouse_client/actions.py
"""

from __future__ import annotations

import dataclasses
import textwrap
import types
import typing
from typing import Any

from services.kernel.schema import json_type, model_name
from services.rules.titles import TITLE_MODULES, get_game
from services.web.typed import PREFIXES

HEADER = '''"""The actions of each title as typed models (generated: do not edit).

Made by ``python -m services.web.sdk_types`` from the engines' own action classes, the same
source as the OpenAPI document's ``<Title>Action`` schemas (``/api/openapi.json``). Each model
is one action type: ``type`` is fixed, the fields are the action's, nothing else is allowed, and
values are not converted (``"7"`` is not ``7``). ``ACTIONS[title]`` is the title's union,
discriminated on ``type``; :func:`parse_action` validates one action's canonical JSON, and
``model.model_dump()`` is what ``Client.move`` sends.

>>> parse_action("railbarons", {"type": "bid", "amount": 7})
RailbaronsBid(type='bid', amount=7)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
'''

FOOTER = '''

def parse_action(title: str, action: dict[str, Any]) -> BaseModel:
    """The typed model of one ``action`` (canonical JSON) of ``title``.

    Raises:
        KeyError: an unknown title.
        pydantic.ValidationError: not an action of that title (unknown type, a missing, extra
            or mistyped field).
    """
    return _ADAPTERS[title].validate_python(action)
'''


def render_type(hint: Any) -> str:
    """Python source of a field's type (``int``, ``list[str]``, ``str | None``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        return f"list[{render_type(args[0])}]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join("None" if a is type(None) else render_type(a) for a in args)
    return hint.__name__


def module_source() -> str:
    """The whole generated module."""
    out = [HEADER]
    unions = []
    for title in TITLE_MODULES:
        game, prefix = get_game(title), PREFIXES[title]
        names = []
        for cls in game.codec.classes:
            name = model_name(prefix, cls)
            names.append(name)
            doc = textwrap.indent((cls.__doc__ or name).strip(), "    ").strip()
            lines = [f"\n\nclass {name}(_Action):", f'    """{doc}"""', ""]
            lines.append(f'    type: Literal["{cls.TYPE}"] = "{cls.TYPE}"')
            hints = typing.get_type_hints(cls)
            for f in dataclasses.fields(cls):
                kind = render_type(json_type(hints[f.name]))
                default = "" if f.default is dataclasses.MISSING else f" = {f.default!r}"
                lines.append(f"    {f.name}: {kind}{default}")
            out.append("\n".join(lines))
        members = "\n    | ".join(names)
        unions.append(
            f"\n\n{prefix}Action = Annotated[\n    {members},"
            f'\n    Field(discriminator="type"),\n]\n"""An action of {game.name} ({title})."""'
        )
    out.extend(unions)
    table = ", ".join(f'"{t}": {PREFIXES[t]}Action' for t in TITLE_MODULES)
    out.append(f'\n\nACTIONS: dict[str, Any] = {{{table}}}\n"""Title -> its action union."""')
    out.append(
        "\n_ADAPTERS: dict[str, TypeAdapter[Any]] = "
        "{title: TypeAdapter(union) for title, union in ACTIONS.items()}\n"
    )
    out.append(FOOTER)
    return "".join(out)


def main() -> None:
    print(module_source(), end="")


if __name__ == "__main__":
    main()
