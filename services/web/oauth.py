"""OAuth 2 for third-party apps (docs/api.md, "OAuth 2 for apps"): the authorization code
grant with PKCE (RFC 6749 §4.1, RFC 7636 with ``S256`` only), public clients (no secret),
revocation (RFC 7009). Authlib does the protocol; this module gives it the gateway's storage
(:mod:`services.web.oauth_models`) and its tokens.

* ``POST /api/oauth/clients`` registers an app of the caller's (``{"name", "redirect_uris"}``;
  a person's token, any scope); ``GET /api/oauth/clients`` lists the caller's apps and
  ``DELETE /api/oauth/clients/{client_id}`` deletes one (its grants end with it). The page
  ``/account/apps`` does the same for a signed-in person.
* ``GET /oauth/authorize?response_type=code&client_id&redirect_uri&scope&state&code_challenge
  &code_challenge_method=S256``: the page where a person signs in (if not yet) and allows or
  denies the scopes asked for (:data:`SCOPES`); the answer redirects to ``redirect_uri`` with
  ``code`` and ``state`` (or ``error=access_denied``).
* ``POST /oauth/token`` (form: ``grant_type=authorization_code``, ``code``, ``redirect_uri``,
  ``client_id``, ``code_verifier``): ``{"access_token", "token_type": "Bearer", "expires_in",
  "scope", "refresh_token"}``. The access token is an ordinary API token of the account
  (``rh_...``, label ``oauth <client_id> <app name>``) holding exactly the API scopes granted,
  so every server enforces them as for any token: a ``read`` token moves nowhere (403
  ``scope_missing``). It lasts :data:`TOKEN_LIFETIME_S`.
* ``POST /oauth/token`` (form: ``grant_type=refresh_token``, ``refresh_token``, ``client_id``,
  optional narrower ``scope``): a new access token and a new refresh token; the one sent is
  used up (rotation). A used refresh token sent again ends the grant: all its refresh tokens
  and access tokens are revoked (RFC 9700 §4.14.2).
* ``POST /oauth/revoke`` (form: ``token``, ``client_id``, optional ``token_type_hint``):
  revokes a token the app was given, and with it the grant's refresh tokens (200 whatever the
  token, as RFC 7009 §2.2 says). A person revoking the app's access token on the account page
  or by ``DELETE /api/tokens/{id}`` ends the grant's refresh tokens too.

Authlib's server is synchronous: each call runs it in a worker thread, and its storage hooks
come back to the event loop for the gRPC and SQL calls (``anyio.from_thread.run``).
"""

from __future__ import annotations

import hashlib
import secrets
from collections import defaultdict
from datetime import timedelta
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode, urlsplit

import grpc
from anyio import from_thread
from authlib.oauth2 import AuthorizationServer, OAuth2Error
from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    ClientMixin,
    InvalidRequestError,
    OAuth2Payload,
    OAuth2Request,
)
from authlib.oauth2.rfc6749.errors import InvalidGrantError
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import delete, select, update
from starlette.concurrency import run_in_threadpool

from roundhouse.v1 import accounts_pb2
from services.platform.auth import internal
from services.platform.db import utcnow
from services.web.backend import CALL_TIMEOUT_S, Backends, call, client_metadata, rpc
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES, ApiError
from services.web.oauth_models import (
    CODE_LIFETIME_S,
    REFRESH_LIFETIME_S,
    OAuthClient,
    OAuthCode,
    OAuthRefreshToken,
    end_family,
    end_grant_of_access_token,
    oauth_store,
)
from services.web.session import SESSION_LIFETIME_S, SESSION_SCOPES, session_auth, set_session

