"""The web pages: server-rendered HTML (Jinja2, autoescaped) with htmx, served by the gateway
at ``/`` (``docs/web.md``).

Every page calls the same backend as the JSON API: the API's handlers in
:mod:`services.web.tables`, :mod:`services.web.accounts` and :mod:`services.web.tournaments`
as functions, or the lobby / accounts / tournament stubs of :class:`~services.web.backend.Backends`
as they do. No game logic lives here: moves, labels and ranges come from the rules services;
boards are drawn by :mod:`services.web.boards` from the views; a finished game's replay is the
engine's own ``Game.replay`` of the public moves from the public seed (as an audit does).

Writes are forms (POST, ``application/x-www-form-urlencoded``) checked for the double-submit
value first (:mod:`services.web.session`); a refused write re-renders the page with the
server's reason code and message and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, quote

import grpc
from cachetools import TTLCache
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

from roundhouse.v1 import accounts_pb2, lobby_pb2
from roundhouse.v1 import tournaments_pb2 as tpb
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.transsib.engine.provenance import provisional_sentence as transsib_provisional
from services.web import boards
from services.web import tables as tables_api
from services.web import tournaments as tournaments_api
from services.web.backend import (
    CALL_TIMEOUT_S,
    Backends,
    call,
    client_metadata,
    metadata_of,
    rpc,
)
from services.web.errors import ApiError
from services.web.feeds import Feeds
from services.web.models import (
    STATUS_NAMES,
    BotSeat,
    NewTable,
    moves_out,
    standings_out,
    table_out,
    view_out,
)
from services.web.session import (
    CSRF_FIELD,
    SESSION_LIFETIME_S,
    SESSION_SCOPES,
    check_csrf,
    clear_session,
    csrf_token,
    session_auth,
    set_csrf_cookie,
    set_session,
)

router = APIRouter(include_in_schema=False)

HERE = Path(__file__).parent
TITLES = {"railbarons": "Chicago Express", "transsib": "Russian Railroads", "e1894": "1894"}
"""The titles the pages offer, with their names."""
TITLE_NOTES: dict[str, str] = {
    title: note for title, note in {"transsib": transsib_provisional()}.items() if note
}
"""What players must know about a title before they play it, shown in the lobby's title
list and on every table page of the title: for Russian Railroads the one sentence naming
its provisional components (built from the data file's tags, so it stays true)."""
BOT_POLICIES = ("greedy", "random", "search-easy")
"""The hosted bot policies offered in the forms (the lobby checks the name: docs/bots.md)."""
LOG_MOVES = 40
"""How many of the latest moves the table page lists (the replay shows them all)."""
SSE_KEEPALIVE_S = 10.0
LOG_WAIT_S = 5.0
"""How long a page waits for the shared feed to catch up with its view (seconds)."""
"""An idle live-update stream sends a comment this often (seconds)."""

_env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
_env.filters["tojson_attr"] = lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True)
templates = Jinja2Templates(env=_env)
_replays: TTLCache[str, tuple[dict[str, Any], list[dict[str, Any]]]] = TTLCache(64, ttl=600)


def _api(request: Request) -> Backends:
    return request.app.state.backends


