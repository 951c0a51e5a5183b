"""``roundhouse archive verify``: replay archived games with the engines.

For each archived game (:func:`check_game`):

* stored under another rules version than the title's engine plays: reported
  as ``not_replayed`` ("stored under rules version X, engine is Y"), never
  replayed under the new rules;
* else the game is replayed from its seed and options, entry by entry, as
  the rules service played it (resignations, timeouts, takeovers, reclaims
  and pauses through :class:`services.match.resignation.ResignableState`,
  with the archived clock settings, resignation rule and entry times): every
  stored entry must be accepted by the same seat, cause exactly the stored
  events and leave exactly the stored active seats, and the final state must
  be over with exactly the stored result (forfeits, timeouts and takeovers
  included). The first difference is
  a ``mismatch`` naming the version; otherwise ``ok``.

The command shows a progress bar (rich) and a summary, and exits 1 if any
game mismatched (0 otherwise; 2 for an unknown title).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import time
from collections.abc import Iterable

from services.archive.store import ArchiveStore, GameRecord, RawEntry
from services.kernel.engine import IllegalAction, InvalidOptions, canonical_json
from services.kernel.registry import UnknownTitle
from services.match.resignation import entry_action, policy_of_meta, replay_state
from services.rules.titles import TITLE_MODULES, get_game

OK, MISMATCH, NOT_REPLAYED = "ok", "mismatch", "not_replayed"


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome for one game: ``status`` is ``ok``, ``mismatch`` or
    ``not_replayed``; ``detail`` says why (empty when ok)."""

    game_id: str
    title: str
    status: str
    detail: str = ""


@functools.cache
def _parser(title: str):
    """The title's action parser, memoised on the action's JSON text: actions
    are immutable values and games repeat many of them (passes, bids, ...)."""
    game = get_game(title)

    @functools.lru_cache(maxsize=65_536)
    def parse(text: str):
        return entry_action(game, json.loads(text))

    return parse


@functools.lru_cache(maxsize=4096)
def _active_text(active: tuple[int, ...]) -> str:
    return json.dumps(list(active))  # as the archive stores it


def check_game(r: GameRecord, entries: Iterable[RawEntry]) -> Verdict:
    """Replay one archived game with its title's engine (see the module docstring).

    Args:
        r: the game's record; entries: its actions in version order, as
            :meth:`services.archive.store.ArchiveStore.batches` reads them.
    """
    try:
        game = get_game(r.title)
    except UnknownTitle as exc:
        return Verdict(r.game_id, r.title, NOT_REPLAYED, f"no engine for this title: {exc}")
    if r.rules_version != game.rules_version:
        return Verdict(
            r.game_id,
            r.title,
            NOT_REPLAYED,
            f"stored under rules version {r.rules_version}, engine is {game.rules_version}: "
            "not replayed",
        )

    def mismatch(detail: str) -> Verdict:
        return Verdict(r.game_id, r.title, MISMATCH, detail)

    meta = r.meta()
    try:
        state = replay_state(game, meta, policy_of_meta(r.title, meta))
    except InvalidOptions as exc:
        return mismatch(f"the engine refuses the stored options: {exc}")
    except ValueError as exc:  # archived clock settings or resignation rule that do not parse
        return mismatch(f"the stored clock or resignation settings are refused: {exc}")
    parse = _parser(r.title)
    for version, seat, action, stored_events, stored_active, at_ms in entries:
        if version != state.version + 1:
            return mismatch(f"entry {version} follows version {state.version}")
        try:
            events = state.apply(seat, parse(action), at_ms=at_ms or None)
        except IllegalAction as exc:
            return mismatch(f"entry {version} is refused: {exc.code}: {exc.reason}")
        except ValueError:
            return mismatch(f"entry {version}: the stored action is not JSON")
        if canonical_json(events) != stored_events:
            return mismatch(f"entry {version}: the engine's events differ from the stored")
        active = _active_text(tuple(state.active_seats()))
        if active != stored_active:
            return mismatch(f"entry {version}: active seats {active}, stored {stored_active}")
    if not state.is_terminal():
        return mismatch(f"the game is not over after its {state.version} archived actions")
    result = state.result_json()
    if canonical_json(result) != canonical_json(r.result):
        return mismatch(f"result {canonical_json(result)}, stored {canonical_json(r.result)}")
    return Verdict(r.game_id, r.title, OK)


async def verify(store: ArchiveStore, title: str | None, limit: int | None, on_verdict) -> None:
    """Check every archived game (of ``title``, at most ``limit``) in game id
    order, calling ``on_verdict(verdict)`` for each. The next batch is read
    from the database while the current one replays."""
    batches = store.batches(title, limit)
    pending = asyncio.ensure_future(anext(batches, None))
    while True:
        batch = await pending
        if batch is None:
            return
        pending = asyncio.ensure_future(anext(batches, None))
        verdicts = await asyncio.to_thread(lambda b=batch: [check_game(r, e) for r, e in b])
        for v in verdicts:
            on_verdict(v)


def cmd_verify(args: argparse.Namespace) -> int:
    """``roundhouse archive verify [--title T] [--limit N]`` (the store named by
    ``ROUNDHOUSE_DATABASE_URL``)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from services.platform.db import create_engine, database_url

    console = Console()
    if args.title and args.title not in TITLE_MODULES:
        console.print(f"[red]unknown title {args.title!r}; known: {', '.join(TITLE_MODULES)}[/red]")
        return 2
    if args.limit is not None and args.limit < 0:
        console.print("[red]--limit must be 0 or more[/red]")
        return 2
    counts = {OK: 0, MISMATCH: 0, NOT_REPLAYED: 0}
    problems: list[Verdict] = []

    async def run() -> float:
        engine = create_engine(database_url())
        try:
            store = ArchiveStore(engine)
            total = await store.count(args.title or None)
            if args.limit is not None:
                total = min(total, args.limit)
            with Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=False,
            ) as progress:
                task = progress.add_task("replaying archived games", total=total)

                def record(v: Verdict) -> None:
                    counts[v.status] += 1
                    if v.status != OK:
                        problems.append(v)
                    progress.advance(task)

                started = time.perf_counter()
                await verify(store, args.title or None, args.limit, record)
                return time.perf_counter() - started
        finally:
            await engine.dispose()

    seconds = asyncio.run(run())
    for v in problems:
        colour = "red" if v.status == MISMATCH else "yellow"
        console.print(
            f"[{colour}]{v.status}[/{colour}] {escape(f'{v.title} {v.game_id}: {v.detail}')}",
            soft_wrap=True,
        )
    games = sum(counts.values())
    summary = Table(title="archive verify")
    for column in ("games", OK, MISMATCH, NOT_REPLAYED, "games/s"):
        summary.add_column(column)
    rate = games / seconds if seconds > 0 else 0.0
    summary.add_row(
        str(games),
        str(counts[OK]),
        str(counts[MISMATCH]),
        str(counts[NOT_REPLAYED]),
        f"{rate:,.0f}",
    )
    console.print(summary)
    return 1 if counts[MISMATCH] else 0


def register(sub) -> None:
    """Add ``archive verify`` to the ``roundhouse`` command's subparsers."""
    archive = sub.add_parser("archive", help="the archive of finished games")
    actions = archive.add_subparsers(dest="archive_command", required=True)
    verify_cmd = actions.add_parser(
        "verify", help="replay archived games with the engines and report mismatches"
    )
    verify_cmd.add_argument("--title", default="", help="only games of this title")
    verify_cmd.add_argument("--limit", type=int, default=None, help="at most this many games")
    verify_cmd.set_defaults(func=cmd_verify)
