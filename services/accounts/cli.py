"""``roundhouse accounts ...``: administration from the command line.

* ``roundhouse accounts create-admin NAME``: creates the account NAME with the
  admin role (the password is read from stdin, or asked for on a terminal);
  ``--promote`` gives the role to an existing account instead. This is how
  the first admin is made; admins then act with tokens scoped ``admin``.

Works on ``ROUNDHOUSE_DATABASE_URL`` (migrated first in embedded SQLite mode).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys

from services.accounts import rules
from services.accounts.credentials import hash_password
from services.accounts.models import HUMAN
from services.accounts.store import AccountStore, UsernameTaken
from services.platform.db import create_engine, database_url, is_sqlite, session_factory, upgrade
from services.platform.grpc_errors import ServiceError


def _read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise SystemExit("the passwords differ")
        return first
    return sys.stdin.readline().rstrip("\n")


async def create_admin(url: str, username: str, password: str | None, promote: bool) -> str:
    """Creates (or with ``promote`` promotes) the admin ``username``; a line to print.

    Raises:
        ServiceError: a bad name or password (``bad_username``, ``bad_password``).
        UsernameTaken: the name is taken (and ``promote`` is not set).
        LookupError: ``promote`` of an unknown account.
    """
    engine = create_engine(url)
    try:
        store = AccountStore(session_factory(engine))
        if promote:
            account = await store.by_username(username)
            if account is None or account.kind != HUMAN:
                raise LookupError(f"no person's account named {username}")
            await store.set_admin(account.id)
            return f"{account.username} is an admin now"
        rules.check_username(username)
        rules.check_password(password or "")
        account = await store.create_account(
            username, await hash_password(password or ""), HUMAN, is_admin=True
        )
        return f"admin account {account.username} created ({account.id})"
    finally:
        await engine.dispose()


def cmd_create_admin(args: argparse.Namespace) -> int:
    url = database_url()
    if is_sqlite(url):
        upgrade(url)
    password = None if args.promote else _read_password()
    try:
        print(asyncio.run(create_admin(url, args.name, password, args.promote)))
    except ServiceError as exc:
        print(f"refused ({exc.reason}): {exc.message}", file=sys.stderr)
        return 2
    except UsernameTaken:
        print(f"{args.name} is taken (use --promote to make it an admin)", file=sys.stderr)
        return 2
    except LookupError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return 0


def register(sub) -> None:
    """Adds ``accounts`` to the ``roundhouse`` command."""
    accounts = sub.add_parser("accounts", help="accounts administration")
    actions = accounts.add_subparsers(dest="action", required=True)
    admin = actions.add_parser(
        "create-admin", help="create an admin account (password on stdin) or --promote one"
    )
    admin.add_argument("name")
    admin.add_argument("--promote", action="store_true", help="make an existing account admin")
    admin.set_defaults(func=cmd_create_admin)
