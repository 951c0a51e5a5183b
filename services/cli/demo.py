"""``roundhouse demo``: start every process, let bots play real games through
the real services, print the moves as they stream and the final standings,
then stop everything that was started.

The demo signs up an organiser account (a person: tables, bots) and four bot
accounts of the organiser, each bound to a hosted policy (``search-easy-1``,
``greedy-1``, ``random-1``, ...), and prints how to sign in as the organiser while it runs.
Each demo table is created by the organiser through the lobby, its seats are
given to the bot accounts (``AddBot`` with ``bot``), and it is started; the
dispatcher turns each bot turn into a Celery task and the worker submits the
move to the title's rules service, which appends it to the game's Redis stream.
The demo watches the table through the lobby.

Then (Chicago Express available) the organiser runs a small Swiss tournament of bot
accounts through the tournament service (:func:`run_tournament`): 12 hosted bot accounts,
tables of 4, 3 rounds; the service makes the lobby tables, the bots play, results come
back on the lifecycle stream and each round is paired when the last table finished. The
demo prints every round's pairings, the final standings and the ratings leaderboard.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import signal
import threading
import time

import grpc
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from roundhouse.v1 import (
    accounts_pb2,
    accounts_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    tournaments_pb2,
    tournaments_pb2_grpc,
)
from services.cli.launcher import NoRedis, Stack
from services.platform.auth import bearer
from services.rules.titles import available_titles


@dataclasses.dataclass(frozen=True)
class DemoTable:
    title: str
    label: str
    bots: tuple[str, ...]
    seed: int
    clock: lobby_pb2.TimeControl | None = None  # a live clock, shown beside each move


DEMO_BOTS = ("search-easy", "random", "greedy", "random")
"""The seats of every demo table: one search bot (the cheapest tier, 0.05 s a move, so the
demo stays short), a greedy bot and two random ones."""

DEMO_CLOCK = lobby_pb2.TimeControl(kind="live", base_s=120, increment_s=2)
"""The demo's live clock (Chicago Express): 2 minutes per seat, 2 s more per move."""

DEMO_TABLES = (
    DemoTable("railbarons", "Chicago Express", DEMO_BOTS, 2026, DEMO_CLOCK),
    DemoTable("transsib", "Russian Railroads", DEMO_BOTS, 2026),
    DemoTable("e1894", "1894", DEMO_BOTS, 2026),
)


ORGANISER = "organiser"
ORGANISER_SCOPES = ("tables:write", "play", "bots:write", "tournament:write")


@dataclasses.dataclass(frozen=True)
class Organiser:
    """The demo's organiser: username, password, a token and its bot accounts
    (policy -> usernames, in the order they are seated)."""

    username: str
    password: str
    token: str
    bots: dict[str, list[str]]

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return bearer(self.token)


def sign_up_organiser(
    accounts: accounts_pb2_grpc.AccountsStub,
    bots_per_policy: dict[str, int],
    username: str = ORGANISER,
    bot_prefix: str = "",
) -> Organiser:
    """Create the organiser ``username`` (a random password), sign in for a
    token and create its hosted bot accounts: ``<bot_prefix><policy>-<n>`` for
    n = 1..count.

    Raises:
        grpc.RpcError: an accounts call failed (e.g. ALREADY_EXISTS for a taken name).
    """
    password = secrets.token_urlsafe(12)
    accounts.CreateAccount(accounts_pb2.CreateAccountRequest(username=username, password=password))
    token = accounts.CreateToken(
        accounts_pb2.CreateTokenRequest(
            username=username, password=password, scopes=list(ORGANISER_SCOPES), label="demo"
        )
    ).token
    bots: dict[str, list[str]] = {}
    for policy, count in bots_per_policy.items():
        for n in range(1, count + 1):
            name = f"{bot_prefix}{policy}-{n}"
            accounts.CreateBotAccount(
                accounts_pb2.CreateBotAccountRequest(username=name, hosted_policy=policy),
                metadata=bearer(token),
            )
            bots.setdefault(policy, []).append(name)
    return Organiser(username, password, token, bots)


