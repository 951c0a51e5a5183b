"""Settings of the Roundhouse processes, from ``ROUNDHOUSE_*`` environment variables
(pydantic-settings): one class per service over a small common base, each with only the
fields its process reads. A field is declared once, in one class, so a variable has one
name, one default and one meaning in every process that reads it (the lists and defaults:
``docs/settings.md``).

* :class:`CommonSettings`: what every process reads: the Redis and its key space, the
  process (gRPC bind and bounds, metrics, shutdown, logging), the internal secret and
  where every service is reached.
* mixins shared by several services: :class:`StoreSettings` (the durable store and the
  token verifier: every service but the bots and the clock keeper),
  :class:`AccountEventsSettings` (the account event log),
  :class:`ResignationSettings` (what a resignation does).
* one class per service: :class:`LobbySettings`, :class:`GatewaySettings`,
  :class:`AccountsSettings`, :class:`ArchiveSettings`, :class:`BotSettings` (dispatcher and
  workers), :class:`KeeperSettings` (the clock keeper), :class:`TournamentsSettings`,
  :class:`RulesSettings`.
* :class:`Settings`: all of them, the whole deployment (the launcher, ``roundhouse up``,
  the Kubernetes manifests' check).

A process reads its class once: ``get_settings(LobbySettings)``. Variables of other
services are ignored (as any unknown ``ROUNDHOUSE_*`` variable always was); a keyword
argument that is no field of the class is refused (``pydantic.ValidationError``), so a
setting handed to the wrong service's class does not vanish unseen.

Examples::

    ROUNDHOUSE_REDIS_URL=redis://redis:6379/0
    ROUNDHOUSE_RULES_ADDRESSES='{"railbarons": "railbarons:50061"}'
"""

from __future__ import annotations

import ipaddress
import socket
from functools import cache
from typing import TypeVar

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.platform.hotstore import CLUSTER_LIFECYCLE_SHARDS, DEFAULT_LIFECYCLE_SHARDS, SLOTS

DEFAULT_RULES_PORTS = {"railbarons": 50061, "transsib": 50062, "e1894": 50063}