async def _form(request: Request) -> dict[str, str]:
    """The urlencoded form of a page write (the last value of each field)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}


async def _write_form(request: Request) -> dict[str, str]:
    form = await _form(request)
    check_csrf(request, form)
    return form


async def _me(request: Request) -> dict[str, Any] | None:
    """The signed-in account (username, account_id, kind) or None (signed out, or the
    session's token no longer valid)."""
    auth = session_auth(request)
    if not auth:
        return None
    if "me" in request.state.__dict__:
        return request.state.me
    api = _api(request)
    try:
        me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
        found: dict[str, Any] | None = {
            "username": me.account.username,
            "account_id": me.account.account_id,
        }
    except ApiError as err:
        if err.status != 401:
            raise
        found = None
    request.state.me = found
    return found


async def _page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("me", await _me(request))
    response = templates.TemplateResponse(
        request,
        name,
        {
            "csrf": csrf_token(request),
            "csrf_field": CSRF_FIELD,
            "titles": TITLES,
            "title_notes": TITLE_NOTES,
            **context,
        },
        status_code=status,
    )
    set_csrf_cookie(request, response)
    return response


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _refusal(err: ApiError) -> dict[str, str]:
    return {"code": err.code, "message": err.message}


async def error_page(request: Request, err: ApiError) -> Response:
    """An :class:`ApiError` on a page: the error page with its reason code and message."""
    return await _page(request, "error.html", status=err.status, error=_refusal(err))


# ---------------------------------------------------------------- accounts


@router.get("/signup", response_class=HTMLResponse)
async def signup_page(request: Request):
    return await _page(request, "signup.html")


@router.post("/signup")
async def signup(request: Request):
    form = await _write_form(request)
    api = _api(request)
    username, password = form.get("username", ""), form.get("password", "")
    try:
        await rpc(
            api.accounts.CreateAccount(
                accounts_pb2.CreateAccountRequest(username=username, password=password),
                timeout=CALL_TIMEOUT_S,
            )
        )
        return await _sign_in(request, username, password)
    except ApiError as err:
        return await _page(
            request, "signup.html", status=err.status, error=_refusal(err), username=username
        )


async def _sign_in(request: Request, username: str, password: str) -> Response:
    answer = await rpc(
        _api(request).accounts.CreateToken(
            accounts_pb2.CreateTokenRequest(
                username=username,
                password=password,
                scopes=list(SESSION_SCOPES),
                expires_in_seconds=SESSION_LIFETIME_S,
                label="web session",
            ),
            metadata=client_metadata(request),
            timeout=CALL_TIMEOUT_S,
        )
    )
    response = _see("/")
    set_session(request, response, answer.token)
    return response


@router.get("/signin", response_class=HTMLResponse)
async def signin_page(request: Request):
    return await _page(request, "signin.html")


@router.post("/signin")
async def signin(request: Request):
    form = await _write_form(request)
    username = form.get("username", "")
    try:
        return await _sign_in(request, username, form.get("password", ""))
    except ApiError as err:
        # one answer whether or not the account exists (and whatever its kind)
        error = (
            _refusal(err)
            if err.code == "too_many_attempts" or err.status == 429
            else {"code": "bad_credentials", "message": "wrong username or password"}
        )
        return await _page(
            request, "signin.html", status=401, error=error, username=username, me=None
        )


@router.post("/signout")
async def signout(request: Request):
    """Revokes the session's token (it no longer works anywhere) and forgets the cookie."""
    await _write_form(request)
    auth = session_auth(request)
    if auth:
        api = _api(request)
        try:
            me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
            await call(
                api.accounts.RevokeToken,
                accounts_pb2.RevokeTokenRequest(token_id=me.token.token_id),
                auth,
            )
        except ApiError as err:
            if err.status != 401:  # already expired or revoked: signed out all the same
                raise
    response = _see("/")
    clear_session(request, response)
    return response


@router.get("/account", response_class=HTMLResponse)
async def account_page(request: Request):
    return await _account(request)


async def _account(request: Request, **context: Any) -> Response:
    me = await _me(request)
    if me is None:
        return _see("/signin")
    api, auth = _api(request), session_auth(request)
    md = metadata_of(auth)
    tokens = await rpc(
        api.accounts.ListTokens(accounts_pb2.ListTokensRequest(), metadata=md, timeout=30)
    )
    current = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
    bots = await rpc(api.accounts.ListBots(accounts_pb2.ListBotsRequest(), metadata=md, timeout=30))
    return await _page(
        request,
        "account.html",
        tokens=[
            {
                "token_id": t.token_id,
                "label": t.label,
                "scopes": list(t.scopes),
                "revoked": t.HasField("revoked_at"),
                "expired": t.HasField("expires_at") and t.expires_at.ToSeconds() < time.time(),
                "current": t.token_id == current.token.token_id,
            }
            for t in tokens.tokens
        ],
        bots=[{"username": b.username, "hosted_policy": b.hosted_policy} for b in bots.bots],
        policies=BOT_POLICIES,
        **context,
    )


@router.post("/account/tokens")
async def new_token(request: Request):
    form = await _write_form(request)
    auth = session_auth(request)
    api = _api(request)
    scopes = [s for s in ("play", "tables:write", "bots:write", "tournament:write") if form.get(s)]
    try:
        me = await _me(request)
        if me is None:
            return _see("/signin")
        answer = await call(
            api.accounts.CreateToken,
            accounts_pb2.CreateTokenRequest(
                username=me["username"],
                password=form.get("password", ""),
                scopes=scopes or ["play"],
                label=form.get("label", ""),
            ),
            auth,
            client_metadata(request),
        )
    except ApiError as err:
        return await _account(request, error=_refusal(err))
    return await _account(request, new_token=answer.token)


@router.post("/account/tokens/{token_id}/revoke")
async def revoke_token(request: Request, token_id: str):
    """Revokes one of the account's tokens; the session's own signs the browser out."""
    await _write_form(request)
    if await _me(request) is None:
        return _see("/signin")
    api, auth = _api(request), session_auth(request)
    try:
        me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
        await call(
            api.accounts.RevokeToken, accounts_pb2.RevokeTokenRequest(token_id=token_id), auth
        )
    except ApiError as err:
        return await _account(request, error=_refusal(err))
    if token_id == me.token.token_id:
        response = _see("/signin")
        clear_session(request, response)
        return response
    return _see("/account")


@router.post("/account/bots")
async def new_bot(request: Request):
    form = await _write_form(request)
    api, auth = _api(request), session_auth(request)
    try:
        await call(
            api.accounts.CreateBotAccount,
            accounts_pb2.CreateBotAccountRequest(
                username=form.get("username", ""), hosted_policy=form.get("policy", "")
            ),
            auth,
        )
    except ApiError as err:
        return await _account(request, error=_refusal(err))
    return _see("/account")


# ---------------------------------------------------------------- lobby


async def _list(api: Backends, auth: str, statuses: list[str]) -> list[dict[str, Any]]:
    answer = await call(
        api.lobby.ListTables,
        lobby_pb2.ListTablesRequest(status=[STATUS_NAMES[s] for s in statuses], page_size=50),
        auth,
    )
    return [table_out(t) for t in answer.tables]


@router.get("/", response_class=HTMLResponse)
async def lobby_page(request: Request):
    return await _lobby(request)


async def _lobby(request: Request, status: int = 200, **context: Any) -> Response:
    api, auth = _api(request), session_auth(request)
    return await _page(
        request,
        "lobby.html",
        status=status,
        open_tables=await _list(api, auth, ["open"]),
        running=await _list(api, auth, ["running"]),
        finished=await _list(api, auth, ["finished"]),
        policies=BOT_POLICIES,
        **context,
    )


def _int(form: dict[str, str], name: str, default: int = 0) -> int:
    """A whole number of a form (400 ``bad_field``; ``out_of_range`` past an int32)."""
    raw = form.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT, "bad_field", f"{name}: a whole number", field=name
        ) from None
    if not INT32_MIN <= value <= INT32_MAX:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "out_of_range",
            f"{name}: {INT32_MIN}..{INT32_MAX}",
            field=name,
            min=INT32_MIN,
            max=INT32_MAX,
        )
    return value


