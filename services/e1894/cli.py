"""``roundhouse e1894 ...``: 18xx.games interchange from the command line.

* ``roundhouse e1894 replay FILE.json`` replays a game recorded on 18xx.games with our rules
  (every route recomputed) and prints one JSON line, the reference-command contract of
  :mod:`.differential`: ``{"ok": true, "result": {player id: score}, "finished": bool,
  "game_end_reason": ...}``, or at the first divergence ``{"ok": false, "action_index": i,
  "action_id": id, "error": reason, "code": code}`` and exit 1. It also exits 1 (with
  ``"ok": true`` and ``"stored_result_problems"``) when the file's stored result or end reason
  differ from ours, unless ``--no-check``.
* ``roundhouse e1894 import FILE.json [--out LOG.json]`` converts a recorded game into a game
  log of ours: ``{"num_players", "seed", "options", "player_ids", "log": [[seat, action]...]}``.
* ``roundhouse e1894 export (--log LOG.json | --players N --seed S [--bots random,greedy])
  [--out FILE.json]`` (a policy name per seat, a search tier with an iteration budget as
  ``search-easy@6``) writes one of our games (a log file, or a game played by bots) in the
  18xx.games format.
* ``roundhouse e1894 differential --games N --reference-cmd CMD [--players 3,4]
  [--bots random,greedy,mixed[,search]] [--seed S] [--workers W] [--report FILE] [--log FILE]
  [--keep-dir DIR]``
  exports N bot games and compares another engine's replay of each with ours
  (:mod:`.differential`).

:func:`register` adds these to the ``roundhouse`` parser (``services/cli/main.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from services.kernel.engine import IllegalAction, InvalidOptions

from . import differential
from .botgames import play_bots
from .engine import GAME
from .engine.interchange.exporter import export_game
from .engine.interchange.importer import ImportDivergence, import_game


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``e1894`` command with ``replay``, ``import``, ``export`` and ``differential``."""
    p = subparsers.add_parser("e1894", help="1894: 18xx.games import/export and replay")
    sub = p.add_subparsers(dest="e1894_command", required=True)

    rp = sub.add_parser("replay", help="replay an 18xx.games JSON game with our rules")
    rp.add_argument("file", help="18xx.games game JSON")
    rp.add_argument("--no-check", action="store_true", help="do not compare with the file's result")
    rp.set_defaults(func=cmd_replay)

    ip = sub.add_parser("import", help="convert an 18xx.games JSON game into a game log of ours")
    ip.add_argument("file")
    ip.add_argument("--out", default="-", help="output file (default stdout)")
    ip.set_defaults(func=cmd_import)

    ep = sub.add_parser("export", help="write one of our games in the 18xx.games format")
    src = ep.add_mutually_exclusive_group(required=True)
    src.add_argument("--log", help="a game log of ours (as written by 'e1894 import')")
    src.add_argument("--players", type=int, help="play a new game with bots instead")
    ep.add_argument("--seed", type=int, default=1, help="seed of the new game")
    ep.add_argument("--bots", default="random", help="policy per seat (one name = all seats)")
    ep.add_argument("--options", default="", help="options of the new game as a JSON object")
    ep.add_argument("--out", default="-", help="output file (default stdout)")
    ep.set_defaults(func=cmd_export)

    dp = sub.add_parser(
        "differential", help="compare another engine's replay of our exported bot games with ours"
    )
    dp.add_argument("--games", type=int, required=True, help="number of bot games")
    dp.add_argument(
        "--reference-cmd",
        required=True,
        help="command run as 'CMD FILE' on each exported game (contract: e1894-game.md)",
    )
    dp.add_argument("--players", default="3,4", help="player counts to rotate over")
    dp.add_argument(
        "--bots",
        default=",".join(differential.DEFAULT_KINDS),
        help="bot kinds to rotate over (random, greedy, mixed, search: one seat of a "
        "deterministic search bot, or a policy name)",
    )
    dp.add_argument("--seed", type=int, default=1, help="seed of the first game (then +1 each)")
    dp.add_argument(
        "--workers", "--jobs", type=int, default=1, help="games run in parallel (processes)"
    )
    dp.add_argument("--report", help="write the JSON report here")
    dp.add_argument(
        "--log", help="append each game's outcome as a JSON line here as soon as it ends"
    )
    dp.add_argument("--keep-dir", help="keep the files of games not accepted with our result")
    dp.add_argument("--timeout", type=float, default=600.0, help="seconds per reference run")
    dp.add_argument("--options", default="", help="options of the games as a JSON object")
    dp.set_defaults(func=cmd_differential)
    return p


