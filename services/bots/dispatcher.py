"""The bot dispatcher: reads the lifecycle stream through its consumer group
and enqueues one Celery task per bot turn.

* For each ``game_created``, ``turn`` or ``game_rewound`` (the stream lost
  moves: the game is back at ``version``) event it enqueues ``play_turn`` for
  every active seat that a hosted policy plays; a ``bots_recorded`` event (a
  game started before creation records named their bots got them,
  :mod:`services.lobby.backfill`) counts as a ``turn`` at the game's current
  version. It learns those seats from the
  game's own records, never from the lobby's: the creation record's ``bots``
  (seat -> policy, written by the rules service from ``CreateGame``'s
  ``bot_policies``) and the seats the event's ``takeover`` names (taken over by
  a bot after a timeout or a resignation; ``services/clocks``). Delivery,
  acknowledgement and recovery of a crashed dispatcher's entries are
  :func:`services.platform.consumer.consume`'s job. A re-delivered event
  enqueues the turn again, which is harmless: a task for a turn that was
  already played finds the version moved on, and a twin of a task in flight
  submits with the same idempotency key, so no seat moves twice.
* The dispatcher keeps its own index of the unfinished games with bot seats
  (``P:bots:games``, game id -> JSON ``{"title", "bots"}``), written from those
  events and dropped at ``game_finished``.
* A sweeper (every ``sweep_every_s``) looks at the games of that index: a game
  whose version has not moved for ``stall_s`` while a bot is to act (a task
  lost with a crashed worker, or given up after its retries) gets the turns
  of the bots that hold the move enqueued again, never those of bots that
  wait on a player. So a bot can never stall a game for good. Before the
  first move the active seats come from the game's creation record (the
  engine's starting state), since no log entry names them yet.
* Faster, every ``dead_turn_check_s``: a bot task whose heartbeat expired
  (its worker died mid-turn) has its turn enqueued again
  (:mod:`services.bots.heartbeat`), and so has a task that no worker started
  ``bot_pickup_s`` after it was sent while the queue was empty or a later task
  had started (lost in the broker, e.g. Redis refused its bookkeeping for
  lack of memory): :meth:`Dispatcher.resume_lost_tasks`.
* With several dispatcher replicas, the sweep and the dead-turn check look at
  shared state (the index, every heartbeat), so only the replica that holds the
  ``dispatcher-sweeps`` lease runs them (:class:`services.platform.lease.Lease`,
  ``leader_lease_s``; another replica takes over within about 1.3 times that when
  it dies). Running them twice would be harmless (a dead turn is claimed by one
  ``HDEL``, a turn enqueued twice moves once), only wasted. The lost-task check
  follows the tasks this replica sent, so every replica runs it.

Run: ``python -m services.bots.dispatcher``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid

import redis.asyncio as aioredis
from celery import Celery
from prometheus_client import Counter

from services.bots import heartbeat
from services.bots.celery_app import app as celery_app
from services.bots.celery_app import bot_queue, is_amqp
from services.platform.consumer import consume
from services.platform.gamelog import GameLog
from services.platform.lease import Lease
from services.platform.logging import configure_logging, get_logger
from services.platform.settings import BotSettings, BrokerNotSet, get_settings
from services.platform.supervise import Supervisor
from services.rules.titles import get_game

log = get_logger("dispatcher")

LINGER_MS = 10
"""The lifecycle consumer's wait after a batch (``services.platform.consumer``): short, since
a bot's turn may wait for it (rarely in fact: the worker's answer to the turn it was just
given takes longer than this to come back as the next entry)."""
ENQUEUED = Counter("roundhouse_bot_turns_enqueued_total", "Bot turns enqueued", ["title", "source"])


class Dispatcher:
    """Turns lifecycle events (and stalled games) into bot tasks.

    Args:
        settings: key prefix and consumer group and name.
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        celery: the Celery app tasks are sent with.
        stall_s: how long a bot turn may stay unplayed before the sweeper
            enqueues it again.
    """

    def __init__(
        self,
        settings: BotSettings,
        client: aioredis.Redis,
        celery: Celery = celery_app,
        stall_s: float = 60.0,
        sweep_every_s: float = 10.0,
    ) -> None:
        self.r = client
        self.celery = celery
        self.games_key = f"{settings.key_prefix}:bots:games"
        self.gamelog = GameLog.for_settings(client, settings)
        self.group = settings.dispatcher_group
        self.consumer = f"{settings.consumer_name}-dispatcher"
        self.queue = bot_queue(settings.key_prefix)
        self.stall_s = stall_s
        self.prefix = settings.key_prefix
        self.dead_turn_check_s = settings.dead_turn_check_s
        self.sweep_every_s = sweep_every_s
        self.pickup_s = settings.bot_pickup_s
        # the broker's queue is a list in self.r only with the embedded Redis broker
        self._queue_in_redis = not settings.broker_url or (
            not is_amqp(settings.broker_url) and settings.broker_url == settings.redis_url
        )
        self._sent: dict[str, tuple[float, list]] = {}  # task id -> (sent at, args); until started
        self._last_started_at = float("-inf")  # when the latest task seen started was sent
        self._seen: dict[str, tuple[int, float]] = {}  # game id -> (version, first seen)
        self._first_active: dict[str, tuple[int, ...]] = {}  # game id -> active at version 0
        self._hosted: dict[str, dict[int, str]] = {}  # game id -> its creation record's bots
        self.lease = Lease(
            client, settings.key_prefix, "dispatcher-sweeps", settings.leader_lease_s
        )
        self.sweeps = 0  # sweeps run by this replica

    def _enqueue(
        self, title: str, game_id: str, seat: int, version: int, policy: str, source: str
    ) -> None:
        args = [title, game_id, seat, version, policy]
        task_id = uuid.uuid4().hex
        self.celery.send_task(heartbeat.TASK_NAME, args=args, queue=self.queue, task_id=task_id)
        self._sent[task_id] = (time.monotonic(), args)
        ENQUEUED.labels(title, source).inc()

    async def hosted_bots(self, game_id: str) -> dict[int, str]:
        """Seat -> policy of the seats hosted bots play from the start: the game's creation
        record's ``bots`` (cached: the record never changes; ``{}`` for a game without one,
        e.g. an imported game)."""
        bots = self._hosted.get(game_id)
        if bots is None:
            meta = await self.gamelog.meta(game_id)
            if meta is None:
                return {}
            bots = self._hosted[game_id] = {
                int(seat): policy for seat, policy in meta.get("bots", {}).items()
            }
        return dict(bots)

    async def handle(self, fields: dict[str, str]) -> int:
        """Enqueue the bot turns one lifecycle event calls for; returns how many."""
        kind = fields.get("type")
        if kind == "game_finished":
            await self.r.hdel(self.games_key, fields["game_id"])
            self._hosted.pop(fields["game_id"], None)
            return 0
        if kind == "bots_recorded":
            fields = await self._recorded(fields)
            if not fields:
                return 0
        elif kind not in ("game_created", "turn", "game_rewound"):
            return 0
        bots = await self.hosted_bots(fields["game_id"])
        # seats a bot took over after a timeout or a resignation: the rules service names
        # them on every event
        for seat, policy in json.loads(fields.get("takeover", "{}")).items():
            bots.setdefault(int(seat), policy)
        if not bots:  # nothing for the platform to play (e.g. an imported game)
            return 0
        record = {"title": fields["title"], "bots": {str(k): v for k, v in sorted(bots.items())}}
        await self.r.hset(self.games_key, fields["game_id"], json.dumps(record, sort_keys=True))
        seats = [s for s in json.loads(fields["active"]) if s in bots]
        for seat in seats:
            self._enqueue(
                fields["title"],
                fields["game_id"],
                seat,
                int(fields["version"]),
                bots[seat],
                "event",
            )
        return len(seats)

    async def sweep(self, now: float | None = None) -> int:
        """Enqueue again the bot turns of running games stalled for ``stall_s``;
        returns how many."""
        now = time.monotonic() if now is None else now
        sent = 0
        running = set()
        games = await self.r.hgetall(self.games_key)
        for game_id, raw in sorted(games.items()):
            record = json.loads(raw)
            running.add(game_id)
            last = await self.gamelog.last_entry(game_id)
            version = last.version if last else 0
            seen_version, since = self._seen.get(game_id, (-1, now))
            if seen_version != version:
                self._seen[game_id] = (version, now)
                continue
            if last and last.finished:  # its game_finished was lost or is on the way
                await self.r.hdel(self.games_key, game_id)
                continue
            if now - since < self.stall_s:
                continue
            bots = {int(seat): policy for seat, policy in record["bots"].items()}
            active = last.active if last else await self._active_at_start(game_id)
            if last is None and not active and await self.gamelog.meta(game_id) is None:
                await self.r.hdel(self.games_key, game_id)  # the game is gone from Redis
                continue
            stalled = [
                (record["title"], game_id, seat, version, bots[seat])
                for seat in active
                if seat in bots
            ]
            sent += self._enqueue_again(stalled, "bot turn stalled; enqueued again", "sweep")
            self._seen[game_id] = (version, now)
        for game_id in set(self._seen) - running:
            del self._seen[game_id]
            self._first_active.pop(game_id, None)
        return sent

    async def resume_dead_turns(self) -> int:
        """Enqueue again the turns of bot tasks whose heartbeat expired (their
        worker died mid-turn; :mod:`services.bots.heartbeat`); returns how many."""
        turns = await heartbeat.dead_turns(self.r, self.prefix)
        return self._enqueue_again(turns, "bot task died mid-turn; enqueued again", "dead_worker")

    async def resume_lost_tasks(self, now: float | None = None) -> int:
        """Enqueue again the turns of tasks sent by this dispatcher that no
        worker started within ``bot_pickup_s`` although the queue is empty or
        a task sent after them started (the queue is FIFO): they were lost in
        the broker. A task is followed until a worker starts it (then its
        heartbeat covers it) or for ``stall_s`` (then the sweeper does); a turn
        the game has moved past is dropped. Returns how many were sent again."""
        now = time.monotonic() if now is None else now
        if not self._sent:
            return 0
        for task_id in await heartbeat.seen_tasks(self.r, self.prefix, list(self._sent)):
            sent_at, _ = self._sent.pop(task_id)
            self._last_started_at = max(self._last_started_at, sent_at)
        waiting = [
            (task_id, sent_at, args)
            for task_id, (sent_at, args) in self._sent.items()
            if now - sent_at >= self.pickup_s
        ]
        if not waiting:
            return 0
        queue_empty = self._queue_in_redis and not await self.r.llen(self.queue)
        lost = []
        for task_id, sent_at, args in waiting:
            if now - sent_at >= self.stall_s:
                del self._sent[task_id]
                continue
            if not queue_empty and sent_at >= self._last_started_at:
                continue  # it may still wait its turn in the queue
            del self._sent[task_id]
            _, game_id, _, version, _ = args
            last = await self.gamelog.last_entry(game_id)
            if (last.version if last else 0) != version or (last and last.finished):
                continue
            lost.append(args)
        return self._enqueue_again(
            lost, "bot task lost before a worker started it; enqueued again", "lost"
        )

    def _enqueue_again(self, turns, message: str, source: str) -> int:
        """Enqueue again each turn of ``turns`` (``(title, game_id, seat, version, policy)``),
        logging ``message`` for each; ``source`` labels the metric. Returns how many."""
        sent = 0
        for title, game_id, seat, version, policy in turns:
            log.warning(message, game_id=game_id, seat=seat, version=version)
            self._enqueue(title, game_id, seat, version, policy, source)
            sent += 1
        return sent

    async def _recorded(self, fields: dict[str, str]) -> dict[str, str]:
        """A ``bots_recorded`` event (the lobby gave a game started before creation records
        named their bots its ``bots``, :mod:`services.lobby.backfill`) as the ``turn`` event
        of the game where it stands: its version and active seats from the game's stream
        (before the first move: from the creation record). ``{}`` for a finished game."""
        game_id = fields["game_id"]
        self._hosted.pop(game_id, None)  # read the record again: it has its bots now
        last = await self.gamelog.last_entry(game_id)
        if last is not None and last.finished:
            return {}
        version = last.version if last else 0
        active = last.active if last else await self._active_at_start(game_id)
        return {**fields, "version": str(version), "active": json.dumps(list(active))}

    async def _active_at_start(self, game_id: str) -> tuple[int, ...]:
        """The seats to act at version 0: the engine's starting state built
        from the game's creation record (cached; ``()`` without a record)."""
        active = self._first_active.get(game_id)
        if active is None:
            meta = await self.gamelog.meta(game_id)
            if meta is None:
                return ()
            game = get_game(meta["title"])

            def start() -> tuple[int, ...]:
                state = game.new_state(meta["num_players"], meta["seed"], meta["options"])
                return tuple(state.active_seats())

            active = self._first_active[game_id] = await asyncio.to_thread(start)
        return active

    async def run(self, stop: asyncio.Event) -> None:
        """Consume lifecycle events and sweep until ``stop`` is set. Both loops
        are supervised (:class:`services.platform.supervise.Supervisor`): a death
        is logged with its traceback, counted in the metrics and restarted."""
        log.info("dispatching", group=self.group, consumer=self.consumer, queue=self.queue)

        async def sweeper() -> None:
            while not stop.is_set():
                try:
                    if self.lease.held:
                        self.sweeps += 1
                        await self.sweep()
                except Exception:  # noqa: BLE001 - the next sweep tries again
                    log.exception("sweep failed")
                try:
                    await asyncio.wait_for(stop.wait(), self.sweep_every_s)
                except TimeoutError:
                    pass

        async def resurrector() -> None:
            while not stop.is_set():
                try:
                    if self.lease.held:
                        await self.resume_dead_turns()
                    await self.resume_lost_tasks()
                except Exception:  # noqa: BLE001 - the next check tries again
                    log.exception("dead turn check failed")
                try:
                    await asyncio.wait_for(stop.wait(), self.dead_turn_check_s)
                except TimeoutError:
                    pass

        background = Supervisor("dispatcher")
        background.start("dispatcher-lease", lambda: self.lease.keep(stop))
        background.start("dispatcher-sweeper", sweeper)
        background.start("dispatcher-dead-turns", resurrector)
        background.start(
            "dispatcher-events",
            lambda: consume(
                self.r,
                self.gamelog.lifecycle_keys,
                self.group,
                self.consumer,
                self.handle,
                stop=stop,
                linger_ms=LINGER_MS,
            ),
        )
        try:
            await stop.wait()
            await background.wait("dispatcher-events", 5)
            await background.wait("dispatcher-lease", 5)
        finally:
            await background.stop()
        log.info("dispatcher stopped")


async def serve() -> None:
    from services.platform.metrics import MetricsPortInUse, serve_metrics
    from services.platform.server import redis_client

    settings = get_settings(BotSettings)
    configure_logging(settings.log_level, settings.log_format)
    try:
        settings.check_broker()
    except BrokerNotSet as exc:
        log.error("cannot start", server="dispatcher", error=str(exc))
        raise SystemExit(2) from None
    if settings.metrics_port:
        try:
            serve_metrics(settings.metrics_port, settings.bind_host)
        except MetricsPortInUse as exc:
            log.error("cannot start", server="dispatcher", error=str(exc))
            raise SystemExit(2) from None
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await Dispatcher(settings, client, stall_s=settings.bot_stall_s).run(stop)
    finally:
        await client.aclose()


def main() -> None:
    from services.platform.server import run_service

    run_service(serve())


if __name__ == "__main__":
    main()