def _new_table(form: dict[str, str]) -> NewTable:
    """The lobby form as the API's :class:`NewTable` (its checks apply)."""
    try:
        options = json.loads(form.get("options", "").strip() or "{}")
    except json.JSONDecodeError as exc:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT, "bad_json", f"options: not JSON ({exc.msg})"
        ) from None
    if not isinstance(options, dict):
        raise ApiError(grpc.StatusCode.INVALID_ARGUMENT, "bad_json", "options: a JSON object {...}")
    kind = form.get("clock", "none")
    clock: dict[str, Any] | None = None
    if kind == "live":
        clock = {
            "kind": "live",
            "base_s": _int(form, "base_s", 600),
            "increment_s": _int(form, "increment_s", 5),
        }
    elif kind == "correspondence":
        clock = {"kind": "correspondence", "per_move_s": _int(form, "per_move_s", 86400)}
    elif kind != "none":
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_time_control",
            "clock: none, live or correspondence",
            field="clock",
        )
    return NewTable(
        title=form.get("title", ""),
        num_players=_int(form, "num_players"),
        options=options,
        time_control=clock,
        timeout_policy="takeover" if clock else "",
    )


@router.post("/tables")
async def create_table(request: Request):
    """The lobby's form: a new table (the caller owns it), the caller in seat 0 unless
    "watch only", ``bots`` seats for hosted bots of ``policy``, started once full."""
    form = await _write_form(request)
    api, auth = _api(request), session_auth(request)
    try:
        body = _new_table(form)
        bots = _int(form, "bots")
        table = await tables_api.create_table(body, api, auth)
        table_id = table["table_id"]
        seat = 0
        if form.get("play", "") == "on":
            await tables_api.join_seat(table_id, 0, api, auth)
            seat = 1
        for i in range(seat, min(seat + bots, body.num_players)):
            policy = form.get("policy", "greedy")
            await tables_api.add_bot(table_id, i, BotSeat(policy=policy), api, auth)
        if seat + bots >= body.num_players:
            await tables_api.start_table(table_id, api, auth)
    except ApiError as err:
        return await _lobby(request, status=err.status, error=_refusal(err), form=form)
    return _see(f"/tables/{quote(table_id)}")


