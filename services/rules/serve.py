"""Serving one title's GameRules: the server, its interceptors and its extra services.

:func:`serve` runs ``roundhouse.v1.GameRules`` for a title, plus the extra services the title
declares (1894's ``Interchange``: ``services.e1894.service.server.EXTRAS``), behind the field
bounds and the internal-callers-only interceptor
(:func:`internal_only`). The archive is plugged in by the entry point
(:mod:`services.rules.ports`), which lives above this layer (``services.cli.rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import grpc

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.match.resignation import resignation_policy
from services.platform import bounds
from services.platform.auth import AuthError, AuthInterceptor
from services.platform.bounds import FieldBounds
from services.platform.db import create_engine, database_url, is_sqlite, upgrade_async
from services.platform.gamelog import GameLog
from services.platform.logging import configure_logging
from services.platform.server import redis_client, service_server
from services.platform.settings import RulesSettings, get_settings, listen_address
from services.rules.ports import ArchiveFactory
from services.rules.servicer import GameRulesServicer

Extra = Callable[[GameRulesServicer, grpc.aio.Server], str]
"""Adds one more servicer beside GameRules (it may use the GameRules servicer)
and returns its full service name (for health and reflection)."""


async def serve(
    title: str,
    address: str | None = None,
    metrics_port: int | None = None,
    extras: Sequence[Extra] = (),
    archive: ArchiveFactory | None = None,
) -> None:
    """Run the rules service of ``title`` (plus ``extras``) until SIGTERM/SIGINT.

    Raises :class:`NoSecret` (a SystemExit: status 1, the reason on stderr) without
    ``ROUNDHOUSE_INTERNAL_SECRET``.

    ``archive`` builds the answers for finished games Redis no longer holds (the entry point
    passes the archive's, ``services.cli.rules``); None = such games are NOT_FOUND.

    The address defaults to ``bind_host`` and the port of
    ``rules_addresses[title]`` from the settings. Calls share one bounded Redis
    connection pool; watches use a second one sized ``max_watchers``.
    """
    settings = get_settings(RulesSettings)
    configure_logging(settings.log_level, settings.log_format)
    require_secret(title, settings.internal_secret)
    if address is None:
        address = listen_address(settings, settings.rules_addresses[title])
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    watch_client = redis_client(
        settings.redis_url, settings.max_watchers + 1, cluster=settings.redis_cluster
    )
    url = database_url(settings)
    if is_sqlite(url):  # embedded mode: the process that needs the store migrates it
        await upgrade_async(url)
    engine = create_engine(url, settings)
    servicer = GameRulesServicer(
        title,
        GameLog.for_settings(client, settings),
        settings.max_cached_games,
        watch_log=GameLog.for_settings(watch_client, settings),
        max_watchers=settings.max_watchers,
        resignation=resignation_policy(title, settings.resignation),
        archive=None if archive is None else archive(title, engine, settings.archive_cached_games),
        workers=settings.rules_workers if title in settings.rules_pool_titles else 0,
    )
    names = [game_pb2.DESCRIPTOR.services_by_name["GameRules"].full_name]

    def add(server: grpc.aio.Server) -> None:
        game_pb2_grpc.add_GameRulesServicer_to_server(servicer, server)
        names.extend(extra(servicer, server) for extra in extras)

    async def close() -> None:
        await client.aclose()
        await watch_client.aclose()
        await engine.dispose()

    server = service_server(
        f"rules-{title}",
        settings,
        names,
        add,
        address,
        bounds.rules_bounds(settings.max_watchers),
        on_stop=close,
        ready=client.ping,
        interceptors=[
            FieldBounds(bounds.RULES, bounds.RULES_FIELDS),
            internal_only(settings.internal_secret),
        ],
        metrics_port=metrics_port,
    )
    await server.run_until_signal()


RULES_ANONYMOUS = frozenset(
    {
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.health.v1.Health/List",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)
"""The only methods of a rules service callable without internal credentials: health
checking and reflection (they tell nothing about any game)."""

MISSING = (
    "rules services answer the platform's own services only: send the metadata "
    "'authorization: Internal <ROUNDHOUSE_INTERNAL_SECRET>' and 'x-roundhouse-service: <name>'"
)


class _NoBearerTokens:
    """Rules services take internal credentials only, never a person's token."""

    async def verify(self, token: str):
        raise AuthError(
            "internal_only", "rules services are internal: they accept internal credentials only"
        )


class RulesAuth(AuthInterceptor):
    """:class:`AuthInterceptor` whose refusal of a bare call says what a rules service needs."""

    async def authenticate(self, method: str, metadata):
        if method not in self.anonymous and not any(
            k == "authorization" for k, _ in metadata or ()
        ):
            raise AuthError("token_missing", MISSING)
        return await super().authenticate(method, metadata)


def internal_only(secret: str) -> grpc.aio.ServerInterceptor:
    """The interceptor of a rules service: every call (reads such as GetView with a seat's
    hidden view as much as writes) needs ``authorization: Internal <secret>`` plus
    ``x-roundhouse-service: <name>`` (:func:`services.platform.auth.internal`), except health
    checking and reflection (:data:`RULES_ANONYMOUS`). Else UNAUTHENTICATED with the reason
    ``token_missing`` (no credentials), ``token_invalid`` (a wrong secret), ``internal_only``
    (a person's bearer token), ``bad_authorization`` or ``internal_auth_disabled`` (``secret``
    is empty: :func:`serve` refuses to start then, see :func:`require_secret`)."""
    return RulesAuth(_NoBearerTokens(), secret, anonymous=RULES_ANONYMOUS)


class NoSecret(SystemExit):
    """A rules service was asked to start without ``ROUNDHOUSE_INTERNAL_SECRET``."""


def require_secret(title: str, secret: str) -> None:
    """Refuse to run a rules service without an internal secret.

    Raises:
        NoSecret: (the process exits with status 1, the reason on stderr) when ``secret``
            is empty: with no secret the service could only refuse every caller, or hand
            hidden views to anyone who reaches its port (loopback included). ``roundhouse up``
            makes one per run (docs/deploy.md, "Who may call the rules services").
    """
    if not secret:
        raise NoSecret(
            f"rules-{title}: ROUNDHOUSE_INTERNAL_SECRET is not set; a rules service answers "
            "only callers that send it (roundhouse up makes one; docs/deploy.md)"
        )
