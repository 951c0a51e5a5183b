"""The API's operations as data: method, path, body and how to read the answer, shared by the
sync and the async client (each only sends them)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .models import Account, MoveResult, Moves, Table, Token


def _identity(body: Any) -> Any:
    return body


@dataclass(frozen=True)
class Op:
    """One HTTP call of the API and the parser of its JSON answer."""

    method: str
    path: str
    json: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    parse: Callable[[Any], Any] = _identity

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.json is not None:
            kwargs["json"] = self.json
        if self.params:
            kwargs["params"] = self.params
        return kwargs


def _tables(body: Any) -> list[Table]:
    rows = body.get("tables", []) if isinstance(body, dict) else body
    return [Table.model_validate(row) for row in rows]


def create_account(username: str, password: str) -> Op:
    body = {"username": username, "password": password}
    return Op("POST", "/api/accounts", body, parse=Account.model_validate)


def create_token(username: str, password: str, scopes: list[str]) -> Op:
    body = {"username": username, "password": password, "scopes": list(scopes)}
    return Op("POST", "/api/tokens", body, parse=Token.model_validate)


def account() -> Op:
    return Op("GET", "/api/account")


def create_bot(username: str, password: str = "", hosted_policy: str = "") -> Op:
    body = {"username": username, "password": password, "hosted_policy": hosted_policy}
    return Op("POST", "/api/bots", body, parse=Account.model_validate)


def create_bot_token(username: str, scopes: list[str] | None = None) -> Op:
    body = {"scopes": list(scopes or ["bot:play"])}
    return Op("POST", f"/api/bots/{username}/tokens", body, parse=Token.model_validate)


def list_tables(status: str | None, title: str | None, open: bool | None) -> Op:
    params = {"status": status, "title": title, "open": open}
    params = {k: v for k, v in params.items() if v is not None}
    return Op("GET", "/api/tables", params=params, parse=_tables)


def create_table(title: str, num_players: int, options: dict | None, extra: dict) -> Op:
    body = {"title": title, "num_players": num_players, "options": options or {}, **extra}
    return Op("POST", "/api/tables", body, parse=Table.model_validate)


def get_table(table_id: str) -> Op:
    return Op("GET", f"/api/tables/{table_id}", parse=Table.model_validate)


def join(table_id: str, seat: int) -> Op:
    return Op("POST", f"/api/tables/{table_id}/seats/{seat}/join", parse=Table.model_validate)


def add_bot(table_id: str, seat: int, policy: str | None, account: str | None) -> Op:
    if (policy is None) == (account is None):
        raise ValueError("give exactly one of policy= (a hosted tier) or account= (a bot account)")
    body = {"policy": policy} if policy is not None else {"account": account}
    path = f"/api/tables/{table_id}/seats/{seat}/bot"
    return Op("POST", path, body, parse=Table.model_validate)


def start(table_id: str) -> Op:
    return Op("POST", f"/api/tables/{table_id}/start", parse=Table.model_validate)


def view(table_id: str) -> Op:
    return Op("GET", f"/api/tables/{table_id}/view")


def moves(table_id: str) -> Op:
    return Op("GET", f"/api/tables/{table_id}/moves", parse=Moves.model_validate)


def move(
    table_id: str,
    action: dict[str, Any] | BaseModel,
    expected_version: int,
    idempotency_key: str | None,
) -> Op:
    """``action``: its canonical JSON, or a typed action of :mod:`roundhouse_client.actions`."""
    body = {
        "action": action.model_dump() if isinstance(action, BaseModel) else action,
        "expected_version": expected_version,
        "idempotency_key": idempotency_key or uuid.uuid4().hex,
    }
    return Op("POST", f"/api/tables/{table_id}/moves", body, parse=MoveResult.model_validate)


def resign(table_id: str) -> Op:
    return Op("POST", f"/api/tables/{table_id}/resign", parse=Table.model_validate)


def result(table_id: str) -> Op:
    return Op("GET", f"/api/tables/{table_id}/result")


def request_review(table_id: str) -> Op:
    return Op("POST", f"/api/tables/{table_id}/review")


def review(table_id: str) -> Op:
    return Op("GET", f"/api/tables/{table_id}/review")


def import_e1894(game: dict[str, Any]) -> Op:
    return Op("POST", "/api/e1894/imports", json={"game": game})


def export(table_id: str) -> Op:
    return Op("GET", f"/api/tables/{table_id}/export")
