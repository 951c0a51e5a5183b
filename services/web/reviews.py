"""Game reviews over HTTP (issue 31): ``POST /api/tables/{id}/review`` asks for the review of a
finished table (a seated player or its owner; a second request returns the first review and
starts nothing), ``GET /api/tables/{id}/review`` reads it (anonymous, like the replay). Both
answer the review: ``state`` (``queued``, ``running``, ``done``, ``failed``), ``progress``
(moves reviewed of the total) and, when done, one entry per move (the lobby's
``Lobby.RequestReview`` / ``Lobby.GetReview``)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from roundhouse.v1 import lobby_pb2
from services.web.backend import call
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/tables", tags=["tables"], responses=ERROR_RESPONSES)


class ReviewEntryOut(BaseModel):
    version: int = Field(description="the game's version after the move (1 = the first)")
    seat: int
    label: str = Field(description="the move in words")
    win_chance_before: list[float] = Field(
        description="per seat, in [0, 1]: the estimate after the move the search preferred"
    )
    win_chance_after: list[float] = Field(
        description="per seat, in [0, 1]: the estimate after the move played"
    )
    best_label: str = Field(description="the move the search preferred, in words")
    loss: float = Field(description="win_chance_before[seat] - win_chance_after[seat], >= 0")


class ProgressOut(BaseModel):
    done: int = Field(description="moves reviewed")
    total: int = Field(description="moves to review")


class ReviewOut(BaseModel):
    table_id: str
    state: str = Field(description="queued, running, done or failed")
    progress: ProgressOut
    entries: list[ReviewEntryOut] = Field(description="one per move, when done")
    error: str = Field("", description="why, when failed")


def review_out(msg: lobby_pb2.Review) -> ReviewOut:
    """The lobby's ``Review`` as the API's JSON."""
    return ReviewOut(
        table_id=msg.table_id,
        state=msg.state,
        progress=ProgressOut(done=msg.done, total=msg.total),
        entries=[
            ReviewEntryOut(
                version=e.version,
                seat=e.seat,
                label=e.label,
                win_chance_before=list(e.win_chance_before),
                win_chance_after=list(e.win_chance_after),
                best_label=e.best_label,
                loss=e.loss,
            )
            for e in msg.entries
        ],
        error=msg.error,
    )


@router.post("/{table_id}/review", response_model=ReviewOut, status_code=202)
async def request_review(table_id: str, api: Api, auth: Auth):
    """Ask for the search bot's review of a finished game (a seated player or the table's
    owner). 400 ``not_finished`` while it runs, 403 ``not_seated``. Idempotent: a second
    request answers the first review."""
    answer = await call(api.lobby.RequestReview, lobby_pb2.GetTableRequest(table_id=table_id), auth)
    return review_out(answer)


@router.get("/{table_id}/review", response_model=ReviewOut)
async def get_review(table_id: str, api: Api, auth: Auth):
    """The table's review (anonymous): 404 ``no_review`` before anyone asked for one."""
    answer = await call(api.lobby.GetReview, lobby_pb2.GetTableRequest(table_id=table_id), auth)
    return review_out(answer)
