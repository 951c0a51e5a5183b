"""What accounts and tokens may look like: usernames, passwords, scopes,
labels and expiry. Each check returns nothing or raises :class:`Refusal`
(an INVALID_ARGUMENT or PERMISSION_DENIED with a reason), never echoing a
huge or hostile value back.

Limits (docs/api.md, "Accounts"):

* usernames: 2-30 characters of ``[A-Za-z0-9_-]``, unique regardless of case;
* passwords: 8-128 characters (any Unicode; argon2 hashes them);
* token labels: up to 64 printable characters;
* token lifetime: 0 (never expires) or 1 s to 10 years.
"""

from __future__ import annotations

import re

import grpc

from services.accounts.models import BOT, HUMAN
from services.platform.grpc_errors import ServiceError

USERNAME_RE = re.compile(r"[A-Za-z0-9_-]{2,30}")
USERNAME_RULE = "usernames are 2-30 characters of A-Z a-z 0-9 _ -"
PASSWORD_MIN, PASSWORD_MAX = 8, 128
LABEL_MAX = 64
MAX_TOKEN_LIFETIME_S = 10 * 365 * 24 * 3600

PLAY, BOT_PLAY, TABLES_WRITE, TOURNAMENT_WRITE, BOTS_WRITE, ADMIN = (
    "play",
    "bot:play",
    "tables:write",
    "tournament:write",
    "bots:write",
    "admin",
)
SCOPES = (PLAY, BOT_PLAY, TABLES_WRITE, TOURNAMENT_WRITE, BOTS_WRITE, ADMIN)
"""Every scope a token may carry (meanings in proto/roundhouse/v1/accounts.proto)."""

ALLOWED_SCOPES = {
    HUMAN: frozenset({PLAY, TABLES_WRITE, TOURNAMENT_WRITE, BOTS_WRITE, ADMIN}),
    BOT: frozenset({BOT_PLAY, TABLES_WRITE}),
}
"""Scopes each account kind may hold (``admin`` also needs an admin account;
system accounts get no tokens: the platform plays them)."""


Refusal = ServiceError
"""A refused request (code, reason, message, ErrorInfo metadata)."""


def invalid(reason: str, message: str, **metadata: str) -> Refusal:
    return Refusal(grpc.StatusCode.INVALID_ARGUMENT, reason, message, **metadata)


def check_username(username: str) -> str:
    """``username`` if it follows :data:`USERNAME_RULE`.

    Raises:
        Refusal: INVALID_ARGUMENT ``bad_username`` (the name is not echoed).
    """
    if not USERNAME_RE.fullmatch(username or ""):
        raise invalid("bad_username", f"{USERNAME_RULE} (got {len(username or '')} characters)")
    return username


def check_password(password: str) -> str:
    """``password`` if it is 8-128 characters long.

    Raises:
        Refusal: INVALID_ARGUMENT ``bad_password`` (metadata ``min``, ``max``).
    """
    if not PASSWORD_MIN <= len(password or "") <= PASSWORD_MAX:
        raise invalid(
            "bad_password",
            f"passwords are {PASSWORD_MIN}-{PASSWORD_MAX} characters",
            min=str(PASSWORD_MIN),
            max=str(PASSWORD_MAX),
        )
    return password


def check_scopes(scopes: list[str], kind: str, is_admin: bool) -> list[str]:
    """The requested scopes, deduplicated in :data:`SCOPES` order.

    Raises:
        Refusal: INVALID_ARGUMENT ``unknown_scope``; PERMISSION_DENIED
            ``scope_not_allowed`` (the account's kind may not hold it, or
            ``admin`` for a non-admin); both with metadata ``scope``.
    """
    wanted = set(scopes)
    for scope in sorted(wanted):
        if scope not in SCOPES:
            shown = scope[:40]
            raise invalid(
                "unknown_scope", f"unknown scope {shown!r}; known: {' '.join(SCOPES)}", scope=shown
            )
    allowed = ALLOWED_SCOPES.get(kind, frozenset())
    for scope in sorted(wanted):
        if scope not in allowed or (scope == ADMIN and not is_admin):
            why = (
                "only an admin account may hold it"
                if scope == ADMIN
                else f"a {kind} account may not hold it"
            )
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                "scope_not_allowed",
                f"scope {scope} is not allowed here ({why})",
                scope=scope,
            )
    return [s for s in SCOPES if s in wanted]


def check_label(label: str) -> str:
    """``label`` if up to 64 printable characters. Raises Refusal ``bad_label``."""
    if len(label) > LABEL_MAX or not label.isprintable():
        raise invalid("bad_label", f"token labels are up to {LABEL_MAX} printable characters")
    return label


def check_lifetime(seconds: int) -> int:
    """``seconds`` if 0 (never) or 1 s to 10 years. Raises Refusal ``bad_expiry``."""
    if not 0 <= seconds <= MAX_TOKEN_LIFETIME_S:
        raise invalid(
            "bad_expiry",
            f"expires_in_seconds is 0 (never) or 1 to {MAX_TOKEN_LIFETIME_S}",
            max=str(MAX_TOKEN_LIFETIME_S),
        )
    return seconds
