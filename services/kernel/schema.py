"""Typed schemas of a title's actions, generated from the engine's own action classes.

Each :class:`~services.kernel.engine.Action` subclass (a frozen dataclass with ``TYPE`` and
plainly typed fields) becomes a pydantic model with ``type`` fixed to its ``TYPE``, the same
fields (``tuple[X, ...]`` as a JSON array of ``X``), the same defaults, no other field
(``extra="forbid"``) and strict types (``3`` is not ``"3"``, ``true`` is not ``1``), as
:class:`~services.kernel.engine.ActionCodec` decodes them; the title's actions are the union of
those models, discriminated on ``type``. The HTTP API's OpenAPI document publishes their JSON
Schema (``services/web/typed.py``) and the Python SDK's action types are generated from them
(``clients/python/roundhouse_client/actions.py``).

>>> from services.railbarons.engine.actions import Bid
>>> (model,) = action_models(ActionCodec([Bid]), "Railbarons")
>>> model(type="bid", amount=7).model_dump()
{'type': 'bid', 'amount': 7}
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from services.kernel.engine import Action, ActionCodec

ACTION_CONFIG = ConfigDict(extra="forbid", strict=True)


def json_type(hint: Any) -> Any:
    """The pydantic type of an action field's hint: tuples as lists, the rest as they are."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple:
        return list[json_type(args[0])]  # type: ignore[misc]
    if args and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return json_type(inner) | None
    return hint


def model_name(prefix: str, cls: type[Action]) -> str:
    """``Railbarons`` + ``Build`` -> ``RailbaronsBuild`` (unique across titles)."""
    return f"{prefix}{cls.__name__}"


def action_model(cls: type[Action], prefix: str) -> type[BaseModel]:
    """The pydantic model of one action class (see the module docstring)."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {
        "type": (Literal[cls.TYPE], Field(description="the action's type")),  # type: ignore[valid-type]
    }
    for f in dataclasses.fields(cls):
        default = ... if f.default is dataclasses.MISSING else f.default
        fields[f.name] = (json_type(hints[f.name]), default)
    model = create_model(  # type: ignore[call-overload]
        model_name(prefix, cls), __config__=ACTION_CONFIG, __doc__=cls.__doc__, **fields
    )
    return typing.cast(type[BaseModel], model)


def action_models(codec: ActionCodec, prefix: str) -> list[type[BaseModel]]:
    """One model per action class of ``codec``, in its registration order."""
    return [action_model(cls, prefix) for cls in codec.classes]


def action_union(codec: ActionCodec, prefix: str) -> Any:
    """The title's action type: the union of :func:`action_models`, discriminated on
    ``type`` (a ``TypeAdapter`` of it validates one action)."""
    models = tuple(action_models(codec, prefix))
    return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007


def action_schema(codec: ActionCodec, prefix: str, ref_template: str) -> dict[str, Any]:
    """JSON Schema of the title's actions: ``{"oneOf": [refs], "discriminator": ...,
    "$defs": {model name: schema}}``, refs made with ``ref_template`` (``{model}``)."""
    return TypeAdapter(action_union(codec, prefix)).json_schema(ref_template=ref_template)