SCOPES: dict[str, tuple[str, ...]] = {
    "read": (),
    "play": ("play",),
    "tables:write": ("tables:write",),
    "tournament:write": ("tournament:write",),
}
"""OAuth scope -> the API scopes (docs/api.md, "Accounts and API tokens") its token holds.
``read`` is the account, its events and its tokens' list, and everything public: no write."""
SCOPE_WORDS = {
    "read": "see your account and your game events",
    "play": "play at tables in your name (join seats, move, resign)",
    "tables:write": "create tables, add bots, start and abort your tables",
    "tournament:write": "create and run tournaments",
}
TOKEN_LIFETIME_S = 3600
"""An app's access token expires after an hour (seconds); its refresh token brings the next
(:data:`~services.web.oauth_models.REFRESH_LIFETIME_S`)."""
REFRESH_PREFIX = "rhr_"
"""Refresh tokens are ``rhr_`` + 43 URL-safe characters (256 random bits)."""
MAX_REDIRECT_URIS = 5
GATEWAY = "gateway"

router = APIRouter(include_in_schema=False)
api_router = APIRouter(prefix="/api/oauth", tags=["oauth"], responses=ERROR_RESPONSES)


# ---------------------------------------------------------------- storage


def _sessions(request: Request):
    return oauth_store(request.app.state)


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


class Client(ClientMixin):
    """A registered app, as Authlib asks about it: a public client of the code grant only."""

    def __init__(self, row: OAuthClient) -> None:
        self.row = row

    def get_client_id(self) -> str:
        return self.row.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # the authorization request must name its redirect_uri

    def get_allowed_scope(self, scope: str | None) -> str:
        return " ".join(s for s in (scope or "").split() if s in SCOPES)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.row.redirect_uri_list

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


class Code(AuthorizationCodeMixin):
    def __init__(self, row: OAuthCode) -> None:
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = row.code_challenge_method

    def get_redirect_uri(self) -> str:
        return self.row.redirect_uri

    def get_scope(self) -> str:
        return self.row.scope


class AppToken:
    """A token presented for revocation: its id and whether ``client`` was given it."""

    def __init__(self, token_id: str, label: str, authorization: str) -> None:
        self.token_id, self.label, self.authorization = token_id, label, authorization

    def check_client(self, client: Client) -> bool:
        return self.label.split(" ")[:2] == ["oauth", client.get_client_id()]


class Refresh:
    """A refresh token as Authlib asks about it (a row of ``oauth_refresh_tokens``)."""

    def __init__(self, row: OAuthRefreshToken) -> None:
        self.row = row

    def check_client(self, client: Client) -> bool:
        return self.row.client_id == client.get_client_id()

    def get_scope(self) -> str:
        return self.row.scope

    def is_live(self) -> bool:
        return (
            self.row.used_at is None
            and self.row.revoked_at is None
            and self.row.expires_at > utcnow()
        )


# ---------------------------------------------------------------- Authlib's side


class S256Challenge(CodeChallenge):
    """PKCE with S256 only, and required on every authorization request (RFC 9700 §2.1.1)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError(
                "PKCE is required: send code_challenge with code_challenge_method=S256"
            )
        return super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        row = OAuthCode(
            code_hash=_hash(code),
            client_id=request.client.get_client_id(),
            account_id=request.user,
            redirect_uri=data.get("redirect_uri", ""),
            scope=request.scope or "",
            code_challenge=data.get("code_challenge", ""),
            code_challenge_method=data.get("code_challenge_method", "S256"),
            expires_at=utcnow() + timedelta(seconds=CODE_LIFETIME_S),
        )
        from_thread.run(self.server.bridge.save_code, row)

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        row = from_thread.run(self.server.bridge.take_code, _hash(code))
        if row is None or row.client_id != client.get_client_id() or row.expires_at < utcnow():
            return None
        return Code(row)

    def delete_authorization_code(self, authorization_code: Code) -> None:
        """Nothing left to do: :meth:`query_authorization_code` took it (used once)."""

    def authenticate_user(self, authorization_code: Code) -> str:
        return authorization_code.row.account_id


class RefreshGrant(RefreshTokenGrant):
    """The refresh token grant with rotation: the token sent is used up before the new pair
    is issued (at most once, even for two requests at a time); a used or revoked one sent
    again is refused (``invalid_grant``), and a used one also ends its grant."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Refresh | None:
        row = from_thread.run(self.server.bridge.refresh_row, _hash(refresh_token))
        if row is None or row.client_id != self.request.client.get_client_id():
            return None  # unknown, or another app's: changes nothing
        token = Refresh(row)
        if row.used_at is not None and row.revoked_at is None:
            from_thread.run(self.server.bridge.end_family, row.family_id)  # replayed
        return token if token.is_live() else None

    def validate_token_request(self) -> None:
        super().validate_token_request()  # client, token, scope: refusals change nothing
        token: Refresh = self.request.refresh_token
        if not from_thread.run(self.server.bridge.use_refresh, token.row.token_hash):
            raise InvalidGrantError("this refresh token was used already")

    def authenticate_user(self, refresh_token: Refresh) -> str:
        return refresh_token.row.account_id

    def revoke_old_credential(self, refresh_token: Refresh) -> None:
        """Nothing left to do: :meth:`validate_token_request` used it up."""


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = ["none"]

    def query_token(
        self, token_string: str, token_type_hint: str | None
    ) -> AppToken | Refresh | None:
        if token_string.startswith(REFRESH_PREFIX):
            row = from_thread.run(self.server.bridge.refresh_row, _hash(token_string))
            return Refresh(row) if row is not None else None
        return from_thread.run(self.server.bridge.token_info, token_string)

    def revoke_token(self, token: AppToken | Refresh, request: OAuth2Request) -> None:
        if isinstance(token, Refresh):
            from_thread.run(self.server.bridge.end_family, token.row.family_id)
        else:
            from_thread.run(self.server.bridge.revoke, token)


