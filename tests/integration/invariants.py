"""What must hold of every game after a load or fault run (issue 17, item 4): the
checks of ``benchmarks/bench_load_faults.py`` and ``tests/integration/test_load_faults.py``,
one function for both (:func:`check_games`).

Per game (a lobby table), each failure is a :class:`Violation` with a reason code:

* ``not_finished``: the lobby does not have the table finished (its status, the
  stream's version and the seats to act are in the detail);
* ``gap``: the game's stream is not versions 1..N, each entry with the id ``<v>-0``
  (a gap, a repeat, or an entry after the one that finished the game);
* ``keyless_entry``: a move in the stream that no idempotency key answers for (every
  bot and every scripted person sends a key: a move applied without one, or applied
  twice, the second answer overwriting the first's, shows here);
* ``key_version``: an idempotency key answered with a version the stream lacks, or
  played by another seat, or two keys answered with one version, or a key that names
  the version it was sent at (a bot turn ``bot:<game>:<version>:<seat>``, a scripted
  person's ``p:<table>:<version>``) applied at another version (a turn applied twice
  or late);
* ``acknowledged``: a move acknowledged to a client (HTTP 200, its answer's version)
  that the stream does not hold as sent (lost, or another action at that version);
* ``replay``: the stream replayed with the engine does not end, or ends with other
  scores, ranks or end reason than the lobby's result;
* ``archive``: the game is not archived, or its archived entries (version, seat,
  action, events, active seats) or result differ from the stream's.

The game keys are named by the :class:`~services.platform.gamelog.GameLog` given (the
same names the services use, on one Redis or a cluster).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from collections.abc import Mapping, Sequence

import grpc

from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.archive.store import ArchiveStore
from services.platform.gamelog import GameLog, LogEntry
from services.rules.titles import get_game

_VERSIONED_KEYS = (
    re.compile(r"^(?P<seat>\d+):bot:.+:(?P<version>\d+):(?P=seat)$"),
    re.compile(r"^(?P<seat>\d+):p:[^:]+:(?P<version>\d+)$"),
)
"""Idempotency answers' keys (``<seat>:<client key>``) whose client key names the version
it was sent at: a bot turn ``bot:<game id>:<version>:<seat>``
(:func:`services.bots.tasks.idempotency_key`) and a scripted person's
``p:<table id>:<version>`` (:func:`person_key`)."""


def stack_game_log(client, stack) -> GameLog:
    """The game log of ``stack`` (a :class:`~services.cli.launcher.Stack`) through
    ``client``, with the key names its processes use: its key prefix, and where the stack
    splits the lifecycle stream into shards (``stack.shards``, the Redis Cluster support of
    issue 17, item 1) the same number of shards, which name the game keys' hash tags."""
    return GameLog(client, stack.prefix, shards=stack.shards)


def person_key(table_id: str, version: int) -> str:
    """The idempotency key a scripted person sends with its move at ``version``."""
    return f"p:{table_id}:{version}"


@dataclasses.dataclass(frozen=True)
class Violation:
    """One failed check of one game: ``code`` (module docstring) and what was seen."""

    table_id: str
    game_id: str
    code: str
    detail: str

    def __str__(self) -> str:
        return f"{self.code} {self.table_id} ({self.game_id}): {self.detail}"


async def check_games(
    tables: Sequence[str],
    lobby: lobby_pb2_grpc.LobbyStub,
    metadata: Sequence[tuple[str, str]],
    gamelog: GameLog,
    archive: ArchiveStore,
    acknowledged: Mapping[str, Mapping[str, tuple[int, dict]]] | None = None,
    archive_wait_s: float = 60.0,
    concurrency: int = 8,
) -> list[Violation]:
    """Check every game of ``tables`` (lobby table ids); the violations found, in the
    order of ``tables`` (empty: every check held).

    Args:
        lobby: an asyncio (``grpc.aio``) lobby stub; ``metadata`` its credentials.
        gamelog: the game log of the stack (its Redis client and key names).
        archive: the stack's archive.
        acknowledged: per table, the moves acknowledged to scripted clients: their
            idempotency key (as sent) -> (the version answered, the action sent).
        archive_wait_s: how long to wait for a finished game's archive (the archivers
            consume the lifecycle stream with some delay).
        concurrency: games checked at once.
    """
    limit = asyncio.Semaphore(concurrency)
    acks = acknowledged or {}

    async def one(table_id: str) -> list[Violation]:
        async with limit:
            return await check_game(
                table_id, lobby, metadata, gamelog, archive, acks.get(table_id, {}), archive_wait_s
            )

    found = await asyncio.gather(*(one(t) for t in tables))
    return [v for game in found for v in game]


