"""The replay page of a finished game: a slider over the versions; the board after move N is
the engine's own ``Game.replay`` of the public moves from the public seed (as an audit does)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from cachetools import TTLCache
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from roundhouse.v1 import lobby_pb2
from services.web import boards
from services.web.backend import (
    CALL_TIMEOUT_S,
    Backends,
    rpc,
)
from services.web.errors import ApiError
from services.web.models import (
    standings_out,
)
from services.web.pages.base import (
    api_of,
    error_page,
    page,
)
from services.web.pages.table import feed_of, seat_names
from services.web.review_chart import costliest_moves, win_chance_svg

router = APIRouter(include_in_schema=False)

_replays: TTLCache[str, tuple[dict[str, Any], list[dict[str, Any]]]] = TTLCache(64, ttl=600)
"""Finished games' results and public moves by table id (they never change)."""


async def _replay_data(api: Backends, table_id: str) -> tuple[dict[str, Any], list[dict]]:
    """A finished table and its public moves (cached: finished games never change)."""
    found = _replays.get(table_id)
    if found is None:
        result = standings_out(
            await rpc(
                api.lobby.GetTableResult(
                    lobby_pb2.GetTableRequest(table_id=table_id), timeout=CALL_TIMEOUT_S
                )
            )
        )
        feed = feed_of(api, table_id)
        await feed.wait_for(1 << 30, CALL_TIMEOUT_S)
        if not feed.finished:
            raise ApiError(
                grpc.StatusCode.UNAVAILABLE, "moves_unavailable", "the moves could not be read"
            )
        moves = list(feed.moves)
        found = _replays[table_id] = (result, moves)
    return found


def _replayed_view(result: dict[str, Any], moves: list[dict], upto: int) -> dict[str, Any]:
    """The spectators' view after the first ``upto`` moves: the engine's ``Game.replay`` of
    the public moves from the public seed (a resignation entry ends the replay there)."""
    from services.rules.titles import get_game

    table = result["table"]
    log = []
    for m in moves[:upto]:
        if m["action"].get("type") == "resign":
            break
        log.append((m["seat"], m["action"]))
    state = get_game(table["title"]).replay(
        table["num_players"], int(result["seed"]), table["options"], log
    )
    return state.view(None)


async def _review(api: Backends, table_id: str) -> dict[str, Any] | None:
    """The table's review as the template shows it (``None``: none requested), never an error:
    a review that cannot be read leaves the replay as it was."""
    try:
        review = await api.lobby.GetReview(
            lobby_pb2.GetTableRequest(table_id=table_id), timeout=CALL_TIMEOUT_S
        )
    except grpc.aio.AioRpcError:
        return None
    return {
        "state": review.state,
        "done": review.done,
        "total": review.total,
        "entries": [
            {
                "version": e.version,
                "seat": e.seat,
                "label": e.label,
                "win_chance_before": list(e.win_chance_before),
                "win_chance_after": list(e.win_chance_after),
                "best_label": e.best_label,
                "loss": e.loss,
            }
            for e in review.entries
        ],
    }


@router.get("/tables/{table_id}/replay", response_class=HTMLResponse)
async def replay_page(request: Request, table_id: str, at: int = -1):
    """A finished game move by move: a slider over the versions; ``?at=N`` (htmx) answers the
    board after move N."""
    api = api_of(request)
    try:
        result, moves = await _replay_data(api, table_id)
    except ApiError as err:
        return await error_page(request, err)
    upto = len(moves) if at < 0 or at > len(moves) else at
    view = await asyncio.to_thread(_replayed_view, result, moves, upto)
    names = seat_names(result["table"])
    board = boards.render(result["table"]["title"], view, names)
    context = {
        "table": result["table"],
        "standings": result["standings"],
        "moves": moves,
        "upto": upto,
        "board": board,
        "names": names,
    }
    if request.headers.get("hx-request") and at >= 0:
        return await page(request, "replay_board.html", **context)
    review = await _review(api, table_id)
    if review is not None and review["entries"]:
        context["review_chart"] = win_chance_svg(review["entries"], names, table_id)
        context["costliest"] = costliest_moves(review["entries"], names)
    context["review"] = review
    return await page(request, "replay.html", **context)