class Payload(OAuth2Payload):
    def __init__(self, values: dict[str, list[str]]) -> None:
        self._datalist = defaultdict(list, values)
        self._data = {k: v[-1] for k, v in values.items() if v}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self):
        return self._datalist


class FormRequest(OAuth2Request):
    """An HTTP request as Authlib reads it: method, URI, headers, query and form."""

    def __init__(self, method: str, uri: str, headers, query: str, body: str) -> None:
        super().__init__(method, uri, headers=dict(headers))
        self._args = {k: v[-1] for k, v in parse_qs(query).items()}
        self._form = {k: v[-1] for k, v in parse_qs(body).items()}
        merged = parse_qs(query)
        for k, v in parse_qs(body).items():
            merged.setdefault(k, []).extend(v)
        self.payload = Payload(merged)

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class Bridge:
    """The async calls Authlib's hooks make (run on the event loop, from its thread)."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.api: Backends = request.app.state.backends

    async def client(self, client_id: str) -> Client | None:
        async with _sessions(self.request)() as db:
            row = await db.get(OAuthClient, client_id[:32])
        return Client(row) if row else None

    async def save_code(self, row: OAuthCode) -> None:
        async with _sessions(self.request)() as db, db.begin():
            db.add(row)

    async def take_code(self, code_hash: str) -> OAuthCode | None:
        async with _sessions(self.request)() as db, db.begin():
            row = await db.get(OAuthCode, code_hash)
            if row is not None:
                await db.execute(delete(OAuthCode).where(OAuthCode.code_hash == code_hash))
            return row

    async def mint(self, client: Client, account_id: str, scope: str) -> tuple[str, str]:
        scopes = sorted({s for name in scope.split() for s in SCOPES.get(name, ())})
        label = f"oauth {client.get_client_id()} {client.row.name}"[:64]
        secret = self.request.app.state.internal_secret
        answer = await rpc(
            self.api.accounts.IssueAppToken(
                accounts_pb2.IssueAppTokenRequest(
                    account_id=account_id,
                    scopes=scopes,
                    expires_in_seconds=TOKEN_LIFETIME_S,
                    label=label,
                ),
                metadata=internal(secret, GATEWAY),
                timeout=CALL_TIMEOUT_S,
            )
        )
        return answer.token, answer.info.token_id

    async def refresh_row(self, token_hash: str) -> OAuthRefreshToken | None:
        async with _sessions(self.request)() as db:
            return await db.get(OAuthRefreshToken, token_hash)

    async def use_refresh(self, token_hash: str) -> bool:
        """Marks the refresh token used if it is still live; False if another request did."""
        async with _sessions(self.request)() as db, db.begin():
            done = await db.execute(
                update(OAuthRefreshToken)
                .where(
                    OAuthRefreshToken.token_hash == token_hash,
                    OAuthRefreshToken.used_at.is_(None),
                    OAuthRefreshToken.revoked_at.is_(None),
                )
                .values(used_at=utcnow())
            )
            return done.rowcount == 1

    async def save_refresh(self, row: OAuthRefreshToken) -> None:
        async with _sessions(self.request)() as db, db.begin():
            db.add(row)

    async def end_family(self, family_id: str) -> None:
        """Ends a grant: its refresh tokens, then its access tokens at the accounts service."""
        async with _sessions(self.request)() as db, db.begin():
            token_ids = await end_family(db, family_id)
        await revoke_tokens(self.request, token_ids)

    async def token_info(self, token: str) -> AppToken | None:
        authorization = f"Bearer {token}"
        try:
            me = await call(self.api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), authorization)
        except ApiError as err:
            if err.status == 401:
                return None  # unknown, expired or revoked already: nothing to do (RFC 7009)
            raise
        return AppToken(me.token.token_id, me.token.label, authorization)

    async def revoke(self, token: AppToken) -> None:
        request = accounts_pb2.RevokeTokenRequest(token_id=token.token_id)
        await call(self.api.accounts.RevokeToken, request, token.authorization)
        await end_grant_of_access_token(self.request.app.state, token.token_id)


async def revoke_tokens(request: Request, token_ids: list[str]) -> None:
    """Revokes API tokens by id as the gateway (an internal call): an OAuth grant ending."""
    api: Backends = request.app.state.backends
    metadata = internal(request.app.state.internal_secret, GATEWAY)
    for token_id in token_ids:
        try:
            await rpc(
                api.accounts.RevokeToken(
                    accounts_pb2.RevokeTokenRequest(token_id=token_id),
                    metadata=metadata,
                    timeout=CALL_TIMEOUT_S,
                )
            )
        except ApiError as err:
            if err.status != 404:  # a token of a deleted account: gone already
                raise


class Server(AuthorizationServer):
    """Authlib's authorization server for one HTTP request (its hooks reach that request's
    gateway through :class:`Bridge`)."""

    def __init__(self, bridge: Bridge) -> None:
        super().__init__(scopes_supported=list(SCOPES))
        self.bridge = bridge
        self.register_grant(CodeGrant, [S256Challenge(required=True)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation)
        self.register_token_generator("default", self._token)

    def _token(
        self, grant_type, client, user=None, scope=None, include_refresh_token=True, **_: Any
    ) -> dict[str, Any]:
        access, token_id = from_thread.run(self.bridge.mint, client, user, scope or "")
        token = {
            "token_type": "Bearer",
            "access_token": access,
            "expires_in": TOKEN_LIFETIME_S,
            "scope": scope or "",
            "_token_id": token_id,  # for save_token, which takes it out
        }
        if include_refresh_token:
            token["refresh_token"] = REFRESH_PREFIX + secrets.token_urlsafe(32)
        return token

    def query_client(self, client_id: str) -> Client | None:
        return from_thread.run(self.bridge.client, client_id)

    def save_token(self, token: dict, request: OAuth2Request) -> None:
        """Stores the refresh token, in the family of the one it replaces (or a new one); the
        access token was stored by the accounts service when it was minted."""
        token_id = token.pop("_token_id")
        if "refresh_token" not in token:
            return
        old: Refresh | None = getattr(request, "refresh_token", None)
        now = utcnow()
        row = OAuthRefreshToken(
            token_hash=_hash(token["refresh_token"]),
            family_id=old.row.family_id if old is not None else secrets.token_hex(16),
            client_id=request.client.get_client_id(),
            account_id=request.user,
            scope=token["scope"],
            access_token_id=token_id,
            created_at=now,
            expires_at=now + timedelta(seconds=REFRESH_LIFETIME_S),
        )
        from_thread.run(self.bridge.save_refresh, row)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def create_oauth2_request(self, request: FormRequest) -> FormRequest:
        return request

    def handle_response(self, status: int, body: Any, headers) -> Response:
        headers = dict(headers)
        if status in (301, 302, 303):
            return RedirectResponse(headers.pop("Location"), status_code=303, headers=headers)
        return JSONResponse(body, status_code=status, headers=headers)


async def _oauth_request(request: Request, body: str | None = None) -> FormRequest:
    if body is None:
        body = (await request.body()).decode("utf-8", errors="replace")
    return FormRequest(request.method, str(request.url), request.headers, request.url.query, body)


# ---------------------------------------------------------------- endpoints


@router.post("/oauth/token")
async def token_endpoint(request: Request) -> Response:
    """RFC 6749 §4.1.3: an authorization code and its PKCE verifier for an access token."""
    oauth = await _oauth_request(request)
    server = Server(Bridge(request))
    return await run_in_threadpool(server.create_token_response, oauth)


@router.post("/oauth/revoke")
async def revoke_endpoint(request: Request) -> Response:
    """RFC 7009: revokes a token the app was given (200 for any token, even unknown)."""
    oauth = await _oauth_request(request)
    server = Server(Bridge(request))
    return await run_in_threadpool(server.create_endpoint_response, Revocation.ENDPOINT_NAME, oauth)


async def signed_in(request: Request) -> dict[str, str] | None:
    auth = session_auth(request)
    if not auth:
        return None
    try:
        me = await call(api_of(request).accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
    except ApiError as err:
        if err.status != 401:
            raise
        return None
    return {"username": me.account.username, "account_id": me.account.account_id}


def api_of(request: Request) -> Backends:
    return request.app.state.backends


def _consent_error(request: Request, err: OAuth2Error) -> Response:
    """An authorization request that cannot be sent back to the app (unknown app, a
    redirect_uri it did not register): shown here, never redirected (RFC 6749 §4.1.2.1)."""
    refusal = ApiError(
        grpc.StatusCode.INVALID_ARGUMENT, f"oauth_{err.error}", err.get_error_description() or ""
    )
    raise refusal


async def _validated(request: Request, oauth: FormRequest, account_id: str | None):
    server = Server(Bridge(request))
    try:
        grant = await run_in_threadpool(server.get_consent_grant, oauth, account_id)
    except OAuth2Error as err:
        if err.redirect_uri:  # known app, registered redirect: the app hears of it
            return server, None, server.handle_error_response(oauth, err)
        _consent_error(request, err)
    return server, grant, None


@router.get("/oauth/authorize", response_class=HTMLResponse)
async def authorize_page(request: Request) -> Response:
    """The consent page: who asks (the app's name and owner), for which scopes, as whom."""
    from services.web.pages.base import page  # the pages' renderer (base template, CSRF)

    oauth = await _oauth_request(request, body="")
    me = await signed_in(request)
    _, grant, answer = await _validated(request, oauth, me["account_id"] if me else None)
    if answer is not None:
        return answer
    client: Client = grant.client
    scopes = grant.request.scope.split() if grant.request.scope else []
    return await page(
        request,
        "oauth_authorize.html",
        me=me,
        app_name=client.row.name,
        redirect_host=urlsplit(grant.redirect_uri).netloc,
        scopes=[(s, SCOPE_WORDS[s]) for s in scopes],
        query=request.url.query,
    )


@router.post("/oauth/authorize")
async def authorize(request: Request) -> Response:
    """The page's answer: sign in (``decision=signin``), or allow / deny (``decision``);
    the query string is the app's request, carried by the form's action."""
    from services.web.pages.base import page, write_form

    form = await write_form(request)
    oauth = await _oauth_request(request, body="")
    here = "/oauth/authorize?" + request.url.query
    if form.get("decision") == "signin":
        try:
            answer = await rpc(
                api_of(request).accounts.CreateToken(
                    accounts_pb2.CreateTokenRequest(
                        username=form.get("username", ""),
                        password=form.get("password", ""),
                        scopes=list(SESSION_SCOPES),
                        expires_in_seconds=SESSION_LIFETIME_S,
                        label="web session",
                    ),
                    metadata=client_metadata(request),
                    timeout=CALL_TIMEOUT_S,
                )
            )
        except ApiError as err:
            error = (
                {"code": err.code, "message": err.message}
                if err.status == 429
                else {"code": "bad_credentials", "message": "wrong username or password"}
            )
            return await page(request, "error.html", status=401, error=error, me=None)
        response = RedirectResponse(here, status_code=303)
        set_session(request, response, answer.token)
        return response
    me = await signed_in(request)
    if me is None:
        return RedirectResponse(here, status_code=303)
    server, grant, answer = await _validated(request, oauth, me["account_id"])
    if answer is not None:
        return answer
    user = me["account_id"] if form.get("decision") == "allow" else None
    return await run_in_threadpool(server.create_authorization_response, oauth, user, grant)


# ---------------------------------------------------------------- app registration


class NewClient(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=64, description="shown on the consent page")
    redirect_uris: list[Annotated[str, Field(max_length=400)]] = Field(
        min_length=1,
        max_length=MAX_REDIRECT_URIS,
        description="exact URIs the codes may go to: https, or http on a loopback address "
        "(RFC 8252 §7.3)",
    )


class ClientOut(BaseModel):
    client_id: str
    name: str
    redirect_uris: list[str]
    created_at: str


class ClientsOut(BaseModel):
    clients: list[ClientOut]


def _client_out(row: OAuthClient) -> dict[str, Any]:
    return {
        "client_id": row.client_id,
        "name": row.name,
        "redirect_uris": row.redirect_uri_list,
        "created_at": row.created_at.isoformat(),
    }


def _check_redirect(uri: str) -> str:
    parts = urlsplit(uri)
    loopback = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not (parts.scheme == "https" or loopback) or not parts.hostname or parts.fragment:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_redirect_uri",
            "redirect URIs are https (or http on a loopback address), without a fragment",
            field="redirect_uris",
        )
    if not uri.isprintable() or " " in uri:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_redirect_uri",
            "redirect URIs hold no spaces or control characters",
            field="redirect_uris",
        )
    return uri


