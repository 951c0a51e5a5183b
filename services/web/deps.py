"""FastAPI dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.web.backend import Backends

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="an API token from POST /api/tokens (the same tokens as for gRPC)",
)


async def backends(request: Request) -> Backends:
    """The app's gRPC stubs (async: FastAPI runs a plain ``def`` dependency in a
    thread pool, a thread hop per request)."""
    return request.app.state.backends


async def authorization(
    request: Request,
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)] = None,
) -> str:
    """The ``Authorization`` header as sent ("" = none); the lobby and the
    accounts service judge it (a malformed one: 401 ``bad_authorization``)."""
    return request.headers.get("authorization", "")


Api = Annotated[Backends, Depends(backends)]
Auth = Annotated[str, Depends(authorization)]
