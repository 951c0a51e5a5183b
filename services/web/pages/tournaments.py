"""The tournament pages (the list and the new-tournament form, one tournament with its
live rounds and standings, register, withdraw and start) and a title's ratings."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import grpc
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from roundhouse.v1 import tournaments_pb2 as tpb
from services.web import tournaments as tournaments_api
from services.web.backend import (
    Backends,
)
from services.web.errors import ApiError
from services.web.pages.base import (
    api_of,
    error_page,
    form_int,
    page,
    refusal,
    see_other,
    write_form,
)
from services.web.session import (
    session_auth,
)

router = APIRouter(include_in_schema=False)


@router.get("/tournaments", response_class=HTMLResponse)
async def tournaments_page(request: Request):
    return await _tournaments(request)


async def _tournaments(request: Request, **context: Any) -> Response:
    api, auth = api_of(request), session_auth(request)
    listed = await tournaments_api.list_tournaments(api, auth, "", 50)
    return await page(
        request,
        "tournaments.html",
        tournaments=listed.get("tournaments", []),
        **context,
    )


@router.post("/tournaments")
async def create_tournament(request: Request):
    form = await write_form(request)
    api, auth = api_of(request), session_auth(request)
    try:
        body = tournaments_api.NewTournament(
            name=form.get("name", ""),
            title=form.get("title", ""),
            table_size=form_int(form, "table_size", 4),
            rounds=form_int(form, "rounds", 3),
            format=form.get("format", "swiss"),
        )
        made = await tournaments_api.create_tournament(body, api, auth)
    except ApiError as err:
        return await _tournaments(request, error=refusal(err))
    return see_other(f"/tournaments/{quote(made['tournament_id'])}")


async def _tournament_context(api: Backends, auth: str, tournament_id: str) -> dict[str, Any]:
    t = await tournaments_api.get_tournament(tournament_id, api, auth)
    return {"t": t, "tid": tournament_id}


@router.get("/tournaments/{tournament_id}", response_class=HTMLResponse)
async def tournament_page(request: Request, tournament_id: str):
    return await _tournament(request, tournament_id)


async def _tournament(request: Request, tournament_id: str, **extra: Any) -> Response:
    api, auth = api_of(request), session_auth(request)
    try:
        context = await _tournament_context(api, auth, tournament_id)
    except ApiError as err:
        return await error_page(request, err)
    return await page(request, "tournament.html", **context, **extra)


@router.get("/tournaments/{tournament_id}/live", response_class=HTMLResponse)
async def tournament_live(request: Request, tournament_id: str):
    """The rounds and standings part (htmx polls it while the tournament runs)."""
    api, auth = api_of(request), session_auth(request)
    context = await _tournament_context(api, auth, tournament_id)
    return await page(request, "tournament_live.html", **context)


@router.post("/tournaments/{tournament_id}/{what}")
async def tournament_action(request: Request, tournament_id: str, what: str):
    """``register`` (the caller, or ``account``: the organiser's bot), ``withdraw``,
    ``start`` (the organiser)."""
    form = await write_form(request)
    api, auth = api_of(request), session_auth(request)
    try:
        if what in ("register", "withdraw"):
            method = "Register" if what == "register" else "Withdraw"
            entry = tpb.RegisterRequest(
                tournament_id=tournament_id, account=form.get("account", "").strip()
            )
            await tournaments_api._call(api, method, entry, auth)
        elif what == "start":
            request_ = tpb.TournamentRequest(tournament_id=tournament_id)
            await tournaments_api._call(api, "StartTournament", request_, auth)
        else:
            raise ApiError(grpc.StatusCode.NOT_FOUND, "no_route", "register, withdraw or start")
    except ApiError as err:
        return await _tournament(request, tournament_id, error=refusal(err))
    return see_other(f"/tournaments/{quote(tournament_id)}")


@router.get("/ratings/{title}", response_class=HTMLResponse)
async def ratings_page(request: Request, title: str):
    api, auth = api_of(request), session_auth(request)
    try:
        board = await tournaments_api.leaderboard(title, api, auth, False, False, 100)
    except ApiError as err:
        return await error_page(request, err)
    return await page(request, "ratings.html", title=title, rows=board.get("rows", []))
