"""The archive of finished games: ``GET /api/games`` (``roundhouse.v1.Archive/ListGames``).

An archived game is read through its table, like a live one: ``GET /api/tables/{table_id}``,
``/view``, ``/stream?from_version=0`` (every stored move, then the stream ends), ``/result``
(with the seed) and ``/export`` are answered from the archive once Redis has dropped the game
(``docs/api.md``, "Finished games: the archive"). Each listed game names its ``table_id``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from roundhouse.v1 import archive_pb2
from services.web.backend import call
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES
from services.web.models import Int32, ResultOut, result_out

router = APIRouter(prefix="/api", tags=["games"], responses=ERROR_RESPONSES)

TABLE_OWNER = "table:"
"""``GameInfo.owner`` of a lobby table's game: ``table:<table_id>``."""


class ArchivedSeatOut(BaseModel):
    seat: int
    name: str = Field(description="as shown at the table")
    kind: str = Field(description='"player", "bot", or "" (an imported game\'s guest)')
    policy: str = Field(description="a hosted bot's policy")
    account_id: str = Field(description='the seat\'s account; "" when it had none')
    score: int = Field(description="in the title's unit")
    rank: int = Field(description="1 = winner")


class ArchivedGameOut(BaseModel):
    game_id: str
    table_id: str = Field(description='the table to read it through; "" if it had none')
    title: str
    rules_version: str
    num_players: int
    created_at: str = Field(description="RFC 3339")
    finished_at: str = Field(description="RFC 3339")
    num_actions: int = Field(description="the final version")
    result: ResultOut
    seats: list[ArchivedSeatOut]


class GamesOut(BaseModel):
    games: list[ArchivedGameOut] = Field(description="newest first; no seeds")
    next_page_token: str = Field(description='pass as page_token for the next page; "" = last')


def game_out(g: archive_pb2.ArchivedGame) -> dict:
    owner = g.info.owner
    return {
        "game_id": g.info.game_id,
        "table_id": owner[len(TABLE_OWNER) :] if owner.startswith(TABLE_OWNER) else "",
        "title": g.info.title,
        "rules_version": g.info.rules_version,
        "num_players": g.info.num_players,
        "created_at": g.created_at.ToJsonString(),
        "finished_at": g.finished_at.ToJsonString(),
        "num_actions": g.num_actions,
        "result": result_out(g.result),
        "seats": [
            {
                "seat": s.seat,
                "name": s.name,
                "kind": s.kind,
                "policy": s.policy,
                "account_id": s.account_id,
                "score": s.score,
                "rank": s.rank,
            }
            for s in g.seats
        ],
    }


@router.get("/games", response_model=GamesOut)
async def list_games(
    api: Api,
    auth: Auth,
    username: Annotated[str, Query(description="one account's games (any case)")] = "",
    account_id: Annotated[str, Query(description="the same by account id")] = "",
    title: Annotated[str, Query(description="railbarons, transsib or e1894")] = "",
    page_size: Annotated[Int32, Query(description="0 = 20; at most 100")] = 0,
    page_token: Annotated[str, Query(description="next_page_token of the previous page")] = "",
):
    """Archived (finished) games, newest first, anonymous (``Archive.ListGames``): 400
    ``bad_page_size``, ``bad_page_token``, ``unknown_title``, ``account_and_username``; 404
    ``unknown_account``; 503 ``database_unavailable``."""
    answer = await call(
        api.archive.ListGames,
        archive_pb2.ListGamesRequest(
            username=username,
            account_id=account_id,
            title=title,
            page_size=page_size,
            page_token=page_token,
        ),
        auth,
    )
    return {"games": [game_out(g) for g in answer.games], "next_page_token": answer.next_page_token}
