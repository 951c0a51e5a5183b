"""``roundhouse hotstore migrate``: move the hot store's keys to the layout this version
uses (``docs/deploy.md``, "Upgrading to the Redis Cluster layout").

Run it once, with every Roundhouse process stopped (an older process would go on writing
the old names). It finds keys of the old layouts and moves each to its new name:

* a game's keys ``P:game:G:{meta,log,idem,moves}`` (or ``P:game:{T}:G:...`` under another
  ``lifecycle_shards``) -> ``P:game:{T}:G:...`` with the tag of the game's shard now;
* the lifecycle stream ``P:lifecycle`` (or the shards of another shard count): the entries
  some consumer group has not yet acknowledged (from the oldest a group still needs) are
  appended, in order, to the shard of their game, and every group of the old stream is
  created on every shard (from the start, so each reads what was copied; the handlers are
  idempotent, so a group that had already handled some of them handles them again harmlessly);
  the old stream is then deleted (its dead letters ``P:lifecycle:dead`` stay where they are);
* account events ``P:events:A`` -> ``P:events:{A}`` (entry ids kept, so readers resume where
  they were) and their dedupe markers ``P:events:seen:A:K`` -> ``P:events:{A}:seen:K``;
* the clock keeper's ``P:clocks:*`` -> ``P:{clocks}:*``; the running bot turns
  ``P:bot-turns`` -> ``P:{bot-turns}`` (the heartbeat keys are not moved: stopped workers
  have none alive, and the dispatcher enqueues those turns again at once).

A key is moved with ``DUMP``/``RESTORE`` (its time to live kept), so ``--from`` may name
another server: to move from one Redis to a new cluster, run it with the cluster's settings
(``ROUNDHOUSE_REDIS_CLUSTER=1``, ``ROUNDHOUSE_REDIS_URL`` a node) and ``--from`` the old
Redis; the old server is then left as it was. On one server the old key is deleted once its
copy is written. A new name that already exists is left alone and reported as a conflict.
Running it again moves nothing.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator

import redis

from services.platform.hotstore import KeySpace, turns_key

CONSUMER_IDLE_S = 5.0
"""A consumer of the old lifecycle stream that read less than this long ago means a process
of the old version still runs: the migration refuses (``--force`` to go on)."""
GAME_PARTS = ("meta", "log", "idem", "moves")
CLOCK_KEYS = ("deadlines", "games", "inflight", "low")


class StillRunning(RuntimeError):
    """A consumer of the old lifecycle stream is active: stop every process first."""


@dataclasses.dataclass
class Report:
    """What a migration moved (or, with ``dry_run``, would move), by kind."""

    moved: Counter[str] = dataclasses.field(default_factory=Counter)
    entries_copied: int = 0
    conflicts: list[str] = dataclasses.field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{kind}: {n}" for kind, n in sorted(self.moved.items())]
        out.append(f"lifecycle entries copied to their shards: {self.entries_copied}")
        out += [f"conflict (new name exists, left alone): {key}" for key in self.conflicts]
        return out


def renames(
    source: redis.Redis | redis.RedisCluster, keys: KeySpace
) -> Iterator[tuple[str, str, str]]:
    """``(kind, old name, new name)`` of every key of ``source`` not in this layout."""
    p = keys.prefix
    for key in source.scan_iter(f"{p}:game:*", count=1000):
        rest = key[len(f"{p}:game:") :]
        if rest.startswith("{"):
            rest = rest.split("}:", 1)[1] if "}:" in rest else ""
        game_id, _, part = rest.rpartition(":")
        if game_id and part in GAME_PARTS and keys.game(game_id, part) != key:
            yield "game keys", key, keys.game(game_id, part)
    for key in source.scan_iter(f"{p}:events:*", count=1000):
        rest = key[len(f"{p}:events:") :]
        if "{" in rest or rest == "notify":
            continue
        if rest.startswith("seen:"):
            account, _, dedupe = rest[len("seen:") :].partition(":")
            yield "account event markers", key, f"{p}:events:{{{account}}}:seen:{dedupe}"
        elif ":" not in rest:
            yield "account event streams", key, f"{p}:events:{{{rest}}}"
    for name in CLOCK_KEYS:
        if source.exists(f"{p}:clocks:{name}"):
            yield "clock keeper keys", f"{p}:clocks:{name}", f"{p}:{{clocks}}:{name}"
    if source.exists(f"{p}:bot-turns"):
        yield "running bot turns", f"{p}:bot-turns", turns_key(p)


def old_lifecycle_streams(source: redis.Redis | redis.RedisCluster, keys: KeySpace) -> list[str]:
    """The lifecycle streams of ``source`` that are not this layout's shards."""
    mine = set(keys.lifecycle_streams)
    found = [f"{keys.prefix}:lifecycle"] if source.exists(f"{keys.prefix}:lifecycle") else []
    for key in source.scan_iter(f"{keys.prefix}:lifecycle:{{*}}", count=1000):
        if key not in mine and not key.endswith(":dead"):
            found.append(key)
    return found


