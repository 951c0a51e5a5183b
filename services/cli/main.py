"""The ``roundhouse`` command.

Subcommands:

* ``roundhouse login`` / ``tables`` / ``new TITLE --players N --bots greedy,...`` /
  ``join TABLE SEAT``: the terminal client of the public API (:mod:`services.cli.client`).
* ``roundhouse play TABLE``: play (or watch) a table on a terminal screen
  (:mod:`services.cli.screen`).
* ``roundhouse local <title> --players N --bots random,greedy,... --seed S``:
  a whole game of bots in-process with no services (embedded mode); prints the
  moves and the result. ``roundhouse play <title> ...`` (a title, not a table
  id) still does the same.
* ``roundhouse arena --title T --policies search-medium,greedy,greedy,greedy --games N
  --workers W [--report FILE] [--seed S] [--clock wall|cpu]``: bots play games in parallel
  and are measured (see :mod:`services.bots.arena`).
* ``roundhouse demo``: what ``make demo`` runs (see :mod:`services.cli.demo`).
* ``roundhouse serve rules <title> | lobby | accounts | dispatcher | archiver | tournaments |
  gateway | clocks``: run one process (``gateway``: the HTTP API, :mod:`services.web`;
  ``clocks``: the clock keeper, :mod:`services.clocks.keeper`).
* ``roundhouse up`` / ``roundhouse down``: the whole platform in the background
  (:mod:`services.cli.updown`).
* ``roundhouse accounts create-admin NAME``: the first admin (see
  :mod:`services.accounts.cli`).
* ``roundhouse db upgrade | current``: apply the store's migrations / show the
  revision (``ROUNDHOUSE_DATABASE_URL``; empty = the embedded SQLite file).
* ``roundhouse archive verify [--title T] [--limit N]``: replay archived games
  with the engines (:mod:`services.archive.verify`).
* ``roundhouse hotstore migrate [--from URL] [--dry-run] [--force]``: move Redis keys of an
  older layout to this version's (:mod:`services.platform.keymigration`; ``docs/deploy.md``).
* title subcommands registered by ``services.<title>.cli`` (e.g. ``e1894 replay``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys

from rich.console import Console

from services.bots.policies import POLICY_NAMES, make_policy, policy_available
from services.kernel.engine import IllegalAction, InvalidOptions
from services.kernel.playout import play_out
from services.kernel.registry import UnknownTitle
from services.kernel.rng import SeededRandom
from services.rules.titles import TITLE_MODULES, get_game


def cmd_play(args: argparse.Namespace) -> int:
    """``play TABLE``: the screen; ``play TITLE``: the embedded game (as ``local``)."""
    if args.title in TITLE_MODULES:
        return cmd_local(args)
    from services.cli import screen
    from services.cli.session import NotSignedIn, load

    try:
        session = load()
    except NotSignedIn as exc:
        Console().print(f"[red]{exc}[/red]")
        return 1
    return screen.run(session, args.title, args.seat)


def cmd_local(args: argparse.Namespace) -> int:
    console = Console()
    try:
        game = get_game(args.title)
    except UnknownTitle as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    bots = [b.strip() for b in args.bots.split(",")] if args.bots else ["random"]
    if len(bots) == 1:
        bots = bots * args.players
    if len(bots) != args.players:
        console.print(f"[red]--bots names {len(bots)} policies for {args.players} players[/red]")
        return 2
    unknown = sorted({b for b in bots if b not in POLICY_NAMES})
    if unknown:
        console.print(f"[red]unknown policies {unknown}; known: {', '.join(POLICY_NAMES)}[/red]")
        return 2
    unable = sorted({b for b in bots if not policy_available(b, args.title)})
    if unable:
        console.print(f"[red]policies {unable} cannot play {args.title}[/red]")
        return 2
    try:
        options = json.loads(args.options) if args.options else {}
        state = game.new_state(args.players, args.seed, options)
    except (InvalidOptions, ValueError) as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    labels: list[str] = []  # the label of the move being played, made before it is applied

    def labelled(policy):
        def choose(st, seat):
            action = policy(st, seat)
            if not args.quiet:
                labels.append(game.describe(st, action))
            return action

        return choose

    policies = {
        seat: labelled(make_policy(name, args.title, args.seed * 1000 + seat))
        for seat, name in enumerate(bots)
    }

    def show(seat, action, events):
        if not args.quiet:
            label = labels.pop() if labels else str(action)
            console.print(
                f"[dim]{state.version:>5}[/dim]  seat {seat} [cyan]{bots[seat]:<7}[/cyan] {label}",
                highlight=False,
            )

    try:
        play_out(state, policies, SeededRandom(args.seed), on_step=show)
    except IllegalAction as exc:  # a policy bug, never expected
        console.print(f"[red]bot chose an illegal action: {exc}[/red]")
        return 1
    result = state.result()
    console.print(f"{game.name}: game over after {state.version} moves ({result.end_reason})")
    for seat in sorted(range(args.players), key=lambda s: (result.ranks[s], s)):
        console.print(
            f"  rank {result.ranks[seat]}  seat {seat} ({bots[seat]}): {result.scores[seat]}"
        )
    if args.json:
        print(json.dumps({"result": result.to_json(), "moves": state.version}))
    return 0


def cmd_arena(args: argparse.Namespace) -> int:
    from services.bots.arena import ArenaError, draw_report, run_arena

    console = Console(stderr=True)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]

    def write(report: dict) -> None:
        """The JSON report (also the partial ones while the games run) to ``--report``."""
        report["command"] = "roundhouse arena " + " ".join(args.argv)
        if args.report:
            with open(args.report, "w", encoding="utf-8") as fh:
                json.dump(report, fh, indent=2)
                fh.write("\n")

    try:
        report = run_arena(
            args.title,
            policies,
            args.games,
            args.workers,
            args.seed,
            progress=not args.quiet,
            clock=args.clock or None,
            partial=write if args.report else None,
        )
    except ArenaError as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    write(report)
    out = Console()
    draw_report(report, out if out.is_terminal else Console(width=150))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from services.cli.demo import run_demo

    return run_demo(
        args.titles.split(",") if args.titles else None,
        quiet=args.quiet,
        keep_running=args.keep_running,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    if args.what == "rules":
        # the title's own entry point: it adds the title's extra services (e1894: Interchange)
        importlib.import_module(f"services.{args.title}.service.server").main()
    elif args.what == "accounts":
        from services.accounts.server import serve as serve_accounts

        asyncio.run(serve_accounts())
    elif args.what == "lobby":
        from services.lobby.server import serve as serve_lobby

        asyncio.run(serve_lobby())
    elif args.what == "gateway":
        from services.web.server import main as gateway_main

        gateway_main()
    elif args.what == "archiver":
        from services.archive.server import serve as serve_archiver

        asyncio.run(serve_archiver())
    elif args.what == "tournaments":
        from services.tournaments.service.server import serve as serve_tournaments

        asyncio.run(serve_tournaments())
    elif args.what == "clocks":
        from services.clocks.keeper import main as clocks_main

        clocks_main()
    else:
        from services.bots.dispatcher import main as dispatcher_main

        dispatcher_main()
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from services.platform.db import current_revision, database_url, upgrade

    url = database_url()
    if args.action == "upgrade":
        upgrade(url, args.revision)
    print(f"{_safe_url(url)} is at revision {current_revision(url) or '(empty)'}")
    return 0


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="roundhouse",
        description="Roundhouse: play train games in-process, run the demo, or run a service.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    local = sub.add_parser("local", help="play a whole game of bots in-process (embedded mode)")
    local.add_argument("title", choices=sorted(TITLE_MODULES))
    _embedded_options(local)
    local.set_defaults(func=cmd_local)

    play = sub.add_parser(
        "play",
        help="play a table on a terminal screen (TABLE), or as `local` when given a title",
    )
    play.add_argument("title", metavar="TABLE", help="a table id (or a title: as `local`)")
    play.add_argument("--seat", type=int, default=None, help="the seat to play (default: yours)")
    _embedded_options(play)
    play.set_defaults(func=cmd_play)

    arena = sub.add_parser("arena", help="bots play many games in parallel and are measured")
    arena.add_argument("--title", required=True, choices=sorted(TITLE_MODULES))
    arena.add_argument(
        "--policies",
        required=True,
        help="comma-separated policy per seat, e.g. search-medium,greedy,greedy,greedy",
    )
    arena.add_argument("--games", type=int, required=True, help="a multiple of the seats")
    arena.add_argument("--workers", type=int, default=1, help="game processes in parallel")
    arena.add_argument("--seed", type=int, default=1, help="the first deal's seed")
    arena.add_argument("--report", default="", help="write the JSON report to this file")
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="",
        help="the clock the search tiers budget (default: each tier's own, wall)",
    )
    arena.set_defaults(func=cmd_arena)

    from services.cli.client import register as register_client

    register_client(sub)

    demo = sub.add_parser("demo", help="start the services and watch bots play (make demo)")
    demo.add_argument("--titles", default="", help="comma-separated titles (default: all)")
    demo.add_argument("--quiet", action="store_true", help="do not print every move")
    demo.add_argument(
        "--keep-running",
        action="store_true",
        help="after the games keep the services up (to sign in and play) until Ctrl-C",
    )
    demo.set_defaults(func=cmd_demo)

    serve = sub.add_parser("serve", help="run one service process")
    serve.add_argument(
        "what",
        choices=[
            "rules",
            "lobby",
            "accounts",
            "dispatcher",
            "archiver",
            "tournaments",
            "gateway",
            "clocks",
        ],
    )
    serve.add_argument("title", nargs="?", choices=sorted(TITLE_MODULES))
    serve.set_defaults(func=cmd_serve)

    from services.cli.updown import main_down, main_status, main_up

    sub.add_parser(
        "up", help="run the whole platform locally in the background (gateway on :8080)"
    ).set_defaults(func=main_up)
    sub.add_parser("down", help="stop everything `roundhouse up` started").set_defaults(
        func=main_down
    )
    sub.add_parser(
        "status", help="each process `roundhouse up` started: pid, state, restarts, uptime"
    ).set_defaults(func=main_status)

    db = sub.add_parser("db", help="the durable store (ROUNDHOUSE_DATABASE_URL)")
    db.add_argument("action", choices=["upgrade", "current"])
    db.add_argument("--revision", default="head", help="upgrade to this revision (default head)")
    db.set_defaults(func=cmd_db)

    from services.accounts.cli import register as register_accounts

    register_accounts(sub)

    from services.archive.verify import register as register_archive

    register_archive(sub)

    from services.platform.keymigration import register as register_hotstore

    register_hotstore(sub)

    from services.web.boards.cli import register as register_board

    register_board(sub)

    for title in TITLE_MODULES:
        try:
            module = importlib.import_module(f"services.{title}.cli")
        except ModuleNotFoundError:
            continue
        module.register(sub)
    return parser


def _embedded_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--bots", default="random", help="comma-separated policy per seat (one name = all seats)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--options", default="", help="title options as a JSON object")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    parser.add_argument("--json", action="store_true", help="also print the result as JSON")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)[1:]
    if args.command == "serve" and args.what == "rules" and not args.title:
        parser.error("serve rules needs a title")
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `roundhouse ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