async def _person(api: Backends, auth: str) -> accounts_pb2.Account:
    me = await call(api.accounts.WhoAmI, accounts_pb2.WhoAmIRequest(), auth)
    if me.account.kind != accounts_pb2.ACCOUNT_KIND_HUMAN:
        raise ApiError(
            grpc.StatusCode.PERMISSION_DENIED, "humans_only", "only people register apps"
        )
    return me.account


@api_router.post("/clients", response_model=ClientOut, status_code=201)
async def register_client(body: NewClient, request: Request, api: Api, auth: Auth):
    """Registers an app of the caller's (a person's token): a public client of the
    authorization code grant with PKCE (400 ``bad_redirect_uri``, 403 ``humans_only``)."""
    for uri in body.redirect_uris:
        _check_redirect(uri)
    account = await _person(api, auth)
    row = await _new_app(account.account_id, body.name, body.redirect_uris)
    async with _sessions(request)() as db, db.begin():
        db.add(row)
    return _client_out(row)


@api_router.get("/clients", response_model=ClientsOut)
async def list_clients(request: Request, api: Api, auth: Auth):
    """The caller's registered apps, oldest first."""
    account = await _person(api, auth)
    async with _sessions(request)() as db:
        rows = (
            await db.scalars(
                select(OAuthClient)
                .where(OAuthClient.owner_id == account.account_id)
                .order_by(OAuthClient.created_at)
            )
        ).all()
    return {"clients": [_client_out(r) for r in rows]}


