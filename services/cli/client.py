"""The terminal client's commands: ``roundhouse login``, ``tables``, ``new``, ``join``.

They are clients of the public gRPC API, exactly as any outside program: the accounts
service for the token, the lobby for everything else, the token as
``authorization: Bearer``. ``roundhouse play TABLE`` (the screen) is in
:mod:`services.cli.screen`.

Every refusal is printed as ``refused (<reason>): <message>`` with the gRPC reason code,
and the command exits with status 1; bad arguments exit with 2.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys

import grpc
from rich.console import Console
from rich.table import Table as RichTable

from roundhouse.v1 import accounts_pb2, accounts_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from services.cli import program
from services.cli import session as sessions
from services.platform.grpc_errors import error_reason

STATUS_NAMES = {
    lobby_pb2.TABLE_STATUS_OPEN: "open",
    lobby_pb2.TABLE_STATUS_STARTING: "starting",
    lobby_pb2.TABLE_STATUS_RUNNING: "running",
    lobby_pb2.TABLE_STATUS_FINISHED: "finished",
    lobby_pb2.TABLE_STATUS_ABORTED: "aborted",
}
STATUS_BY_NAME = {name: code for code, name in STATUS_NAMES.items()}


def refusal(err: grpc.RpcError) -> str:
    """A failed call in one line: ``refused (reason): message``."""
    reason = error_reason(err) or err.code().name.lower()
    if err.code() == grpc.StatusCode.UNAVAILABLE and not error_reason(err):
        # nothing answered at the address: most often the platform is not running
        return (
            f"refused ({reason}): {err.details()} (is the platform running? start it with"
            f" `{program()} up`, or point ROUNDHOUSE_LOBBY_ADDRESS at it)"
        )
    return f"refused ({reason}): {err.details()}"


def seat_text(seat: lobby_pb2.Seat) -> str:
    """``"alice"``, ``"greedy (bot)"``, ``"(empty)"``."""
    if seat.kind == lobby_pb2.SEAT_KIND_EMPTY:
        return "(empty)"
    name = seat.name or "?"
    if seat.kind == lobby_pb2.SEAT_KIND_BOT:
        name += f" ({seat.policy or 'bot'})"
    return name + (" resigned" if seat.resigned else "")


def _lobby(session: sessions.Session) -> tuple[grpc.Channel, lobby_pb2_grpc.LobbyStub]:
    channel = grpc.insecure_channel(session.lobby)
    return channel, lobby_pb2_grpc.LobbyStub(channel)


def _signed_in(console: Console) -> sessions.Session | None:
    try:
        return sessions.load()
    except sessions.NotSignedIn as exc:
        console.print(f"[red]{exc}[/red]")
        return None


def cmd_login(args: argparse.Namespace) -> int:
    """Trade a username and password for a token (accounts ``CreateToken``) and save it."""
    return _sign_in(args, create=False)


def cmd_signup(args: argparse.Namespace) -> int:
    """Make an account (accounts ``CreateAccount``: a person's, with the username and
    password given), then sign in with it as ``login`` does."""
    return _sign_in(args, create=True)


def _sign_in(args: argparse.Namespace, *, create: bool) -> int:
    """``login`` (``create`` false) or ``signup``: ask for what was not given, make the
    account first when ``create``, then save a token with :data:`sessions.CLI_SCOPES`.
    Exit code 1 with the refusal's reason (``bad_credentials``, ``username_taken``,
    ``bad_password``, ...) when the accounts service refuses."""
    from services.platform.settings import CommonSettings, get_settings

    console = Console()
    settings = get_settings(CommonSettings)
    username = args.username or input("username: ").strip()
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass("password: ")
    accounts = args.accounts or settings.accounts_address
    lobby = args.lobby or settings.lobby_address
    with grpc.insecure_channel(accounts) as channel:
        stub = accounts_pb2_grpc.AccountsStub(channel)
        try:
            if create:
                stub.CreateAccount(
                    accounts_pb2.CreateAccountRequest(username=username, password=password),
                    timeout=10,
                )
                console.print(f"account [bold]{username}[/bold] created")
            answer = stub.CreateToken(
                accounts_pb2.CreateTokenRequest(
                    username=username,
                    password=password,
                    scopes=list(sessions.CLI_SCOPES),
                    label="roundhouse terminal",
                ),
                timeout=10,
            )
        except grpc.RpcError as err:
            console.print(f"[red]{refusal(err)}[/red]")
            if not create and error_reason(err) == "bad_credentials":
                console.print(f"no account yet? make one with: {program()} signup")
            return 1
    path = sessions.save(sessions.Session(username, answer.token, lobby, accounts))
    console.print(f"signed in as [bold]{username}[/bold]; token saved in {path}")
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    """List tables (newest first), filtered by title, status, open seats or one's own."""
    console = Console()
    session = _signed_in(console)
    if session is None:
        return 1
    request = lobby_pb2.ListTablesRequest(title=args.title or "", open_seat=args.open)
    if args.status:
        request.status.append(STATUS_BY_NAME[args.status])
    if args.mine:
        request.player = session.username
    channel, lobby = _lobby(session)
    with channel:
        try:
            answer = lobby.ListTables(request, metadata=session.metadata, timeout=10)
        except grpc.RpcError as err:
            console.print(f"[red]{refusal(err)}[/red]")
            return 1
    if args.json:
        print(json.dumps([_table_json(t) for t in answer.tables]))
        return 0
    table = RichTable("table", "title", "status", "seats", title="Tables (newest first)")
    for t in answer.tables:
        seats = ", ".join(f"{s.index}: {seat_text(s)}" for s in t.seats)
        table.add_row(t.table_id, t.title, STATUS_NAMES.get(t.status, "?"), seats)
    console.print(table)
    return 0