async def check_game(
    table_id: str,
    lobby: lobby_pb2_grpc.LobbyStub,
    metadata: Sequence[tuple[str, str]],
    gamelog: GameLog,
    archive: ArchiveStore,
    acknowledged: Mapping[str, tuple[int, dict]],
    archive_wait_s: float = 60.0,
) -> list[Violation]:
    """The violations of one game (:func:`check_games`)."""
    table = await lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id), metadata=metadata)
    game_id = table.game_id
    out: list[Violation] = []

    def fail(code: str, detail: str) -> None:
        out.append(Violation(table_id, game_id, code, detail))

    raw = await gamelog.r.xrange(gamelog.log_key(game_id))
    entries = [LogEntry.from_fields(fields) for _, fields in raw]
    if table.status != lobby_pb2.TABLE_STATUS_FINISHED:
        last = entries[-1] if entries else None
        fail(
            "not_finished",
            f"status {lobby_pb2.TableStatus.Name(table.status)}, stream at version "
            f"{len(entries)}, to act: {list(last.active) if last else '?'}",
        )
        return out
    _check_stream(raw, entries, fail)
    by_version = {e.version: e for e in entries}
    _check_keys(await gamelog.r.hgetall(gamelog.idem_key(game_id)), by_version, fail)
    for key, (version, action) in acknowledged.items():
        entry = by_version.get(version)
        if entry is None or json.loads(entry.action) != action:
            fail(
                "acknowledged",
                f"key {key!r} was answered version {version}; the stream has "
                f"{entry.action if entry else 'no entry'} there, the client sent {action}",
            )
    result = await _check_replay(table, entries, gamelog, lobby, metadata, fail)
    await _check_archive(game_id, entries, result, archive, archive_wait_s, fail)
    return out


def _check_stream(raw: list, entries: list[LogEntry], fail) -> None:
    ids = [sid for sid, _ in raw]
    want = [f"{v}-0" for v in range(1, len(raw) + 1)]
    if ids != want or [e.version for e in entries] != list(range(1, len(entries) + 1)):
        first = next((i for i, (a, b) in enumerate(zip(ids, want, strict=True)) if a != b), None)
        fail(
            "gap", f"{len(ids)} entries; first wrong id {ids[first] if first is not None else '?'}"
        )
    ends = [e.version for e in entries if e.finished]
    if ends != [len(entries)]:
        fail("gap", f"entries marked finished at versions {ends[:5]} of {len(entries)}")


def _check_keys(answers: dict[str, str], by_version: dict[int, LogEntry], fail) -> None:
    holder: dict[int, str] = {}
    for key, answer in sorted(answers.items()):
        version = int(json.loads(answer)["version"])
        seat = int(key.split(":", 1)[0])
        entry = by_version.get(version)
        if entry is None:
            fail("key_version", f"key {key!r} answered version {version}, not in the stream")
            continue
        if entry.seat != seat:
            fail("key_version", f"key {key!r} answered version {version}, played by {entry.seat}")
        if version in holder:
            fail("key_version", f"keys {holder[version]!r} and {key!r} both answered {version}")
        holder[version] = key
        named = next((m for p in _VERSIONED_KEYS if (m := p.match(key))), None)
        if named and int(named["version"]) + 1 != version:
            fail(
                "key_version",
                f"key {key!r} sent at version {named['version']} applied as {version}",
            )
    for version, entry in by_version.items():
        if version not in holder and entry.seat >= 0:
            fail("keyless_entry", f"version {version} (seat {entry.seat}: {entry.action[:80]})")