class CommonSettings(BaseSettings):
    """What every process reads. Field names map to ``ROUNDHOUSE_<NAME>`` variables.

    Raises (on construction):
        pydantic.ValidationError: a value out of range, ``key_prefix`` with braces, a
            keyword argument that is no field of the class.
    """

    model_config = SettingsConfigDict(env_prefix="ROUNDHOUSE_", extra="forbid")

    # the Redis: game logs, tables' hot records, the lifecycle stream
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0", description="Redis holding the game logs and tables"
    )
    redis_cluster: bool = Field(
        False,
        description="redis_url names one node of a Redis Cluster (the clients find the others "
        "and follow failovers); then broker_url must be set (Celery has no cluster transport)",
    )
    key_prefix: str = Field(
        "rh",
        description="prefix of every Redis key and stream (isolates deployments and tests; no "
        "braces: they would become the keys' hash tags)",
    )
    lifecycle_shards: int = Field(
        0,
        ge=0,
        le=SLOTS,
        description="streams the lifecycle stream is split into (each with its own hash tag, "
        "shared by the games it carries); every consumer group reads them all. 0 = the "
        f"default: {DEFAULT_LIFECYCLE_SHARDS} on one Redis, {CLUSTER_LIFECYCLE_SHARDS} on a "
        "cluster. Fixed for a deployment's life: changing it renames every game's keys "
        "(roundhouse hotstore migrate). On a cluster a multiple of the masters, so that they "
        "carry equal shares",
    )
    redis_wait_replicas: int = Field(
        0,
        ge=0,
        description="replicas a move (or a created game) must reach before the rules service "
        "acknowledges it (Redis WAIT); fewer within redis_wait_timeout_ms: UNAVAILABLE "
        "not_replicated, retried with the same idempotency key. 0 = acknowledge at once (a "
        "failover may then lose acknowledged moves)",
    )
    redis_wait_timeout_ms: int = Field(
        100, ge=1, description="how long WAIT waits for redis_wait_replicas (ms)"
    )
    lifecycle_maxlen: int = Field(
        1_000_000,
        description="approximate length the lifecycle stream is trimmed to; consumers that fall "
        "further behind lose events (size it to outlast the longest consumer outage)",
    )
    redis_max_connections: int = Field(
        64, description="Redis connections a process uses for calls (a bounded, blocking pool)"
    )

    # the process: its gRPC server, metrics, shutdown, consumer name, leases, logging
    bind_host: str = Field("127.0.0.1", description="interface the gRPC servers listen on")
    listen_port: int = Field(
        0,
        description="port this process's gRPC server listens on; 0 = the port of its own "
        "address setting (several replicas on one host each get their own port, and their "
        "clients name them all in one 'ipv4:host:port,host:port' address)",
    )
    metrics_port: int = Field(
        0, description="Prometheus /metrics port of this process; 0 = do not serve metrics"
    )
    grace_seconds: float = Field(5.0, description="graceful shutdown: time for in-flight calls")
    max_message_bytes: int = Field(
        4 * 1024 * 1024, description="largest gRPC message a server accepts or sends"
    )
    max_concurrent_rpcs: int = Field(
        256,
        ge=1,
        description="calls one gRPC server serves at once, streams aside (the lobby adds "
        "lobby_max_watches for its watches); gRPC refuses more with RESOURCE_EXHAUSTED before "
        "reading them",
    )
    consumer_name: str = Field(
        default_factory=socket.gethostname,
        description="this process's name in lifecycle consumer groups (stable across restarts, "
        "e.g. the pod name)",
    )
    leader_lease_s: float = Field(
        6.0,
        gt=0,
        description="TTL of the leases that let one replica run each shared periodic job (the "
        "dispatcher's stall sweep and dead-turn check, the clock keeper's looks, the tournament "
        "reconciler; services/platform/lease.py): renewed every third of it; a dead leader's job "
        "moves to another replica within about 1.3 times this (s)",
    )
    log_format: str = Field("console", description="'console' or 'json'")
    log_level: str = Field("INFO", description="lowest level logged: DEBUG, INFO, WARNING, ERROR")
    internal_secret: str = Field(
        "",
        description="shared secret of internal calls (bots, dispatcher, archiver: metadata "
        "'authorization: Internal <secret>' + 'x-roundhouse-service: <name>'); empty = refused",
    )

    # where the services are reached
    lobby_address: str = Field("127.0.0.1:50060", description="host:port of the lobby")
    rules_addresses: dict[str, str] = Field(
        default_factory=lambda: {t: f"127.0.0.1:{p}" for t, p in DEFAULT_RULES_PORTS.items()},
        description="title -> host:port of its rules service",
    )
    accounts_address: str = Field("127.0.0.1:50064", description="host:port of the accounts")
    archive_address: str = Field(
        "127.0.0.1:50065", description="host:port of the archiver (roundhouse.v1.Archive)"
    )
    tournaments_address: str = Field(
        "127.0.0.1:50066", description="host:port of the tournament service"
    )
    gateway_address: str = Field(
        "127.0.0.1:8080", description="host:port the HTTP gateway (services/web) listens on"
    )

    @model_validator(mode="after")
    def _default_shards(self) -> CommonSettings:
        if not self.lifecycle_shards:
            self.lifecycle_shards = (
                CLUSTER_LIFECYCLE_SHARDS if self.redis_cluster else DEFAULT_LIFECYCLE_SHARDS
            )
        return self

    @field_validator("key_prefix")
    @classmethod
    def _no_braces(cls, prefix: str) -> str:
        if "{" in prefix or "}" in prefix:
            raise ValueError("the key prefix may not contain braces (Redis Cluster hash tags)")
        return prefix


class StoreSettings(CommonSettings):
    """The durable store (:mod:`services.platform.db`) and the token verifier over it:
    every service but the bots and the clock keeper."""

    database_url: str = Field(
        "",
        description="SQLAlchemy URL of the durable store (accounts, tables, archive), e.g. "
        "postgresql+asyncpg://user@host/db (postgresql:// is read as asyncpg); empty = the "
        "embedded SQLite file roundhouse.db in data_dir",
    )
    data_dir: str = Field(
        "",
        description="folder of the embedded SQLite store; empty = $XDG_DATA_HOME/roundhouse "
        "(~/.local/share/roundhouse)",
    )
    db_pool_size: int = Field(10, description="PostgreSQL connections a process keeps open")
    db_timeout_s: float = Field(
        5.0, description="seconds to connect to the store or wait for a pooled connection"
    )
    token_cache_seconds: float = Field(
        300.0,
        description="longest time a server trusts a verified API token without a lookup; a "
        "revocation reaches every server at once over Redis pub/sub "
        "(services/accounts/revocations.py), this bounds it if a message was missed; 0 = look "
        "up on every call",
    )