def _table_json(t: lobby_pb2.Table) -> dict:
    return {
        "table_id": t.table_id,
        "title": t.title,
        "status": STATUS_NAMES.get(t.status, "?"),
        "seats": [seat_text(s) for s in t.seats],
    }


def cmd_new(args: argparse.Namespace) -> int:
    """Open a table, take seat ``--seat`` (unless every seat is a bot), seat the bots in
    the other seats in order, and start the game once every seat is taken."""
    console = Console()
    session = _signed_in(console)
    if session is None:
        return 1
    bots = [b.strip() for b in args.bots.split(",") if b.strip()] if args.bots else []
    if args.players < 1:
        console.print("[red]--players must be at least 1[/red]")
        return 2
    if len(bots) > args.players:
        console.print(f"[red]--bots names {len(bots)} bots for {args.players} seats[/red]")
        return 2
    me = None if len(bots) == args.players else args.seat
    if me is not None and not 0 <= me < args.players:
        console.print(f"[red]--seat must be 0..{args.players - 1}[/red]")
        return 2
    if args.options:
        try:
            json.loads(args.options)
        except ValueError as exc:
            console.print(f"[red]--options is not JSON: {exc}[/red]")
            return 2
    channel, lobby = _lobby(session)
    md = session.metadata
    with channel:
        table = None
        try:
            table = lobby.CreateTable(
                lobby_pb2.CreateTableRequest(
                    title=args.title, num_players=args.players, options_json=args.options or ""
                ),
                metadata=md,
                timeout=10,
            )
            if me is not None:
                table = lobby.JoinSeat(
                    lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=me),
                    metadata=md,
                    timeout=10,
                )
            others = [s for s in range(args.players) if s != me]
            for seat, policy in zip(others, bots, strict=False):
                table = lobby.AddBot(
                    lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy=policy),
                    metadata=md,
                    timeout=10,
                )
            if all(s.kind != lobby_pb2.SEAT_KIND_EMPTY for s in table.seats):
                table = lobby.StartTable(
                    lobby_pb2.StartTableRequest(table_id=table.table_id), metadata=md, timeout=30
                )
        except grpc.RpcError as err:
            console.print(f"[red]{refusal(err)}[/red]")
            if table is not None and table.status == lobby_pb2.TABLE_STATUS_OPEN:
                _abort_half_built(console, lobby, table.table_id, md)
            return 1
    status = STATUS_NAMES.get(table.status, "?")
    console.print(f"table [bold]{table.table_id}[/bold] ({table.title}, {status})")
    for s in table.seats:
        console.print(f"  seat {s.index}: {seat_text(s)}")
    if status == "open":
        console.print(f"others join with: {program()} join {table.table_id} SEAT")
    console.print(f"play with: {program()} play {table.table_id}")
    if args.json:
        print(json.dumps(_table_json(table)))
    return 0