@router.post("/tables/{table_id}/seats/{seat}/{what}")
async def seat_action(request: Request, table_id: str, seat: tables_api.SeatPath, what: str):
    """Join a seat, leave it, or (the owner) give it to a bot: ``what`` = join, leave, bot."""
    form = await _write_form(request)
    api, auth = _api(request), session_auth(request)
    try:
        if what == "join":
            await tables_api.join_seat(table_id, seat, api, auth)
        elif what == "leave":
            await tables_api.leave_seat(table_id, seat, api, auth)
        elif what == "bot":
            policy = form.get("policy", "greedy")
            await tables_api.add_bot(table_id, seat, BotSeat(policy=policy), api, auth)
        else:
            raise ApiError(grpc.StatusCode.NOT_FOUND, "no_route", "join, leave or bot")
    except ApiError as err:
        return await _table_page(request, table_id, error=_refusal(err))
    return _see(f"/tables/{quote(table_id)}")


@router.post("/tables/{table_id}/start")
async def start(request: Request, table_id: str):
    await _write_form(request)
    api, auth = _api(request), session_auth(request)
    try:
        await tables_api.start_table(table_id, api, auth)
    except ApiError as err:
        return await _table_page(request, table_id, error=_refusal(err))
    return _see(f"/tables/{quote(table_id)}")


# ---------------------------------------------------------------- the table


def _feed(api: Backends, table_id: str):
    """The table's shared move feed (:mod:`services.web.feeds`)."""
    if api.feeds is None:
        api.feeds = Feeds(api.lobby)
    return api.feeds.get(table_id)


async def _log(api: Backends, table_id: str, after: int, upto: int) -> list[dict]:
    """The moves ``after`` < version <= ``upto`` with their labels (the shared feed; what
    it has after :data:`LOG_WAIT_S` if the lobby is slow)."""
    if upto <= after:
        return []
    feed = _feed(api, table_id)
    await feed.wait_for(upto, LOG_WAIT_S)
    return feed.moves[after:upto]


def _names(table: dict[str, Any]) -> list[str]:
    """Each seat's name as the pages show it: the account (hosted bots are accounts named
    after their policy, so three greedy bots share a name: those get their seat number)."""
    names = [
        s.get("guest") or s["account"] or s["policy"] or f"seat {s['seat']}" for s in table["seats"]
    ]
    return [f"{n} ({i})" if names.count(n) > 1 else n for i, n in enumerate(names)]