def _read(path: str) -> Any:
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _write(path: str, obj: Any) -> None:
    text = json.dumps(obj, ensure_ascii=False)
    if path == "-":
        print(text)
    else:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")


def replay_file(data: dict[str, Any]) -> dict[str, Any]:
    """Replay a recorded game; ``{"result": {player id: score}, "finished": bool,
    "game_end_reason": str | None}``.

    Raises:
        ImportDivergence: at the first divergence.
    """
    imp = import_game(data)
    return {
        "result": imp.result(),
        "finished": imp.state.is_terminal(),
        "game_end_reason": imp.game_end_reason or None,
    }


def cmd_replay(args: argparse.Namespace) -> int:
    """``e1894 replay``: 0 when the game replays (to its stored result, unless ``--no-check``),
    1 at a divergence, 2 for an unreadable file; one JSON line on stdout in every case."""
    try:
        data = _read(args.file)
    except (OSError, ValueError) as exc:
        print(json.dumps({"ok": False, "error": f"cannot read {args.file}: {exc}"}))
        return 2
    try:
        out = replay_file(data)
    except ImportDivergence as exc:
        ids = [a.get("id") for a in data.get("actions") or [] if isinstance(a, dict)]
        index = ids.index(exc.action_id) if exc.action_id in ids else None
        line = {
            "ok": False,
            "action_index": index,
            "action_id": exc.action_id,
            "error": exc.reason,
            "code": exc.code,
        }
        print(json.dumps(line))
        print(f"action {exc.action_id}: {exc.reason}", file=sys.stderr)
        return 1
    problems = []
    if not args.no_check:
        if "result" in data and {str(k): v for k, v in data["result"].items()} != out["result"]:
            problems.append(f"stored result {data['result']} differs")
        if data.get("game_end_reason") and data["game_end_reason"] != out["game_end_reason"]:
            problems.append(f"stored end reason {data['game_end_reason']!r} differs")
    line = {"ok": True, **out}
    if problems:
        line["stored_result_problems"] = problems
        print("; ".join(problems), file=sys.stderr)
    print(json.dumps(line, sort_keys=True))
    return 1 if problems else 0


def cmd_import(args: argparse.Namespace) -> int:
    """``e1894 import``: write our log of a recorded game."""
    try:
        imp = import_game(_read(args.file))
    except ImportDivergence as exc:
        print(
            json.dumps({"action_id": exc.action_id, "code": exc.code, "reason": exc.reason}),
            file=sys.stderr,
        )
        return 1
    _write(
        args.out,
        {
            "title": GAME.id,
            "num_players": imp.num_players,
            "seed": imp.seed,
            "options": imp.options,
            "player_ids": imp.player_ids,
            "log": [[seat, action.to_json()] for seat, action in imp.log],
        },
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``e1894 export``: write a log of ours (or a bot game) in the 18xx.games format."""
    try:
        if args.log:
            obj = _read(args.log)
            n, seed, options = int(obj["num_players"]), int(obj["seed"]), obj.get("options") or {}
            log = [(int(s), a) for s, a in obj["log"]]
            ids = obj.get("player_ids")
        else:
            n, seed = args.players, args.seed
            options = json.loads(args.options) if args.options else {}
            log = play_bots(n, seed, args.bots, options)
            ids = None
        data = export_game(n, seed, options, log, player_ids=ids)
    except (OSError, ValueError, KeyError, InvalidOptions, IllegalAction) as exc:
        print(json.dumps({"error": str(exc)}), file=sys.stderr)
        return 1
    _write(args.out, data)
    return 0


def cmd_differential(args: argparse.Namespace) -> int:
    """``e1894 differential``: 0 when every game is accepted with our result or refused at a
    known reference defect (:mod:`.reference_defects`), 1 otherwise, 2 for bad arguments."""
    console = Console(stderr=False)
    try:
        players = [int(p) for p in args.players.split(",") if p.strip()]
        bots = [b.strip() for b in args.bots.split(",") if b.strip()]
        options = json.loads(args.options) if args.options else {}
        specs = differential.plan_games(args.games, players=players, bots=bots, seed=args.seed)
        if args.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {args.workers}")
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        return 2
    report = differential.run_with_progress(
        specs,
        args.reference_cmd,
        console=console,
        report_path=args.report,
        log_path=args.log,
        workers=args.workers,
        options=options,
        keep_dir=args.keep_dir,
        timeout=args.timeout,
    )
    agreed = (
        report.counts[differential.Status.SAME] + report.counts[differential.Status.KNOWN_DEFECT]
    )
    return 0 if agreed == len(specs) else 1