class AccountEventsSettings(CommonSettings):
    """The account event log (:mod:`services.lobby.events`): its writers, the lobby, the
    clock keeper and the tournaments."""

    events_maxlen: int = Field(
        1000, ge=10, description="approximate number of events kept per account (Redis stream)"
    )


class ResignationSettings(CommonSettings):
    """What a resignation does; the lobby and the rules services read the same value."""

    resignation: dict[str, str] = Field(
        default_factory=dict,
        description="title -> 'end' | 'continue': what a resignation does, overriding "
        "services/match/resignation.py's RESIGNATION (the lobby and the rules services must "
        "agree)",
    )


class BrokerSettings(CommonSettings):
    """The bots' Celery broker: the dispatcher and the workers, and the lobby, which sends
    review tasks (:mod:`services.lobby.handlers.reviews`)."""

    broker_url: str | None = Field(
        None,
        description="Celery broker URL (amqp://... for RabbitMQ); defaults to redis_url, but "
        "must be set with redis_cluster (RabbitMQ, or a separate single Redis)",
    )

    @property
    def celery_broker(self) -> str:
        """The Celery broker URL (``broker_url``, else ``redis_url``; see :meth:`check_broker`)."""
        return self.broker_url or self.redis_url

    def check_broker(self) -> None:
        """What the dispatcher and the bot workers check at start.

        Raises:
            BrokerNotSet: ``redis_cluster`` without ``broker_url`` (kombu has no transport
                for a Redis Cluster), with what to set.
        """
        if self.redis_cluster and not self.broker_url:
            raise BrokerNotSet(
                "ROUNDHOUSE_REDIS_CLUSTER=1 needs ROUNDHOUSE_BROKER_URL: the bot tasks' Celery "
                "broker cannot be a Redis Cluster (kombu has no cluster transport). Set it to "
                "RabbitMQ (amqp://user:password@host:5672//) or to a separate single Redis "
                "(redis://host:6379/0)."
            )


class LobbySettings(StoreSettings, AccountEventsSettings, ResignationSettings, BrokerSettings):
    """The lobby (:mod:`services.lobby.server`): its calls, caches, quotas and sweeper."""

    rules_call_timeout_s: float = Field(
        30.0,
        description="longest deadline (seconds) the lobby gives a call to a rules service; a "
        "caller's shorter deadline is passed on as it is",
    )
    table_cache_seconds: float = Field(
        60.0,
        description="longest time a lobby trusts a table record it read without reading it "
        "again; every change drops it in every lobby at once over Redis pub/sub "
        "(services/lobby/table_cache.py), this bounds it if a message was missed; 0 = read "
        "on every call",
    )
    lobby_group: str = Field("lobby", description="consumer group of the lobby")
    events_group: str = Field(
        "lobby-events",
        description="consumer group of the lobby's account-event publisher (services/lobby/events)",
    )
    events_poll_s: float = Field(
        10.0,
        gt=0,
        description="an open event stream re-reads its account's log this often even without a "
        "pub/sub wake-up (a missed message is late by at most this long; seconds)",
    )
    lobby_max_watches: int = Field(
        2000, ge=1, description="WatchTable streams one lobby serves at once, all clients together"
    )
    watches_per_account: int = Field(
        16, ge=1, description="WatchTable streams one account keeps open on one lobby at once"
    )
    watches_per_peer: int = Field(
        32,
        ge=1,
        description="WatchTable streams one connection (gRPC peer: address and port) keeps "
        "open on one lobby at once (anonymous spectators are counted by it)",
    )
    event_streams_per_account: int = Field(
        8,
        ge=1,
        description="StreamEvents streams one account keeps open on one lobby at once; past it "
        "RESOURCE_EXHAUSTED too_many_streams (the gateway's own bound per token: "
        "gateway_streams_per_token)",
    )
    lobby_max_event_streams: int = Field(
        2000,
        ge=1,
        description="StreamEvents streams one lobby serves at once, all accounts together "
        "(added to max_concurrent_rpcs like lobby_max_watches); past it too_many_watchers",
    )
    chat_max_length: int = Field(
        300,
        ge=1,
        le=2000,
        description="longest table chat message (Unicode code points); longer ones are refused "
        "INVALID_ARGUMENT message_too_long (services/lobby/chat.py)",
    )
    chat_per_account: str = Field(
        "10/10 seconds",
        description="table chat messages one account may send, as a limits string; kept in Redis "
        "(every lobby replica counts the same); past it RESOURCE_EXHAUSTED chat_rate",
    )
    chat_maxlen: int = Field(
        1000, ge=10, description="chat messages one table's Redis log keeps (older are trimmed)"
    )
    watch_opens_per_account: str = Field(
        "120/minute",
        description="WatchTable calls one account (or, anonymous, one client address) may open, "
        "as a limits string; kept in Redis (every lobby replica counts the same)",
    )
    tables_per_account: int = Field(
        20,
        ge=1,
        description="tables one account may own that are open, starting or running; then "
        "CreateTable is refused RESOURCE_EXHAUSTED too_many_tables",
    )
    tables_created_per_account: str = Field(
        "10/minute", description="tables one account may create, as a limits string (Redis)"
    )
    moves_per_account: str = Field(
        "10/second",
        description="moves (SubmitMove) one account may send, as a limits string (Redis); "
        "a bot account playing many tables needs more",
    )
    open_table_ttl_s: float = Field(
        86_400.0,
        gt=0,
        description="a table that has not started this many seconds after its creation is "
        "aborted by the lobby's sweeper (a table that never starts holds no quota for ever)",
    )
    open_table_sweep_s: float = Field(
        60.0, gt=0, description="how often the lobby looks for open tables past open_table_ttl_s"
    )