def _needed_from(
    source: redis.Redis | redis.RedisCluster, stream: str, check_idle: bool = True
) -> tuple[str, list[str]]:
    """The first entry id some group of ``stream`` still needs, and the groups' names.

    Raises:
        StillRunning: ``check_idle`` and a consumer read the stream less than
            ``CONSUMER_IDLE_S`` ago.
    """
    groups = source.xinfo_groups(stream)
    if not groups:
        return "-", []
    starts = []
    for g in groups:
        for c in source.xinfo_consumers(stream, g["name"]) if check_idle else ():
            if c.get("inactive", c["idle"]) < CONSUMER_IDLE_S * 1000:
                raise StillRunning(
                    f"consumer {c['name']!r} of group {g['name']!r} read {stream} "
                    f"{c.get('inactive', c['idle'])} ms ago: stop every Roundhouse process first"
                )
        if g["pending"]:
            starts.append(source.xpending(stream, g["name"])["min"])
        ms, seq = (int(x) for x in g["last-delivered-id"].split("-"))
        starts.append(f"{ms}-{seq + 1}")
    first = min(starts, key=lambda i: tuple(int(x) for x in i.split("-")))
    return first, [g["name"] for g in groups]


def migrate(
    source: redis.Redis | redis.RedisCluster,
    target: redis.Redis | redis.RedisCluster,
    keys: KeySpace,
    *,
    same_store: bool,
    dry_run: bool = False,
    force: bool = False,
) -> Report:
    """Move ``source``'s keys of old layouts to ``keys``' layout in ``target`` (the module
    docstring). ``same_store``: source and target are one store (old keys are deleted once
    copied). Clients must decode responses.

    Raises:
        StillRunning: a process of the old version still reads the lifecycle stream
            (checked before anything is moved; ``force`` skips the check).
    """
    report = Report()
    streams = old_lifecycle_streams(source, keys)
    plans = {s: _needed_from(source, s, check_idle=not force) for s in streams}
    for kind, old, new in list(renames(source, keys)):
        if target.exists(new):
            report.conflicts.append(new)
            continue
        report.moved[kind] += 1
        if not dry_run:
            _move(source, target, old, new, same_store)
    for stream, (first, groups) in plans.items():
        report.moved["old lifecycle streams"] += 1
        for _entry_id, fields in _entries(source, stream, first):
            report.entries_copied += 1
            if not dry_run:
                shard = keys.lifecycle(fields["game_id"]) if "game_id" in fields else None
                target.xadd(shard or keys.lifecycle_streams[0], fields)
        if dry_run:
            continue
        for shard in keys.lifecycle_streams:
            for group in groups:
                try:
                    target.xgroup_create(shard, group, id="0", mkstream=True)
                except redis.ResponseError as exc:
                    if "BUSYGROUP" not in str(exc):
                        raise
        if same_store:
            source.delete(stream)
    return report


def _entries(source, stream: str, first: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The entries of ``stream`` from ``first`` on, in batches of 1,000."""
    start = first
    while True:
        batch = source.xrange(stream, min=start, max="+", count=1000)
        yield from batch
        if len(batch) < 1000:
            return
        ms, seq = (int(x) for x in batch[-1][0].split("-"))
        start = f"{ms}-{seq + 1}"


def _move(source, target, old: str, new: str, same_store: bool) -> None:
    """Copy ``old`` to ``new`` with its time to live; delete ``old`` on the same store."""
    dumped = source.dump(old)
    if dumped is None:  # expired meanwhile
        return
    ttl = source.pttl(old)
    target.restore(new, max(ttl, 0), dumped)
    if same_store:
        source.delete(old)


def cmd_migrate(args) -> int:
    """``roundhouse hotstore migrate [--from URL] [--dry-run] [--force]``: with the
    settings' store as the target (``ROUNDHOUSE_REDIS_URL``, ``ROUNDHOUSE_REDIS_CLUSTER``,
    ``ROUNDHOUSE_KEY_PREFIX``, ``ROUNDHOUSE_LIFECYCLE_SHARDS``)."""
    from services.platform.hotstore import sync_client
    from services.platform.settings import CommonSettings, get_settings

    settings = get_settings(CommonSettings)
    keys = KeySpace(settings.key_prefix, settings.lifecycle_shards)
    target = sync_client(settings.redis_url, cluster=settings.redis_cluster, decode_responses=True)
    same = not args.source or args.source == settings.redis_url
    source = target if same else sync_client(args.source, decode_responses=True)
    try:
        report = migrate(
            source, target, keys, same_store=same, dry_run=args.dry_run, force=args.force
        )
    except StillRunning as exc:
        print(f"refused: {exc}")  # noqa: T201 - the command's own output
        return 2
    finally:
        target.close()
        if not same:
            source.close()
    verb = "would move" if args.dry_run else "moved"
    print(f"{verb} (prefix {keys.prefix!r}, {keys.shards} lifecycle shards):")  # noqa: T201
    for line in report.lines():
        print(f"  {line}")  # noqa: T201
    return 1 if report.conflicts else 0


def register(sub) -> None:
    """Add ``hotstore migrate`` to the ``roundhouse`` command's subparsers."""
    hotstore = sub.add_parser("hotstore", help="the Redis hot store (game logs, streams)")
    actions = hotstore.add_subparsers(dest="hotstore_command", required=True)
    migrate_cmd = actions.add_parser(
        "migrate",
        help="move keys of an older layout to this version's (every process stopped first)",
    )
    migrate_cmd.add_argument(
        "--from",
        dest="source",
        default="",
        help="copy from this single Redis (e.g. the old server, when moving to a cluster); "
        "default: the settings' store itself",
    )
    migrate_cmd.add_argument("--dry-run", action="store_true", help="only say what would move")
    migrate_cmd.add_argument(
        "--force",
        action="store_true",
        help="go on although a consumer read the old lifecycle stream in the last 5 s",
    )
    migrate_cmd.set_defaults(func=cmd_migrate)