async def _check_replay(table, entries, gamelog, lobby, metadata, fail) -> dict | None:
    """Replay the stream; the replayed result (``scores``, ``ranks``, ``end_reason``)."""
    meta = await gamelog.meta(table.game_id)
    if meta is None:
        fail("replay", "the game's creation record is gone")
        return None
    try:
        state = get_game(table.title).replay(
            meta["num_players"],
            meta["seed"],
            meta["options"],
            [(e.seat, json.loads(e.action)) for e in entries],
        )
    except Exception as exc:  # noqa: BLE001 - a refused entry is the finding
        fail("replay", f"the engine refuses the stream: {exc!r}"[:300])
        return None
    if not state.is_terminal():
        fail("replay", f"the replayed game does not end (version {state.version})")
        return None
    expected = state.result()
    got = await lobby.GetTableResult(
        lobby_pb2.GetTableRequest(table_id=table.table_id), metadata=metadata
    )
    by_seat = {s.seat: s for s in got.standings}
    seats = range(table.num_players)
    scores = [by_seat[i].score if i in by_seat else None for i in seats]
    ranks = [by_seat[i].rank if i in by_seat else None for i in seats]
    if (
        scores != [int(s) for s in expected.scores]
        or ranks != list(expected.ranks)
        or got.end_reason != expected.end_reason
    ):
        fail(
            "replay",
            f"lobby {scores} {ranks} {got.end_reason!r}, replay {list(expected.scores)} "
            f"{list(expected.ranks)} {expected.end_reason!r}",
        )
    return {"scores": list(expected.scores), "ranks": list(expected.ranks)}


async def _check_archive(game_id, entries, result, archive, wait_s, fail) -> None:
    deadline = time.monotonic() + wait_s
    while (stored := await archive.load(game_id)) is None and time.monotonic() < deadline:
        await asyncio.sleep(1.0)
    if stored is None:
        fail("archive", f"not archived within {wait_s:.0f} s of the check")
        return

    def rows(es: list[LogEntry]) -> list[tuple]:
        return [
            (e.version, e.seat, json.loads(e.action), json.loads(e.events), tuple(e.active))
            for e in es
        ]

    mine, theirs = rows(entries), rows(stored.entries)
    if mine != theirs:
        first = next((a[0] for a, b in zip(mine, theirs, strict=False) if a != b), None)
        fail(
            "archive",
            f"archived {len(theirs)} entries, the stream {len(mine)}; first difference at "
            f"version {first if first is not None else min(len(mine), len(theirs)) + 1}",
        )
    if result is not None:
        kept = stored.record.result
        if [int(s) for s in kept["scores"]] != [int(s) for s in result["scores"]] or list(
            kept["ranks"]
        ) != list(result["ranks"]):
            fail("archive", f"archived result {kept}, replay {result}")


async def wait_finished(
    tables: Sequence[str],
    lobby: lobby_pb2_grpc.LobbyStub,
    metadata: Sequence[tuple[str, str]],
    timeout_s: float,
) -> list[str]:
    """Wait until the lobby has every table finished or ``timeout_s`` passed; the
    tables still not finished (the lobby records a result shortly after the game's
    last move). UNAVAILABLE answers (a lobby replica restarting) are waited out."""
    left = list(tables)
    deadline = time.monotonic() + timeout_s
    while left and time.monotonic() < deadline:
        still = []
        for table_id in left:
            try:
                table = await lobby.GetTable(
                    lobby_pb2.GetTableRequest(table_id=table_id), metadata=metadata
                )
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                still.append(table_id)
                continue
            if table.status != lobby_pb2.TABLE_STATUS_FINISHED:
                still.append(table_id)
        left = still
        if left:
            await asyncio.sleep(1.0)
    return left