async def _own_client(request: Request, account_id: str, client_id: str) -> OAuthClient:
    async with _sessions(request)() as db:
        row = await db.get(OAuthClient, client_id[:32])
    if row is None or row.owner_id != account_id:
        raise ApiError(grpc.StatusCode.NOT_FOUND, "unknown_client", "you have no such app")
    return row


async def delete_app(request: Request, row: OAuthClient) -> None:
    """Deletes an app: its codes, its grants (their access tokens revoked) and the app."""
    async with _sessions(request)() as db, db.begin():
        families = set(
            await db.scalars(
                select(OAuthRefreshToken.family_id).where(
                    OAuthRefreshToken.client_id == row.client_id
                )
            )
        )
        token_ids = sorted({t for f in families for t in await end_family(db, f)})
    await revoke_tokens(request, token_ids)
    async with _sessions(request)() as db, db.begin():
        await db.execute(
            delete(OAuthRefreshToken).where(OAuthRefreshToken.client_id == row.client_id)
        )
        await db.execute(delete(OAuthCode).where(OAuthCode.client_id == row.client_id))
        await db.execute(delete(OAuthClient).where(OAuthClient.client_id == row.client_id))


@api_router.delete("/clients/{client_id}", status_code=204)
async def delete_client(client_id: str, request: Request, api: Api, auth: Auth) -> Response:
    """Deletes an app of the caller's: its codes stop working and every token it was given
    is revoked (404 ``unknown_client``: no such app of the caller's)."""
    account = await _person(api, auth)
    row = await _own_client(request, account.account_id, client_id)
    await delete_app(request, row)
    return Response(status_code=204)