def sign_in_help(
    organiser: Organiser, accounts_address: str, lobby_address: str, gateway_address: str = ""
) -> str:
    """How to sign in as the organiser while the demo runs: over the demo's HTTP gateway
    (curl), or over gRPC (grpcurl)."""
    request = json.dumps(
        {"username": organiser.username, "password": organiser.password, "scopes": ["play"]}
    )
    http = (
        f"  curl -s -X POST http://{gateway_address}/api/tokens "
        f"-H 'content-type: application/json' -d '{request}'\n"
        f"then call http://{gateway_address}/api/... with -H 'authorization: Bearer <token>' "
        "(docs/api.md), or sign in on the web pages with the same name and password; over gRPC:\n"
        if gateway_address
        else ""
    )
    return (
        f"Organiser account: [bold]{organiser.username}[/bold], password "
        f"[bold]{organiser.password}[/bold]; bot accounts: "
        f"{', '.join(n for names in organiser.bots.values() for n in names)}.\n"
        "Sign in for a token while the demo runs (the accounts live in this run's store; "
        "`roundhouse demo --keep-running` keeps the services up after the games; "
        "`roundhouse up` runs the platform for good):\n"
        f"{http}"
        "  grpcurl -plaintext "
        f"-d '{request}' {accounts_address} roundhouse.v1.Accounts/CreateToken\n"
        f"then call the lobby at {lobby_address} with -H 'authorization: Bearer <token>'."
    )


def wait_for_stop() -> None:
    """Block until Ctrl-C (SIGINT) or SIGTERM."""
    stop = threading.Event()
    # our own handlers: a demo started in the background by a script ignores SIGINT otherwise
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in signals}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def describe(action_json: str, width: int = 90) -> str:
    """``{"type": "bid", "amount": 7}`` -> ``bid amount=7``: fields that are
    unset (None, empty) are left out and long values are shortened."""
    action = json.loads(action_json)
    kind = action.pop("type")
    parts = [kind]
    for key, value in action.items():
        if value is None or value == [] or value == "":
            continue
        text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        parts.append(f"{key}={text}")
    line = " ".join(parts)
    return line if len(line) <= width else line[: width - 3] + "..."


def clock_text(update) -> str:
    """`` [1:58.4 left]``: the mover's clock after its move, increment included (timed
    tables; else ``""``)."""
    if not update.clocks or update.seat < 0:
        return ""
    ms = update.clocks[update.seat].remaining_ms
    return f" [yellow]\\[{ms // 60_000}:{ms % 60_000 / 1000:04.1f} left][/yellow]"


def seat_bots(demo: DemoTable, organiser: Organiser) -> list[str]:
    """The organiser's bot account for each seat of ``demo`` (policy by policy,
    distinct accounts at one table)."""
    used: dict[str, int] = {}
    names = []
    for policy in demo.bots:
        names.append(organiser.bots[policy][used.get(policy, 0)])
        used[policy] = used.get(policy, 0) + 1
    return names


def bots_needed(tables: list[DemoTable]) -> dict[str, int]:
    """Bot accounts per policy so that every table seats distinct accounts."""
    need: dict[str, int] = {}
    for t in tables:
        for policy in set(t.bots):
            need[policy] = max(need.get(policy, 0), t.bots.count(policy))
    return need


