"""Import/export in the shape of the service messages ``ImportGameResponse`` and
``ExportGameRequest``/``ExportGameResponse`` of ``proto/roundhouse/v1/e1894.proto``.

Plain dicts in the protobuf JSON mapping (``json_format.ParseDict`` turns them into the
messages), so the engine stays free of protobuf:

>>> from services.e1894.engine.interchange.api import import_response
>>> import_response('{"players": []}')["ok"]
False
"""

from __future__ import annotations

import json
from typing import Any

from services.common.engine import IllegalAction, InvalidOptions

from ..game import GAME
from .exporter import export_game
from .importer import ImportDivergence, import_game


def action_message(action_json: dict[str, Any]) -> dict[str, Any]:
    """Canonical action JSON -> the ``roundhouse.v1.e1894.Action`` JSON form."""
    body = {k: v for k, v in action_json.items() if k != "type" and v is not None}
    return {action_json["type"]: body}


def action_from_message(msg: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`action_message`."""
    ((kind, body),) = msg.items()
    return {"type": kind, **body}


def import_response(game_json: str) -> dict[str, Any]:
    """An 18xx.games game (JSON text) -> ``ImportGameResponse``: our setup and typed log, the
    result when finished, or ``ok: false`` with the first divergence (its action id, code and
    reason)."""
    try:
        data = json.loads(game_json)
        if not isinstance(data, dict):
            raise ValueError("the game JSON must be an object")
    except ValueError as exc:
        return {"ok": False, "divergence": {"action_id": 0, "code": "bad_json", "reason": str(exc)}}
    try:
        imp = import_game(data)
    except ImportDivergence as exc:
        return {
            "ok": False,
            "divergence": {
                "action_id": exc.action_id or 0,
                "code": exc.code,
                "reason": exc.reason,
            },
        }
    except (KeyError, TypeError, ValueError) as exc:
        return {
            "ok": False,
            "divergence": {"action_id": 0, "code": "bad_game", "reason": repr(exc)},
        }
    out: dict[str, Any] = {
        "ok": True,
        "num_players": imp.num_players,
        "seed": imp.seed,
        "options_json": json.dumps(GAME.parse_options(imp.options).model_dump(), sort_keys=True),
        "player_ids": imp.player_ids,
        "log": [
            {"seat": seat, "action": action_message(a.to_json()), "source_id": sid}
            for (seat, a), sid in zip(imp.log, imp.source_ids, strict=True)
        ],
        "game_end_reason": imp.game_end_reason,
    }
    if imp.state.is_terminal():
        out["result"] = imp.result()
    return out


def export_response(request: dict[str, Any]) -> dict[str, Any]:
    """``ExportGameRequest`` -> ``ExportGameResponse`` (the 18xx.games JSON as text).

    Raises:
        IllegalAction: the log is not a legal game of ours.
        InvalidOptions: bad player count or options.
    """
    try:
        options = json.loads(request.get("options_json") or "{}")
    except ValueError as exc:
        raise InvalidOptions(f"options_json: {exc}") from None
    log = [
        (int(e.get("seat", 0)), action_from_message(e["action"])) for e in request.get("log", [])
    ]
    ids = [int(x) for x in request.get("player_ids", [])] or None
    try:
        data = export_game(
            int(request["num_players"]), int(request["seed"]), options, log, player_ids=ids
        )
    except KeyError as exc:
        raise InvalidOptions(f"missing {exc}") from None
    return {"game_json": json.dumps(data, ensure_ascii=False)}


__all__ = [
    "IllegalAction",
    "action_from_message",
    "action_message",
    "export_response",
    "import_response",
]
