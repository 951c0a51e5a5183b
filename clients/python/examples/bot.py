"""An outside bot for Roundhouse, in the style of lichess-bot.

It signs in with a bot account's token (scope ``bot:play``), listens to the account's event
stream, and plays every game it is seated in until stopped (Ctrl-C or SIGTERM):

    python examples/bot.py --url http://127.0.0.1:8080 --token rh_... [--seed 7]

On each ``yourTurn`` event it plays one of its legal moves at random (a ranged move at a random
value of its range): the moves the event carries (the stream is opened with ``moves=True``), or,
when it carries none, the moves it reads. A stale answer (someone moved first) is not an error:
the bot reads the moves again. Replace :func:`choose` with your own engine.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
from typing import Any

from roundhouse_client import Client, Conflict, InvalidRequest, Move, Moves, turn_moves


def choose(moves: list[Move], rng: random.Random) -> dict[str, Any]:
    """The action to play: a random legal move, at a random value when it has a range."""
    move = rng.choice(moves)
    if move.range is not None and move.range.field:
        return move.with_value(rng.choice(move.range.values()))
    return move.action


def describe(moves: list[Move], action: dict[str, Any]) -> str:
    """The label of the move ``action`` was made from (a ranged move's label with the value
    chosen), or the action's JSON."""
    for move in moves:
        if move.action == action:
            return move.label
        field = move.range.field if move.range is not None else None
        if field and {**move.action, field: action.get(field)} == action:
            return f"{move.label} ({field} {action[field]})"
    return json.dumps(action, sort_keys=True)


def outcome(event: dict[str, Any]) -> str:
    """A ``gameFinish`` event's result in words: each seat's rank and score, and why it ended."""
    result = (event.get("data") or {}).get("result") or {}
    ranks, scores = result.get("ranks") or [], result.get("scores") or []
    seats = ", ".join(
        f"seat {seat}: rank {rank}" + (f", score {scores[seat]}" if seat < len(scores) else "")
        for seat, rank in enumerate(ranks)
    )
    reason = result.get("end_reason")
    return f"{seats}" + (f" ({reason})" if reason else "")


def play_turn(
    rh: Client, table_id: str, rng: random.Random, log, given: Moves | None = None
) -> bool:
    """Play one move at ``table_id`` if it is ours (from ``given``, the moves a turn event
    carried, first); False when there was nothing to play."""
    for _attempt in range(3):
        moves, given = given or rh.moves(table_id), None
        if not moves.moves:
            return False
        action = choose(moves.moves, rng)
        try:
            rh.move(table_id, action, expected_version=moves.version)
        except Conflict:
            continue  # someone moved first: read again
        except InvalidRequest as err:  # the game moved on between read and move
            log(f"{table_id}: refused {err.code}: {err.message}")
            continue
        log(f"{table_id}: move {moves.version + 1}: {describe(moves.moves, action)}")
        return True
    return False


def run(url: str, token: str, seed: int | None, log=print) -> None:
    """Play until stopped: every ``yourTurn`` and ``gameStart`` event leads to a move."""
    rng = random.Random(seed)
    with Client(url, token=token) as rh:
        log(f"playing as {rh.account()['username']}")
        for event in rh.stream_events(moves=True):
            kind, table_id = event.get("type"), event.get("table_id")
            given = turn_moves(event)
            if given is not None:  # the turn's moves came with it: one request per move
                play_turn(rh, table_id, rng, log, given)
            elif kind in ("yourTurn", "gameStart") and table_id:
                while play_turn(rh, table_id, rng, log):
                    pass  # several moves in a row (simultaneous or consecutive turns)
            elif kind == "gameFinish":
                log(f"{table_id}: game over: {outcome(event)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--token", required=True, help="a bot account's token (bot:play)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        run(args.url, args.token, args.seed, log=lambda text: print(text, flush=True))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