def play_table(
    lobby: lobby_pb2_grpc.LobbyStub,
    demo: DemoTable,
    console: Console,
    organiser: Organiser,
    stack: Stack | None = None,
    timeout_s: float = 900,
    stall_s: float = 120,
    quiet: bool = False,
) -> lobby_pb2.TableResult:
    """Create, fill with bots, start and watch one table to its end.

    A watchdog stops the watch early, with the reason, if a process of
    ``stack`` exits or no move arrives for ``stall_s`` seconds.

    Raises:
        RuntimeError: a process died, or the game stalled.
        grpc.RpcError: a lobby call failed.
    """
    md = organiser.md
    create = lobby_pb2.CreateTableRequest(
        title=demo.title, num_players=len(demo.bots), seed=demo.seed
    )
    if demo.clock is not None:
        create.time_control.CopyFrom(demo.clock)
        create.timeout_policy = "takeover"
    table = lobby.CreateTable(create, metadata=md)
    for seat, bot in enumerate(seat_bots(demo, organiser)):
        lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, bot=bot), metadata=md
        )
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id), metadata=md)
    names = {s.index: s.name for s in table.seats}
    clock = ""
    if demo.clock is not None:
        clock = (
            f", live clock {demo.clock.base_s} s + {demo.clock.increment_s} s per move"
            " (each move shows the mover's time left)"
        )
    console.rule(f"{demo.label}: table {table.table_id}, {len(demo.bots)} bots{clock}")
    if stack is not None and stack.gateway:
        console.print(
            f"Watch it in a browser: http://{stack.gateway_address}/tables/{table.table_id}",
            soft_wrap=True,
            highlight=False,
        )
    call = lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table.table_id), timeout=timeout_s)
    last_move = [time.monotonic()]
    problem: list[str] = []
    done = threading.Event()

    def watchdog() -> None:
        while not done.wait(1.0):
            try:
                if stack is not None:
                    stack.check_alive()
                if time.monotonic() - last_move[0] > stall_s:
                    raise RuntimeError(f"no move for {stall_s:.0f} s: the bots are stuck")
            except RuntimeError as exc:
                problem.append(str(exc))
                call.cancel()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    moves = 0
    try:
        for update in call:
            last_move[0] = time.monotonic()
            moves += 1
            if not quiet:
                console.print(
                    f"[dim]{update.version:>5}[/dim]  seat {update.seat} "
                    f"[cyan]{names.get(update.seat, 'table'):<11}[/cyan]{clock_text(update)} "
                    + escape(update.label or describe(update.action_json)),
                    highlight=False,
                )
            if update.finished:
                break
    except grpc.RpcError:
        if problem:
            raise RuntimeError(problem[0]) from None
        raise
    finally:
        done.set()
    result = lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=table.table_id))
    standings = RichTable(
        title=f"{demo.label}: final standings ({result.end_reason}), {moves} moves"
    )
    for col in ("rank", "seat", "player", "score"):
        standings.add_column(col)
    for s in result.standings:
        standings.add_row(str(s.rank), str(s.seat), s.name, str(s.score))
    console.print(standings)
    return result


@dataclasses.dataclass(frozen=True)
class DemoTournament:
    title: str = "railbarons"
    label: str = "Chicago Express"
    players: int = 12
    table_size: int = 4
    rounds: int = 3
    policies: tuple[str, ...] = ("greedy", "random")
    seed: int = 2026


DEMO_TOURNAMENT = DemoTournament()


def create_tournament_bots(
    accounts: accounts_pb2_grpc.AccountsStub,
    organiser: Organiser,
    demo: DemoTournament = DEMO_TOURNAMENT,
    prefix: str = "cup-",
) -> list[str]:
    """The organiser's hosted bot accounts for the tournament: ``<prefix><p><n>`` (``p``
    the policy's initial: cup-g1 plays greedy), the policies taken in turn."""
    names = []
    for i in range(demo.players):
        policy = demo.policies[i % len(demo.policies)]
        name = f"{prefix}{policy[0]}{i // len(demo.policies) + 1}"
        accounts.CreateBotAccount(
            accounts_pb2.CreateBotAccountRequest(username=name, hosted_policy=policy),
            metadata=organiser.md,
        )
        names.append(name)
    return names