async def table_context(api: Backends, auth: str, table_id: str) -> dict[str, Any]:
    """Everything the table page shows: ``table`` (as the API's), ``view`` (the caller's
    seat's or the spectators'; None before the start), ``board`` (SVG), ``clocks`` (per
    seat: remaining_ms, running, deadline_ms, flagged), ``moves`` (the caller's legal moves
    now), ``log`` (the latest :data:`LOG_MOVES` moves), ``standings`` (finished games).

    Raises:
        ApiError: the lobby's refusal (404 ``table_not_found``, ...).
    """
    raw = await api.table(table_id)
    table = table_out(raw)
    context: dict[str, Any] = {"table": table, "names": _names(table), "view": None}
    if table["status"] not in ("running", "finished"):
        return context
    seat = await api.seat_of(table_id, auth)
    request = lobby_pb2.SeatRequest(table_id=table_id)
    if seat is not None:
        request.seat = seat
    answer = await call(api.lobby.GetSeatView, request, auth)
    view = view_out(answer, seat)
    context["view"] = view
    context["clocks"] = {
        c.seat: {
            "remaining_ms": c.remaining_ms,
            "running": c.running,
            "deadline_ms": c.deadline_ms,
            "flagged": c.flagged,
        }
        for c in answer.clocks
    }
    log_task = asyncio.create_task(
        _log(api, table_id, max(0, view["version"] - LOG_MOVES), view["version"])
    )
    moves: list[dict[str, Any]] = []
    if seat is not None and seat in view["active_seats"] and not view["finished"]:
        legal = await call(
            api.lobby.ListMoves, lobby_pb2.SeatRequest(table_id=table_id, seat=seat), auth
        )
        moves = moves_out(legal)["moves"]
        for m in moves:
            m["action_json"] = json.dumps(m["action"], separators=(",", ":"), sort_keys=True)
    context["moves"] = moves
    context["board"] = boards.render(table["title"], view["view"], context["names"])
    context["log"] = list(reversed(await log_task))
    if view["finished"]:
        with contextlib.suppress(ApiError):  # the lobby may not have recorded it yet
            result = await rpc(
                api.lobby.GetTableResult(
                    lobby_pb2.GetTableRequest(table_id=table_id), timeout=CALL_TIMEOUT_S
                )
            )
            context["standings"] = standings_out(result)["standings"]
    return context


async def _table_page(request: Request, table_id: str, fragment: bool = False, **extra: Any):
    api, auth = _api(request), session_auth(request)
    try:
        context = await table_context(api, auth, table_id)
    except ApiError as err:
        return await error_page(request, err)
    name = "table_live.html" if fragment else "table.html"
    return await _page(request, name, **context, **extra)


@router.get("/tables/{table_id}", response_class=HTMLResponse)
async def table_page(request: Request, table_id: str):
    return await _table_page(request, table_id)


@router.get("/tables/{table_id}/live", response_class=HTMLResponse)
async def table_live(request: Request, table_id: str):
    """The live part of the table page (htmx swaps it in after each move)."""
    return await _table_page(request, table_id, fragment=True)


@router.post("/tables/{table_id}/move", response_class=HTMLResponse)
async def move(request: Request, table_id: str):
    """One of the listed moves: ``action`` (its JSON as listed), ``expected_version``, and
    for a ranged move ``field`` and ``value``. Answers the refreshed live part; a refusal
    shows the server's reason (nothing changed); a stale page just refreshes."""
    form = await _write_form(request)
    api, auth = _api(request), session_auth(request)
    notice = error = None
    try:
        try:
            action = json.loads(form.get("action", ""))
        except json.JSONDecodeError:
            raise ApiError(
                grpc.StatusCode.INVALID_ARGUMENT, "bad_json", "action: not JSON"
            ) from None
        if not isinstance(action, dict):
            raise ApiError(grpc.StatusCode.INVALID_ARGUMENT, "bad_json", "action: an object")
        field = form.get("field", "")
        if field:
            action[field] = _int(form, "value")
        seat = await api.my_seat(table_id, auth)
        await call(
            api.lobby.SubmitMove,
            lobby_pb2.SubmitMoveRequest(
                table_id=table_id,
                seat=seat,
                action_json=json.dumps(action, separators=(",", ":")),
                expected_version=_int(form, "expected_version"),
                idempotency_key=form.get("key", "")[:64],
            ),
            auth,
        )
    except ApiError as err:
        if err.code == "stale_version":
            notice = "Someone moved first: the table is shown as it is now."
        else:
            error = _refusal(err)
    return await _table_page(request, table_id, fragment=True, notice=notice, error=error)


async def _sse(api: Backends, table_id: str, after: int):
    """``text/event-stream`` of a table: ``event: move`` with ``{"version", "seat",
    "label", "finished"}`` per move after ``after``; a comment every
    :data:`SSE_KEEPALIVE_S` idle seconds; ``event: end`` after the last move."""
    yield b"retry: 2000\n\n"
    async for m in _feed(api, table_id).updates(after, SSE_KEEPALIVE_S):
        if m is None:
            yield b": keep-alive\n\n"
            continue
        item = {k: m[k] for k in ("version", "seat", "label", "finished")}
        yield f"event: move\ndata: {json.dumps(item)}\n\n".encode()
    yield b"event: end\ndata: {}\n\n"


