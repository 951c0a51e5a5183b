"""What every web page shares: the templates (``services/web/templates``, autoescaped),
the page frame (:func:`page`: the signed-in account, the double-submit value, the titles),
the form readers (:func:`write_form` checks the double-submit value first, :func:`form_int`),
the redirect after a write (:func:`see_other`) and the error page (:func:`error_page`)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import grpc
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

from roundhouse.v1 import accounts_pb2
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.transsib.engine.provenance import provisional_sentence as transsib_provisional
from services.web.backend import (
    Backends,
    call,
)
from services.web.errors import ApiError
from services.web.session import (
    CSRF_FIELD,
    check_csrf,
    csrf_token,
    session_auth,
    set_csrf_cookie,
)

HERE = Path(__file__).parent.parent
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

_env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
_env.filters["tojson_attr"] = lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True)
templates = Jinja2Templates(env=_env)


def api_of(request: Request) -> Backends:
    return request.app.state.backends


async def _form(request: Request) -> dict[str, str]:
    """The urlencoded form of a page write (the last value of each field)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}


async def write_form(request: Request) -> dict[str, str]:
    form = await _form(request)
    check_csrf(request, form)
    return form


async def signed_in(request: Request) -> dict[str, Any] | None:
    """The signed-in account (username, account_id, kind) or None (signed out, or the
    session's token no longer valid)."""
    auth = session_auth(request)
    if not auth:
        return None
    if "me" in request.state.__dict__:
        return request.state.me
    api = api_of(request)
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


async def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("me", await signed_in(request))
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


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def refusal(err: ApiError) -> dict[str, str]:
    return {"code": err.code, "message": err.message}


async def error_page(request: Request, err: ApiError) -> Response:
    """An :class:`ApiError` on a page: the error page with its reason code and message."""
    return await page(request, "error.html", status=err.status, error=refusal(err))


def form_int(form: dict[str, str], name: str, default: int = 0) -> int:
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


def new_key() -> str:
    """An idempotency key for one rendered move form (a double click applies it once)."""
    return uuid.uuid4().hex


_env.globals["new_key"] = new_key