class GatewaySettings(StoreSettings):
    """The HTTP gateway and web pages (:mod:`services.web`; the store: its OAuth records).

    Raises (on construction):
        pydantic.ValidationError: a ``trusted_proxies`` entry that is no address or network.
    """

    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses or networks (CIDR) of the reverse proxies in front of the HTTP "
        "gateway: only a request from one of them has its X-Forwarded-For (and "
        "X-Forwarded-Proto) believed; empty = the client is the TCP peer",
    )
    gateway_https: bool = Field(
        False,
        description="the web pages are served over HTTPS (a TLS proxy in front): session and "
        "CSRF cookies are marked Secure",
    )
    gateway_keepalive_s: float = Field(
        10.0, gt=0, description="an NDJSON stream sends an empty line after this long idle (s)"
    )
    gateway_streams_per_token: int = Field(
        8,
        ge=1,
        description="NDJSON streams one token (anonymous: one client address) may hold open at "
        "once, over every gateway sharing the Redis; past it 429 too_many_streams",
    )
    gateway_max_body_bytes: int = Field(
        64 * 1024, ge=1024, description="largest request body the gateway reads (413 past it)"
    )
    gateway_import_max_body_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1024,
        description="largest body of the import of a recorded game (POST /api/e1894/imports "
        "and its page's form), the one route past gateway_max_body_bytes",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, proxies: list[str]) -> list[str]:
        for proxy in proxies:
            ipaddress.ip_network(proxy, strict=False)  # ValueError: not an address or network
        return proxies


class AccountsSettings(StoreSettings):
    """The accounts service (:mod:`services.accounts.server`): its sign-in limits."""

    signin_failures_per_pair: str = Field(
        "3/minute;6/15minute;12/day",
        description="failed sign-ins (CreateToken) allowed per (username, client address) "
        "pair, as limits strings ('N/period', ';'-separated windows: a backoff); then "
        "RESOURCE_EXHAUSTED too_many_failures with retry_after_s. Never per username alone: "
        "someone else's wrong passwords do not lock the owner out",
    )
    signin_failures_per_peer: str = Field(
        "30/5minute",
        description="failed sign-ins allowed per client address (behind the gateway: the "
        "HTTP client's, see trusted_proxies), any usernames",
    )


class ArchiveSettings(StoreSettings):
    """The archiver (:mod:`services.archive`)."""

    archive_group: str = Field("archiver", description="consumer group of the archiver")
    archived_game_ttl_s: int = Field(
        86_400,
        ge=0,
        description="seconds Redis keeps a game's keys after it was archived (then views, "
        "watches and results come from the archive); 0 = delete them at once",
    )