@router.get("/tables/{table_id}/events")
async def table_events(
    request: Request,
    table_id: str,
    after: Annotated[int, Query(ge=INT32_MIN, le=INT32_MAX)] = 0,
):
    """Live updates of a table page (Server-Sent Events; see :func:`_sse`)."""
    api = _api(request)
    await api.table(table_id)  # 404 before the stream starts
    return StreamingResponse(
        _sse(api, table_id, max(0, after)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


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
        feed = _feed(api, table_id)
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


@router.get("/tables/{table_id}/replay", response_class=HTMLResponse)
async def replay_page(request: Request, table_id: str, at: int = -1):
    """A finished game move by move: a slider over the versions; ``?at=N`` (htmx) answers the
    board after move N."""
    api = _api(request)
    try:
        result, moves = await _replay_data(api, table_id)
    except ApiError as err:
        return await error_page(request, err)
    upto = len(moves) if at < 0 or at > len(moves) else at
    view = await asyncio.to_thread(_replayed_view, result, moves, upto)
    names = _names(result["table"])
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
        return await _page(request, "replay_board.html", **context)
    return await _page(request, "replay.html", **context)


# ---------------------------------------------------------------- tournaments and ratings


@router.get("/tournaments", response_class=HTMLResponse)
async def tournaments_page(request: Request):
    return await _tournaments(request)


async def _tournaments(request: Request, **context: Any) -> Response:
    api, auth = _api(request), session_auth(request)
    listed = await tournaments_api.list_tournaments(api, auth, "", 50)
    return await _page(
        request,
        "tournaments.html",
        tournaments=listed.get("tournaments", []),
        **context,
    )


@router.post("/tournaments")
async def create_tournament(request: Request):
    form = await _write_form(request)
    api, auth = _api(request), session_auth(request)
    try:
        body = tournaments_api.NewTournament(
            name=form.get("name", ""),
            title=form.get("title", ""),
            table_size=_int(form, "table_size", 4),
            rounds=_int(form, "rounds", 3),
            format=form.get("format", "swiss"),
        )
        made = await tournaments_api.create_tournament(body, api, auth)
    except ApiError as err:
        return await _tournaments(request, error=_refusal(err))
    return _see(f"/tournaments/{quote(made['tournament_id'])}")


async def _tournament_context(api: Backends, auth: str, tournament_id: str) -> dict[str, Any]:
    t = await tournaments_api.get_tournament(tournament_id, api, auth)
    return {"t": t, "tid": tournament_id}


@router.get("/tournaments/{tournament_id}", response_class=HTMLResponse)
async def tournament_page(request: Request, tournament_id: str):
    return await _tournament(request, tournament_id)


async def _tournament(request: Request, tournament_id: str, **extra: Any) -> Response:
    api, auth = _api(request), session_auth(request)
    try:
        context = await _tournament_context(api, auth, tournament_id)
    except ApiError as err:
        return await error_page(request, err)
    return await _page(request, "tournament.html", **context, **extra)


@router.get("/tournaments/{tournament_id}/live", response_class=HTMLResponse)
async def tournament_live(request: Request, tournament_id: str):
    """The rounds and standings part (htmx polls it while the tournament runs)."""
    api, auth = _api(request), session_auth(request)
    context = await _tournament_context(api, auth, tournament_id)
    return await _page(request, "tournament_live.html", **context)


@router.post("/tournaments/{tournament_id}/{what}")
async def tournament_action(request: Request, tournament_id: str, what: str):
    """``register`` (the caller, or ``account``: the organiser's bot), ``withdraw``,
    ``start`` (the organiser)."""
    form = await _write_form(request)
    api, auth = _api(request), session_auth(request)
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
        return await _tournament(request, tournament_id, error=_refusal(err))
    return _see(f"/tournaments/{quote(tournament_id)}")


@router.get("/ratings/{title}", response_class=HTMLResponse)
async def ratings_page(request: Request, title: str):
    api, auth = _api(request), session_auth(request)
    try:
        board = await tournaments_api.leaderboard(title, api, auth, False, False, 100)
    except ApiError as err:
        return await error_page(request, err)
    return await _page(request, "ratings.html", title=title, rows=board.get("rows", []))


def new_key() -> str:
    """An idempotency key for one rendered move form (a double click applies it once)."""
    return uuid.uuid4().hex


_env.globals["new_key"] = new_key
