"""Passwords (argon2id, argon2-cffi) and API token secrets (SHA-256).

Passwords are slow to hash on purpose; hashing runs in a worker thread so the
event loop keeps serving. Tokens are 256 random bits, so a fast hash is the
right one for them: only ``token_hash(token)`` is stored and looked up.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

TOKEN_PREFIX = "rh_"
"""Every API token starts with this, so leaked tokens are easy to recognise."""

_hasher = PasswordHasher()  # RFC 9106 low-memory profile (argon2id, t=3, m=64 MiB, p=4)
_DUMMY_HASH = _hasher.hash("an account that does not exist")


def new_token() -> str:
    """A new API token: ``rh_`` + 43 URL-safe characters (256 bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """SHA-256 of ``token``, 64 hex digits (what the database stores)."""
    return hashlib.sha256(token.encode()).hexdigest()


def looks_like_token(token: str) -> bool:
    """Whether ``token`` has the shape of one of ours (checked before any lookup)."""
    return token.startswith(TOKEN_PREFIX) and 20 <= len(token) <= 100 and token.isascii()


async def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (computed off the event loop)."""
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(stored: str | None, password: str) -> tuple[bool, str | None]:
    """``(ok, new_hash)``: whether ``password`` matches ``stored`` (``None``:
    no password; a dummy hash is still verified so timing does not tell), and
    a fresh hash when the stored one uses outdated parameters."""

    def check() -> tuple[bool, str | None]:
        try:
            _hasher.verify(stored or _DUMMY_HASH, password)
        except (VerificationError, InvalidHashError):
            return False, None
        if stored is None:
            return False, None
        return True, _hasher.hash(password) if _hasher.check_needs_rehash(stored) else None

    return await asyncio.to_thread(check)