async def _new_app(account_id: str, name: str, uris: list[str]) -> OAuthClient:
    return OAuthClient(
        client_id=secrets.token_hex(12),
        owner_id=account_id,
        name=name,
        redirect_uris=" ".join(_check_redirect(u) for u in uris),
        created_at=utcnow(),
    )


# ---------------------------------------------------------------- the apps page


async def _apps_page(request: Request, me: dict[str, Any], **context: Any) -> Response:
    from services.web.pages.base import page

    async with _sessions(request)() as db:
        rows = (
            await db.scalars(
                select(OAuthClient)
                .where(OAuthClient.owner_id == me["account_id"])
                .order_by(OAuthClient.created_at)
            )
        ).all()
    return await page(request, "apps.html", apps=[_client_out(r) for r in rows], **context)


@router.get("/account/apps", response_class=HTMLResponse)
async def apps_page(request: Request) -> Response:
    """The signed-in person's registered apps: their client ids, a form for a new one."""
    from services.web.pages.base import see_other, signed_in

    me = await signed_in(request)
    if me is None:
        return see_other("/signin")
    return await _apps_page(request, me)


@router.post("/account/apps")
async def new_app(request: Request) -> Response:
    """Registers an app (form: ``name``, ``redirect_uris`` one a line), as the API does."""
    from services.web.pages.base import refusal, see_other, signed_in, write_form

    form = await write_form(request)
    me = await signed_in(request)
    if me is None:
        return see_other("/signin")
    try:
        body = NewClient(
            name=form.get("name", "").strip(),
            redirect_uris=form.get("redirect_uris", "").split(),
        )
        row = await _new_app(me["account_id"], body.name, body.redirect_uris)
    except ApiError as err:
        return await _apps_page(request, me, error=refusal(err))
    except ValueError:
        err = ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_app",
            f"a name of 1 to 64 characters and 1 to {MAX_REDIRECT_URIS} redirect URIs",
        )
        return await _apps_page(request, me, error=refusal(err))
    async with _sessions(request)() as db, db.begin():
        db.add(row)
    return await _apps_page(request, me, new_client_id=row.client_id)


@router.post("/account/apps/{client_id}/delete")
async def delete_app_page(request: Request, client_id: str) -> Response:
    """Deletes one of the person's apps (and every token it was given)."""
    from services.web.pages.base import refusal, see_other, signed_in, write_form

    await write_form(request)
    me = await signed_in(request)
    if me is None:
        return see_other("/signin")
    try:
        row = await _own_client(request, me["account_id"], client_id)
    except ApiError as err:
        return await _apps_page(request, me, error=refusal(err))
    await delete_app(request, row)
    return see_other("/account/apps")


def authorize_url(base: str, **params: str) -> str:
    """``base``'s authorization URL with ``params`` (a helper for docs and tests)."""
    return f"{base}/oauth/authorize?{urlencode(params)}"
