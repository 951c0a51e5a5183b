"""Where the terminal client keeps its sign-in: one JSON file, readable by its owner only.

``roundhouse login`` writes it; ``tables``, ``new``, ``join`` and ``play`` read it. The file
is ``config.json`` in the user's config directory (``platformdirs``: ``~/.config/roundhouse``
on Linux), or the path in ``ROUNDHOUSE_CONFIG``. Shape::

    {"username": str, "token": "rh_...", "lobby": "host:port", "accounts": "host:port"}

The token is a personal API token (the accounts service's ``CreateToken``), sent as
``authorization: Bearer <token>`` on every call; the file is created with mode 0600 and
kept so when rewritten.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import platformdirs

CONFIG_ENV = "ROUNDHOUSE_CONFIG"
"""Environment variable naming another config file (tests, several sign-ins)."""

CLI_SCOPES = ("play", "tables:write")
"""Scopes ``roundhouse login`` asks for: play one's seats, open tables and seat bots."""


class NotSignedIn(Exception):
    """No usable sign-in: run ``roundhouse login`` first."""


@dataclasses.dataclass(frozen=True)
class Session:
    """A sign-in: who, the secret token, and the addresses it was made for."""

    username: str
    token: str
    lobby: str
    accounts: str

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """Call metadata carrying the token."""
        return (("authorization", f"Bearer {self.token}"),)


def config_path() -> Path:
    """The config file: ``$ROUNDHOUSE_CONFIG``, else ``<config dir>/roundhouse/config.json``."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override)
    return platformdirs.user_config_path("roundhouse") / "config.json"


def save(session: Session, path: Path | None = None) -> Path:
    """Write ``session`` (mode 0600, its directory 0700 when created). Returns the path."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps(dataclasses.asdict(session), indent=2) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an older file may have had other bits
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    return path


def load(path: Path | None = None) -> Session:
    """The saved sign-in.

    Raises:
        NotSignedIn: no file, or a file that is not a sign-in (with the reason).
    """
    path = path or config_path()
    try:
        data = json.loads(path.read_text())
        return Session(
            username=str(data["username"]),
            token=str(data["token"]),
            lobby=str(data["lobby"]),
            accounts=str(data["accounts"]),
        )
    except FileNotFoundError:
        why = f"not signed in ({path} does not exist): run `roundhouse login`"
        raise NotSignedIn(why) from None
    except (ValueError, KeyError, TypeError) as exc:
        why = f"{path} is not a sign-in ({exc}): run `roundhouse login` again"
        raise NotSignedIn(why) from None
