"""The account pages: sign up, sign in and out (the session is a scoped token of the
Accounts service, :mod:`services.web.session`), the account's tokens and its bot accounts."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from roundhouse.v1 import accounts_pb2
from services.web.backend import (
    CALL_TIMEOUT_S,
    call,
    client_metadata,
    metadata_of,
    rpc,
)
from services.web.errors import ApiError
from services.web.oauth_models import end_grant_of_access_token
from services.web.pages.base import (
    BOT_POLICIES,
    api_of,
    page,
    refusal,
    see_other,
    signed_in,
    write_form,
)
from services.web.session import (
    SESSION_LIFETIME_S,
    SESSION_SCOPES,
    clear_session,
    session_auth,
    set_session,
)

router = APIRouter(include_in_schema=False)


@router.get("/signup", response_class=HTMLResponse)
async def signup_page(request: Request):
    return await page(request, "signup.html")


@router.post("/signup")
async def signup(request: Request):
    form = await write_form(request)
    api = api_of(request)
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
        return await page(
            request, "signup.html", status=err.status, error=refusal(err), username=username
        )


async def _sign_in(request: Request, username: str, password: str) -> Response:
    answer = await rpc(
        api_of(request).accounts.CreateToken(
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
    response = see_other("/")
    set_session(request, response, answer.token)
    return response


@router.get("/signin", response_class=HTMLResponse)
async def signin_page(request: Request):
    return await page(request, "signin.html")


@router.post("/signin")
async def signin(request: Request):
    form = await write_form(request)
    username = form.get("username", "")
    try:
        return await _sign_in(request, username, form.get("password", ""))
    except ApiError as err:
        # one answer whether or not the account exists (and whatever its kind)
        error = (
            refusal(err)
            if err.code == "too_many_attempts" or err.status == 429
            else {"code": "bad_credentials", "message": "wrong username or password"}
        )
        return await page(
            request, "signin.html", status=401, error=error, username=username, me=None
        )


@router.post("/signout")
async def signout(request: Request):
    """Revokes the session's token (it no longer works anywhere) and forgets the cookie."""
    await write_form(request)
    auth = session_auth(request)
    if auth:
        api = api_of(request)
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
    response = see_other("/")
    clear_session(request, response)
    return response


@router.get("/account", response_class=HTMLResponse)
async def account_page(request: Request):
    return await _account(request)


async def _account(request: Request, **context: Any) -> Response:
    me = await signed_in(request)
    if me is None:
        return see_other("/signin")
    api, auth = api_of(request), session_auth(request)
    md = metadata_of(auth)
    tokens = await rpc(
        api.accounts.ListTokens(accounts_pb2.ListTokensRequest(), metadata=md, timeout=30)
    )
    current = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
    bots = await rpc(api.accounts.ListBots(accounts_pb2.ListBotsRequest(), metadata=md, timeout=30))
    return await page(
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
    form = await write_form(request)
    auth = session_auth(request)
    api = api_of(request)
    scopes = [s for s in ("play", "tables:write", "bots:write", "tournament:write") if form.get(s)]
    try:
        me = await signed_in(request)
        if me is None:
            return see_other("/signin")
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
        return await _account(request, error=refusal(err))
    return await _account(request, new_token=answer.token)


@router.post("/account/tokens/{token_id}/revoke")
async def revoke_token(request: Request, token_id: str):
    """Revokes one of the account's tokens; the session's own signs the browser out."""
    await write_form(request)
    if await signed_in(request) is None:
        return see_other("/signin")
    api, auth = api_of(request), session_auth(request)
    try:
        me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
        await call(
            api.accounts.RevokeToken, accounts_pb2.RevokeTokenRequest(token_id=token_id), auth
        )
    except ApiError as err:
        return await _account(request, error=refusal(err))
    await end_grant_of_access_token(request.app.state, token_id)  # an app's: no refresh
    if token_id == me.token.token_id:
        response = see_other("/signin")
        clear_session(request, response)
        return response
    return see_other("/account")


@router.post("/account/bots")
async def new_bot(request: Request):
    form = await write_form(request)
    api, auth = api_of(request), session_auth(request)
    try:
        await call(
            api.accounts.CreateBotAccount,
            accounts_pb2.CreateBotAccountRequest(
                username=form.get("username", ""), hosted_policy=form.get("policy", "")
            ),
            auth,
        )
    except ApiError as err:
        return await _account(request, error=refusal(err))
    return see_other("/account")