class BotSettings(BrokerSettings):
    """The bot dispatcher and the bot workers (:mod:`services.bots`)."""

    bot_secret: str = Field(
        "",
        description="secret mixed into bot decision seeds so players cannot predict bot moves; "
        "empty = decisions reproducible from public data (development)",
    )
    worker_ready_file: str = Field(
        "", description="a bot worker creates this file once ready (launcher, k8s probe)"
    )
    bot_stall_s: float = Field(
        60.0,
        description="the dispatcher's sweeper enqueues again a bot turn unplayed for this long (s)",
    )
    bot_heartbeat_ttl_s: float = Field(
        3.0,
        description="a running bot task's heartbeat key lives this long (seconds; refreshed every "
        "third of it): a turn whose heartbeat expired is enqueued again (services/bots/heartbeat)",
    )
    bot_pickup_s: float = Field(
        5.0,
        gt=0,
        description="a bot task no worker started this long after it was sent, while the queue "
        "was empty or a later task had started, was lost in the broker (Redis out of memory): "
        "the dispatcher enqueues its turn again (s)",
    )
    dead_turn_check_s: float = Field(
        1.0, description="how often the dispatcher looks for bot turns whose heartbeat expired (s)"
    )
    dispatcher_group: str = Field("bot-dispatcher", description="consumer group of the dispatcher")


class KeeperSettings(AccountEventsSettings):
    """The clock keeper (:mod:`services.clocks.keeper`)."""

    clocks_group: str = Field("clocks", description="consumer group of the clock keeper")
    clocks_tick_ms: int = Field(
        10,
        ge=1,
        le=1000,
        description="shortest time between two looks of the clock keeper while a deadline is "
        "due (ms; it otherwise sleeps until the next deadline)",
    )
    clocks_concurrency: int = Field(64, ge=1, description="timeouts the clock keeper fires at once")


class TournamentsSettings(StoreSettings, AccountEventsSettings):
    """The tournament service (:mod:`services.tournaments.service`)."""

    tournament_group: str = Field(
        "tournaments", description="consumer group of the tournament service's table results"
    )
    ratings_group: str = Field(
        "ratings", description="consumer group that rates every finished game"
    )
    tournament_reconcile_s: float = Field(
        2.0,
        description="how often the tournament service looks for undone work: tables not started, "
        "results missed, stalled tables, rounds to pair (seconds)",
    )


class RulesSettings(StoreSettings, ResignationSettings):
    """A rules service (:mod:`services.rules.serve`): its caches, threads and watchers (the
    store: the archive's finished games)."""

    max_cached_games: int = Field(
        5000, description="live game states a rules service keeps in memory (LRU); others rebuild"
    )
    rules_workers: int = Field(
        2,
        ge=0,
        description="threads a rules replica runs apply/legal_actions/view on, off the event "
        "loop (0 = on the loop); the GIL makes more than a few of no use",
    )
    rules_pool_titles: list[str] = Field(
        default_factory=lambda: ["e1894"],
        description="titles whose rules replicas run that work on their pool of rules_workers "
        "threads (1894: a route search can take ~10 ms); the others run it on the event loop, "
        "where their calls (tens of microseconds, a few ms at most) cost less than a thread "
        "hop (docs/benchmarks.md, bench_gateway)",
    )
    max_watchers: int = Field(
        500, description="open WatchGame streams per rules replica (each holds a connection)"
    )
    archive_cached_games: int = Field(
        200, description="archived final states a rules service keeps in memory (LRU)"
    )


class Settings(
    LobbySettings,
    GatewaySettings,
    AccountsSettings,
    ArchiveSettings,
    BotSettings,
    KeeperSettings,
    TournamentsSettings,
    RulesSettings,
):
    """The whole deployment: every service's fields (the launcher and ``roundhouse up``,
    which configure every process, and the Kubernetes manifests' check). A service reads
    its own class instead."""


class BrokerNotSet(ValueError):
    """A Redis Cluster is configured and no separate Celery broker (``broker_url``)."""


def listen_address(settings: CommonSettings, address: str) -> str:
    """Where a gRPC server binds: ``bind_host`` and ``listen_port``, or the port of
    ``address`` (its own entry among the addresses clients use, ``host:port``)."""
    port = settings.listen_port or int(address.rsplit(":", 1)[1])
    return f"{settings.bind_host}:{port}"


S = TypeVar("S", bound=CommonSettings)


@cache
def get_settings(cls: type[S]) -> S:
    """The process-wide settings of class ``cls`` (e.g. :class:`LobbySettings`), read once
    from the environment; ``get_settings.cache_clear()`` reads them again.

    Raises:
        pydantic.ValidationError: a variable of ``cls`` with a bad value.
    """
    return cls()
