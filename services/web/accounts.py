"""Accounts and tokens: ``/api/accounts``, ``/api/tokens``, ``/api/account``,
``/api/bots`` (``roundhouse.v1.Accounts``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from roundhouse.v1 import accounts_pb2
from services.web.backend import call, client_metadata
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES
from services.web.models import (
    AccountOut,
    Me,
    NewAccount,
    NewBot,
    NewBotToken,
    NewToken,
    TokenInfo,
    TokenOut,
    TokensOut,
    account_out,
    token_info,
    token_out,
)
from services.web.oauth_models import end_grant_of_access_token

router = APIRouter(prefix="/api", tags=["accounts"], responses=ERROR_RESPONSES)


@router.post("/accounts", response_model=AccountOut, status_code=201)
async def create_account(body: NewAccount, api: Api, auth: Auth):
    """Sign up (anonymous)."""
    account = await call(
        api.accounts.CreateAccount,
        accounts_pb2.CreateAccountRequest(username=body.username, password=body.password),
        auth,
    )
    return account_out(account)


@router.post("/tokens", response_model=TokenOut, status_code=201)
async def create_token(body: NewToken, request: Request, api: Api, auth: Auth):
    """Sign in: a new API token with ``scopes`` (shown once). Failed sign-ins are limited per
    (username, client address) and per client address (429 ``too_many_failures``)."""
    answer = await call(
        api.accounts.CreateToken,
        accounts_pb2.CreateTokenRequest(
            username=body.username,
            password=body.password,
            scopes=body.scopes,
            expires_in_seconds=body.expires_in_seconds,
            label=body.label,
        ),
        auth,
        client_metadata(request),
    )
    return token_out(answer)


@router.get("/tokens", response_model=TokensOut)
async def list_tokens(
    api: Api,
    auth: Auth,
    username: Annotated[
        str, Query(description="\"\" = the caller's; else one of the caller's bot accounts")
    ] = "",
):
    """The caller's tokens (or a bot's of theirs), revoked and expired ones too; never the
    secrets (403 ``not_owner``)."""
    answer = await call(
        api.accounts.ListTokens, accounts_pb2.ListTokensRequest(username=username), auth
    )
    return {"tokens": [token_info(t) for t in answer.tokens]}


@router.delete("/tokens/{token_id}", response_model=TokenInfo)
async def revoke_token(token_id: str, request: Request, api: Api, auth: Auth):
    """Revoke a token of the caller's (or of a bot of theirs): it stops working at once, on
    every server (400 ``bad_token_id``, 404 ``unknown_token``, 403 ``not_owner``). Revoking
    the token used signs out (its id: ``GET /api/account``)."""
    token = await call(
        api.accounts.RevokeToken, accounts_pb2.RevokeTokenRequest(token_id=token_id), auth
    )
    await end_grant_of_access_token(request.app.state, token_id)  # an app's: no refresh
    return token_info(token)


@router.get("/account", response_model=Me)
async def who_am_i(api: Api, auth: Auth):
    """The caller's account, the scopes of the token used and its id."""
    me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
    return {**account_out(me.account), "scopes": list(me.scopes), "token_id": me.token.token_id}


@router.post("/bots", response_model=AccountOut, status_code=201)
async def create_bot(body: NewBot, api: Api, auth: Auth):
    """A bot account of the caller's (scope ``bots:write``)."""
    account = await call(
        api.accounts.CreateBotAccount,
        accounts_pb2.CreateBotAccountRequest(
            username=body.username, password=body.password, hosted_policy=body.hosted_policy
        ),
        auth,
    )
    return account_out(account)


@router.post("/bots/{username}/tokens", response_model=TokenOut, status_code=201)
async def create_bot_token(username: str, body: NewBotToken, api: Api, auth: Auth):
    """A token for one of the caller's bot accounts (scope ``bots:write``)."""
    answer = await call(
        api.accounts.CreateBotToken,
        accounts_pb2.CreateBotTokenRequest(
            username=username,
            scopes=body.scopes,
            expires_in_seconds=body.expires_in_seconds,
            label=body.label,
        ),
        auth,
    )
    return token_out(answer)