def _pairings_table(
    t: tournaments_pb2.Tournament, rnd: tournaments_pb2.TournamentRound
) -> RichTable:
    table = RichTable(title=f"{t.settings.name}: round {rnd.round} pairings")
    table.add_column("table")
    table.add_column("lobby table")
    for k in range(t.settings.table_size):
        table.add_column(f"seat {k + 1}")
    table.add_column("ranks")
    for x in rnd.tables:
        names = [s.username for s in x.seats] + [""] * (t.settings.table_size - len(x.seats))
        if x.status == "finished":
            ranks = " ".join(str(s.rank) for s in x.seats)
        else:
            ranks = f"{x.status} ({x.void_reason})" if x.void_reason else x.status
        table.add_row(str(x.number), x.table_id, *names, ranks)
    if rnd.byes:
        table.caption = f"byes: {', '.join(rnd.byes)}"
    return table


def _standings_table(t: tournaments_pb2.Tournament) -> RichTable:
    table = RichTable(title=f"{t.settings.name}: final standings")
    for col in ("rank", "player", "points", "opponents' points", "normalised", "wins", "games"):
        table.add_column(col, justify="left" if col == "player" else "right")
    for s in t.standings:
        table.add_row(
            str(s.rank),
            s.username,
            f"{s.points:g}",
            f"{s.opponents_points:g}",
            f"{s.normalised_sum:.2f}",
            str(s.wins),
            str(s.games),
        )
    return table


def _leaderboard_table(title: str, label: str, board: tournaments_pb2.LeaderboardResponse):
    table = RichTable(title=f"{label} ratings leaderboard (ordinal = mu - 3 sigma)")
    for col in ("#", "account", "ordinal", "mu", "sigma", "games", "bot", "provisional"):
        table.add_column(col, justify="left" if col == "account" else "right")
    for row in board.rows:
        r = row.rating
        table.add_row(
            str(row.position),
            r.username,
            f"{r.ordinal:.2f}",
            f"{r.mu:.2f}",
            f"{r.sigma:.2f}",
            str(r.games),
            "yes" if r.bot else "",
            "yes" if r.provisional else "",
        )
    return table


def run_tournament(
    tournaments: tournaments_pb2_grpc.TournamentsStub,
    accounts: accounts_pb2_grpc.AccountsStub,
    organiser: Organiser,
    console: Console,
    stack: Stack | None = None,
    demo: DemoTournament = DEMO_TOURNAMENT,
    prefix: str = "cup-",
    timeout_s: float = 600,
) -> tournaments_pb2.Tournament:
    """Create, fill with the organiser's bot accounts, start and follow the demo's Swiss
    to its end, printing each round's pairings, the standings and the leaderboard.

    Raises:
        RuntimeError: a process died, or the tournament did not finish in time.
        grpc.RpcError: a call failed.
    """
    bots = create_tournament_bots(accounts, organiser, demo, prefix)
    md = organiser.md
    t = tournaments.CreateTournament(
        tournaments_pb2.CreateTournamentRequest(
            settings=tournaments_pb2.TournamentSettings(
                name=f"{demo.label} demo Swiss",
                title=demo.title,
                table_size=demo.table_size,
                format=tournaments_pb2.TOURNAMENT_FORMAT_SWISS,
                rounds=demo.rounds,
                rated=True,
                bots_allowed=True,
                seed=demo.seed,
            )
        ),
        metadata=md,
    )
    tid = t.tournament_id
    for name in bots:
        tournaments.Register(
            tournaments_pb2.RegisterRequest(tournament_id=tid, account=name), metadata=md
        )
    console.rule(
        f"Tournament {t.settings.name}: {demo.players} bot accounts, tables of "
        f"{demo.table_size}, {demo.rounds} rounds (Swiss)"
    )
    if stack is not None and stack.gateway:
        console.print(
            f"Watch it in a browser (pairings, live standings, every table): "
            f"http://{stack.gateway_address}/tournaments/{tid}",
            soft_wrap=True,
            highlight=False,
        )
    started = time.monotonic()
    tournaments.StartTournament(tournaments_pb2.TournamentRequest(tournament_id=tid), metadata=md)
    shown = 0
    deadline = time.monotonic() + timeout_s
    while True:
        if stack is not None:
            stack.check_alive()
        t = tournaments.GetTournament(tournaments_pb2.GetTournamentRequest(tournament_id=tid))
        for rnd in t.rounds[shown:]:
            if rnd.status != "finished":
                break
            console.print(_pairings_table(t, rnd))
            shown += 1
        if t.status == tournaments_pb2.TOURNAMENT_STATUS_FINISHED and shown == len(t.rounds):
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"the tournament did not finish within {timeout_s:.0f} s")
        time.sleep(0.5)
    console.print(_standings_table(t))
    console.print(
        f"{len(t.rounds)} rounds, {sum(len(r.tables) for r in t.rounds)} games in "
        f"{time.monotonic() - started:.0f} s"
    )
    # the ratings consumer rates each game as its finish arrives: wait for the last ones
    for _ in range(40):
        board = tournaments.GetLeaderboard(tournaments_pb2.LeaderboardRequest(title=demo.title))
        games = {r.rating.username: r.rating.games for r in board.rows}
        expected = {s.username: s.games for s in t.standings}
        if all(games.get(n, 0) >= g for n, g in expected.items()):
            break
        time.sleep(0.25)
    console.print(_leaderboard_table(demo.title, demo.label, board))
    return t


