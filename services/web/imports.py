"""Recorded 1894 games in and out: ``POST /api/e1894/imports``, ``GET /api/tables/{id}/export``
and the import page ``/imports/e1894`` (``roundhouse.v1.Lobby/ImportRecordedGame``,
``ExportTable``).

A game recorded on 18xx.games (130-180 KB) is past the gateway's 64 KiB body bound: these two
paths (the API route and the page's form) have their own, ``gateway_import_max_body_bytes``
(4 MiB); the game goes on to the lobby compact, at most
:data:`~services.platform.bounds.RECORDED_GAME_MAX_BYTES`. The lobby makes the table (the caller
owns it; the recorded players are guests: ``services/lobby/handlers/imports.py``). A recording
our rules refuse is 422 with the rule's code, the 18xx.games ``action_id``, its
``action_index`` in ``actions`` and the rule in words; nothing is stored.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field

from roundhouse.v1 import lobby_pb2
from services.platform.bounds import RECORDED_GAME_MAX_BYTES
from services.web.backend import Backends, call
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES, ApiError, ErrorBody
from services.web.models import Body, TableOut, table_out
from services.web.pages.base import api_of, page, see_other, signed_in, write_form
from services.web.session import session_auth

API_PATH = "/api/e1894/imports"
PAGE_PATH = "/imports/e1894"
IMPORT_PATHS = (API_PATH, PAGE_PATH)
"""The paths whose body may be up to ``gateway_import_max_body_bytes`` (``services.web.app``)."""

router = APIRouter(responses=ERROR_RESPONSES)


class RecordedGame(Body):
    game: dict[str, Any] = Field(
        description="the game as downloaded from 18xx.games (its JSON object: id, players, "
        "settings.seed, actions, ...), title 1894"
    )


class ImportOut(BaseModel):
    table_id: str = Field(description="the new table (GET /api/tables/{table_id}/result)")
    status: str = Field(description='"finished" or "running" (an unfinished recording)')
    replay_url: str = Field(description="the replay page of the table, move by move")
    table: TableOut


class ExportOut(BaseModel):
    table_id: str
    format: str = Field(description='"18xx.games"')
    game: dict[str, Any] = Field(description="the game in that format")


IMPORT_REFUSED = {
    422: {
        "model": ErrorBody,
        "description": "the recording is refused: code (the rule), details.action_id and "
        "details.action_index (the action), the rule in words; nothing is stored",
    }
}


def _action_index(game: Any, action_id: str) -> int | None:
    """Where the action with 18xx.games id ``action_id`` is in ``game["actions"]``."""
    actions = game.get("actions") if isinstance(game, dict) else None
    if not isinstance(actions, list) or not action_id.lstrip("-").isdigit():
        return None
    wanted = int(action_id)
    for i, action in enumerate(actions):
        if isinstance(action, dict) and action.get("id") == wanted:
            return i
    return None


async def import_recorded(api: Backends, auth: str, game: Any) -> dict[str, Any]:
    """Import ``game`` (the parsed 18xx.games JSON) as a table of the caller's.

    Returns:
        the :class:`ImportOut` fields.

    Raises:
        ApiError: 413 ``recorded_game_too_large`` (``max_bytes``); 422 for a refused
            recording (``bad_game_json``, or the rule's code with ``action_id`` and
            ``action_index``); the lobby's other errors (401, 403, 429, 503).
    """
    text = json.dumps(game, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode())
    if size > RECORDED_GAME_MAX_BYTES:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "recorded_game_too_large",
            f"a recorded game is at most {RECORDED_GAME_MAX_BYTES} bytes of compact JSON",
            status=413,
            max_bytes=RECORDED_GAME_MAX_BYTES,
            bytes=size,
        )
    try:
        table = await call(
            api.lobby.ImportRecordedGame,
            lobby_pb2.ImportRecordedGameRequest(title="e1894", game_json=text),
            auth,
        )
    except ApiError as err:
        refused = err.details.get("grpc_status") == "FAILED_PRECONDITION" or err.code in (
            "bad_game_json",
            "no_interchange",
        )
        if refused and err.status == 400:
            err.status = 422
            index = _action_index(game, err.details.get("action_id", ""))
            if index is not None:
                err.details["action_index"] = str(index)
        raise
    out = table_out(table)
    return {
        "table_id": out["table_id"],
        "status": out["status"],
        "replay_url": f"/tables/{out['table_id']}/replay",
        "table": out,
    }


@router.post(
    API_PATH, response_model=ImportOut, status_code=201, tags=["imports"], responses=IMPORT_REFUSED
)
async def import_game(body: RecordedGame, api: Api, auth: Auth):
    """A game recorded on 18xx.games as a new table of the caller's (scope ``tables:write``):
    finished (its result recorded, archived) or running (every seat held by the caller).
    The body may be up to 4 MiB (this route only)."""
    return await import_recorded(api, auth, body.game)


@router.get("/api/tables/{table_id}/export", response_model=ExportOut, tags=["tables"])
async def export_table(table_id: str, api: Api, auth: Auth):
    """A finished table's game in its title's interchange format (anonymous; 1894 only:
    the 18xx.games JSON, which re-imports to the same actions)."""
    answer = await call(api.lobby.ExportTable, lobby_pb2.GetTableRequest(table_id=table_id), auth)
    return {
        "table_id": answer.table_id,
        "format": answer.format,
        "game": json.loads(answer.game_json),
    }


# ---------------------------------------------------------------- the page


@router.get(PAGE_PATH, response_class=HTMLResponse, include_in_schema=False)
async def import_page(request: Request):
    if await signed_in(request) is None:
        return see_other("/signin")
    return await page(request, "import.html")


@router.post(PAGE_PATH, include_in_schema=False)
async def import_form(request: Request) -> Response:
    """The page's form (field ``game_json``: the pasted text, or the chosen file's, read by
    the page): the result fragment (htmx) with the link to the new table's replay, or the
    refusal with the action and the rule."""
    form = await write_form(request)
    if await signed_in(request) is None:
        return see_other("/signin")
    htmx = bool(request.headers.get("hx-request"))
    fragment = "import_result.html" if htmx else "import.html"
    text = form.get("game_json", "")
    try:
        try:
            game = json.loads(text)
        except ValueError as exc:
            raise ApiError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_game_json",
                f"the text is not JSON: {exc}",
                status=422,
            ) from None
        done = await import_recorded(api_of(request), session_auth(request), game)
    except ApiError as err:
        return await page(
            request,
            fragment,
            status=200 if htmx else err.status,  # htmx swaps only 2xx answers in
            refusal={"code": err.code, "message": err.message, "details": err.details},
        )
    return await page(request, fragment, status=201, done=done)
