"""Accounts and tokens: ``/api/accounts``, ``/api/tokens``, ``/api/account``,
``/api/bots`` (``roundhouse.v1.Accounts``)."""

from __future__ import annotations

from fastapi import APIRouter, Request

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
    TokenOut,
    account_out,
    token_out,
)

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


@router.get("/account", response_model=Me)
async def who_am_i(api: Api, auth: Auth):
    """The caller's account and the scopes of the token used."""
    me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
    return {**account_out(me.account), "scopes": list(me.scopes)}


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