def _abort_half_built(console: Console, lobby, table_id: str, md) -> None:
    """``new`` failed after opening the table (a bot name refused, a seat taken): abort the
    table (``AbortTable``), so that a half-built table neither lingers in the list nor holds
    the owner's quota of open tables."""
    try:
        lobby.AbortTable(lobby_pb2.StartTableRequest(table_id=table_id), metadata=md, timeout=10)
    except grpc.RpcError as err:
        console.print(f"[red]table {table_id} left open: {refusal(err)}[/red]")
    else:
        console.print(f"table {table_id} aborted (nothing was started)")


def cmd_join(args: argparse.Namespace) -> int:
    """Take a seat at an open table (the game starts when its owner starts it, or at once
    when the lobby starts full tables)."""
    console = Console()
    session = _signed_in(console)
    if session is None:
        return 1
    channel, lobby = _lobby(session)
    with channel:
        try:
            table = lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=args.table, seat=args.seat),
                metadata=session.metadata,
                timeout=10,
            )
        except grpc.RpcError as err:
            console.print(f"[red]{refusal(err)}[/red]")
            return 1
    console.print(
        f"seated at {table.table_id}, seat {args.seat}: {program()} play {table.table_id}"
    )
    return 0


def register(sub) -> None:
    """Add ``signup``, ``login``, ``tables``, ``new`` and ``join`` to the ``roundhouse`` parser."""
    for name, func, text in (
        ("login", cmd_login, "sign in: save a token for the other commands"),
        ("signup", cmd_signup, "make an account (a person's), then sign in as login does"),
    ):
        sign_in = sub.add_parser(name, help=text)
        sign_in.add_argument("--username", default="", help="asked for when not given")
        sign_in.add_argument(
            "--password-stdin", action="store_true", help="read the password from standard input"
        )
        sign_in.add_argument(
            "--lobby", default="", help="the lobby's host:port (default: settings)"
        )
        sign_in.add_argument(
            "--accounts", default="", help="the accounts' host:port (default: settings)"
        )
        sign_in.set_defaults(func=func)

    tables = sub.add_parser("tables", help="list tables")
    tables.add_argument("--title", default="")
    tables.add_argument("--status", choices=sorted(STATUS_BY_NAME), default="")
    tables.add_argument("--open", action="store_true", help="only tables with an empty seat")
    tables.add_argument("--mine", action="store_true", help="only tables where I hold a seat")
    tables.add_argument("--json", action="store_true", help="print JSON instead")
    tables.set_defaults(func=cmd_tables)

    new = sub.add_parser("new", help="open a table, sit down, seat bots, start it when full")
    new.add_argument("title")
    new.add_argument("--players", type=int, default=4)
    new.add_argument(
        "--bots", default="", help="comma-separated hosted policies for the other seats, in order"
    )
    new.add_argument("--seat", type=int, default=0, help="the seat you take (default 0)")
    new.add_argument("--options", default="", help="title options as a JSON object")
    new.add_argument("--json", action="store_true", help="also print the table as JSON")
    new.set_defaults(func=cmd_new)

    join = sub.add_parser("join", help="take a seat at an open table")
    join.add_argument("table")
    join.add_argument("seat", type=int)
    join.set_defaults(func=cmd_join)