def run_demo(
    titles: list[str] | None = None, quiet: bool = False, keep_running: bool = False
) -> int:
    """The whole demo; returns the process exit code. ``keep_running``: after the games the
    services stay up (to sign in as the organiser and play) until Ctrl-C or SIGTERM."""
    console = Console()
    available = available_titles()
    tables = [
        t for t in DEMO_TABLES if t.title in available and (titles is None or t.title in titles)
    ]
    if not tables:
        console.print("[red]no title engine is available[/red]")
        return 1
    stack = Stack([t.title for t in tables], log_level="INFO", gateway=True)
    console.print(
        f"Starting rules services ({', '.join(t.title for t in tables)}), lobby, accounts, "
        "bot dispatcher, archiver, tournaments, clock keeper, the HTTP gateway and a Celery worker "
        f"(logs in {stack.run_dir}, removed after a clean run)"
    )
    try:
        with stack:
            where = "a private redis-server" if stack.started_redis else stack.redis_url
            console.print(f"All services healthy; Redis: {where}")
            console.print(
                f"The web pages (lobby, tables, tournaments): http://{stack.gateway_address}/",
                soft_wrap=True,
                highlight=False,
            )
            with (
                grpc.insecure_channel(stack.accounts_address) as accounts_channel,
                grpc.insecure_channel(stack.lobby_address) as channel,
            ):
                accounts = accounts_pb2_grpc.AccountsStub(accounts_channel)
                organiser = sign_up_organiser(accounts, bots_needed(tables))
                help_text = sign_in_help(
                    organiser, stack.accounts_address, stack.lobby_address, stack.gateway_address
                )
                if not keep_running:  # else printed once, after the games
                    console.print(help_text, soft_wrap=True)  # commands stay on one line to paste
                lobby = lobby_pb2_grpc.LobbyStub(channel)
                for demo in tables:
                    play_table(lobby, demo, console, organiser, stack, quiet=quiet)
                if DEMO_TOURNAMENT.title in [t.title for t in tables]:
                    with grpc.insecure_channel(stack.tournaments_address) as tchannel:
                        run_tournament(
                            tournaments_pb2_grpc.TournamentsStub(tchannel),
                            accounts,
                            organiser,
                            console,
                            stack,
                        )
                if keep_running:
                    console.print(help_text, soft_wrap=True)
                    console.print("The services stay up; Ctrl-C stops them.")
                    wait_for_stop()
    except NoRedis as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    except (grpc.RpcError, RuntimeError, TimeoutError) as exc:
        detail = f"{exc.code().name}: {exc.details()}" if isinstance(exc, grpc.RpcError) else exc
        console.print(f"[red]demo failed: {detail}[/red]")
        console.print(f"the services' logs are kept in {stack.run_dir}")
        return 1
    stack.remove_logs()
    console.print("Demo finished; every process it started has stopped.")
    return 0
