"""``roundhouse e1894 ...``: 18xx.games interchange from the command line.

* ``roundhouse e1894 replay FILE.json`` replays a game recorded on 18xx.games with our rules
  (every route recomputed) and prints ``{"result": {player id: score}, "game_end_reason": ...}``.
  At the first divergence it prints the action id and the reason to stderr and exits 1; it
  also exits 1 when the file's stored result or end reason differ from ours.
* ``roundhouse e1894 import FILE.json [--out LOG.json]`` converts a recorded game into a game
  log of ours: ``{"num_players", "seed", "options", "player_ids", "log": [[seat, action]...]}``.
* ``roundhouse e1894 export (--log LOG.json | --players N --seed S [--bots random,greedy])
  [--out FILE.json]`` writes one of our games (a log file, or a game played by bots) in the
  18xx.games format.

:func:`register` adds these to the ``roundhouse`` parser (``services/cli/main.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from services.common.engine import IllegalAction, InvalidOptions

from .engine import GAME
from .engine.interchange.exporter import export_game
from .engine.interchange.importer import ImportDivergence, import_game


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``e1894`` command with ``replay``, ``import`` and ``export``."""
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
    """Replay a recorded game; ``{"result", "game_end_reason"}``.

    Raises:
        ImportDivergence: at the first divergence.
    """
    imp = import_game(data)
    return {"result": imp.result(), "game_end_reason": imp.game_end_reason or None}


def cmd_replay(args: argparse.Namespace) -> int:
    """``e1894 replay``: 0 when the game replays to its stored result, 1 at a divergence."""
    try:
        data = _read(args.file)
    except (OSError, ValueError) as exc:
        print(json.dumps({"error": f"cannot read {args.file}: {exc}"}), file=sys.stderr)
        return 2
    try:
        out = replay_file(data)
    except ImportDivergence as exc:
        print(
            json.dumps({"action_id": exc.action_id, "code": exc.code, "reason": exc.reason}),
            file=sys.stderr,
        )
        return 1
    print(json.dumps(out, sort_keys=True))
    if not args.no_check:
        problems = []
        if "result" in data and {str(k): v for k, v in data["result"].items()} != out["result"]:
            problems.append(f"stored result {data['result']} differs")
        if data.get("game_end_reason") and data["game_end_reason"] != out["game_end_reason"]:
            problems.append(f"stored end reason {data['game_end_reason']!r} differs")
        if problems:
            print(json.dumps({"action_id": None, "reason": "; ".join(problems)}), file=sys.stderr)
            return 1
    return 0


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


def play_bots(players: int, seed: int, bots: str, options: dict[str, Any]) -> list:
    """A game played by bot policies: its log of ``(seat, action)``."""
    from services.bots.policies import make_policy
    from services.common.playout import play_out
    from services.common.rng import SeededRandom

    names = [b.strip() for b in bots.split(",") if b.strip()] or ["random"]
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise InvalidOptions(f"--bots names {len(names)} policies for {players} players")
    policies = {s: make_policy(name, GAME.id, seed * 1000 + s) for s, name in enumerate(names)}
    state = GAME.new_state(players, seed, options)
    log: list = []
    play_out(state, policies, SeededRandom(seed), on_step=lambda s, a, e: log.append((s, a)))
    return log


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
