"""gRPC client channels between Roundhouse services.

Addresses come from the settings (``rules_addresses``, ``lobby_address``). A
``dns:///host:port`` address (as in ``deploy/k8s``, where the rules Services
are headless) resolves to every replica, as does an
``ipv4:host:port,host:port`` list (``services/cli/launcher.py``). Calls are
spread over them with the ``round_robin`` policy; a plain ``host:port`` works
the same for one server. Keepalive pings (every 30 s, also while a call only
waits on a stream) notice dead peers; the servers accept them
(``services/platform/server.py``).

**Game affinity on the rules channels** (:func:`rules_aio_channel`,
:func:`rules_sync_channel`): a rules replica keeps the games it served in memory
and catches up on a game's stream when another replica appended to it, so a game
whose consecutive calls alternate between replicas costs a stream read and an
apply per call. Those channels use gRPC's own ``ring_hash`` policy keyed by the
call's :data:`GAME_HEADER` metadata (:func:`game_metadata`; gRFC A76's
``request_hash_header``): every call of a game, from any caller (lobby, bot
workers, clock keeper) with the same address list, goes to the same replica, and
the games spread over the replicas. When that replica is down, the ring's next
one takes its games (the policy's own failover; no consensus needed: any replica
can serve any game, affinity only saves the catch-up). A call without the header
goes to a random replica. gRPC reads ``request_hash_header`` only with
``GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY=true`` in the environment
(read when the process makes its first channel); this module sets it on import
unless it is set already, so import it before any channel is made (every service
does, at module level).

**Internal credentials on the rules channels**: the rules services answer only the
platform's own callers (``services.rules.serve.internal_only``; docs/deploy.md, "Who may
call the rules services"). Both
rules channels take the caller's internal credentials (:func:`services.platform.auth.internal`
of ``ROUNDHOUSE_INTERNAL_SECRET`` and the caller's name), and a client interceptor adds them
to every call that carries no ``authorization`` of its own, so no call site can forget them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import grpc

HASH_KEY_ENV = "GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY"
os.environ.setdefault(HASH_KEY_ENV, "true")

GAME_HEADER = "roundhouse-game-id"
"""The call metadata key the rules channels hash on (lowercase, as gRPC requires)."""

CHANNEL_OPTIONS = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_receive_message_length", 32 * 1024 * 1024),
)

AFFINITY_SERVICE_CONFIG = json.dumps(
    {"loadBalancingConfig": [{"ring_hash_experimental": {"requestHashHeader": GAME_HEADER}}]}
)
"""``ring_hash`` keyed by :data:`GAME_HEADER` (its default ring sizes)."""

RULES_CHANNEL_OPTIONS = (
    *(option for option in CHANNEL_OPTIONS if option[0] != "grpc.lb_policy_name"),
    ("grpc.service_config", AFFINITY_SERVICE_CONFIG),
    # the resolver's service config (none from ipv4: or a headless Service) never replaces it
    ("grpc.service_config_disable_resolution", 1),
)


Metadata = Sequence[tuple[str, str]]


def _with_credentials(metadata: Any, credentials: Metadata) -> Any:
    """``metadata`` (a call's, None or a sequence of pairs or ``grpc.aio.Metadata``) plus
    ``credentials`` unless it has an ``authorization`` entry already."""
    pairs = list(metadata or ())
    if any(key == "authorization" for key, _ in pairs):
        return metadata
    return (*pairs, *credentials)


class _SyncDetails(grpc.ClientCallDetails):
    def __init__(self, details: grpc.ClientCallDetails, metadata: Any) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class SyncCredentials(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Blocking-API client interceptor: adds ``credentials`` (metadata pairs) to every call
    without an ``authorization`` entry."""

    def __init__(self, credentials: Metadata) -> None:
        self.credentials = tuple(credentials)

    def _details(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        return _SyncDetails(details, _with_credentials(details.metadata, self.credentials))

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return continuation(self._details(client_call_details), request_iterator)


class _AioCredentials:
    def __init__(self, credentials: Metadata) -> None:
        self.credentials = tuple(credentials)

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*_with_credentials(details.metadata, self.credentials))
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


class _AioUnaryUnary(_AioCredentials, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(self._details(client_call_details), request)


class _AioUnaryStream(_AioCredentials, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(self._details(client_call_details), request)


class _AioStreamUnary(_AioCredentials, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return await continuation(self._details(client_call_details), request_iterator)


class _AioStreamStream(_AioCredentials, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return await continuation(self._details(client_call_details), request_iterator)


def aio_credentials(credentials: Metadata) -> list[grpc.aio.ClientInterceptor]:
    """asyncio client interceptors (one per call kind, as grpc.aio needs) adding
    ``credentials`` to every call without an ``authorization`` entry."""
    return [
        _AioUnaryUnary(credentials),
        _AioUnaryStream(credentials),
        _AioStreamUnary(credentials),
        _AioStreamStream(credentials),
    ]


def sync_channel(address: str) -> grpc.Channel:
    """A blocking-API channel, calls spread round-robin."""
    return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)


def aio_channel(address: str) -> grpc.aio.Channel:
    """An asyncio channel, calls spread round-robin."""
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)


def rules_sync_channel(address: str, credentials: Metadata) -> grpc.Channel:
    """A blocking-API channel to a rules service's replicas with game affinity (bot
    workers; module docstring): pass :func:`game_metadata` with every call. Every call
    carries ``credentials`` (:func:`services.platform.auth.internal`) unless it has its own
    ``authorization``."""
    raw = grpc.insecure_channel(address, options=RULES_CHANNEL_OPTIONS)
    return grpc.intercept_channel(raw, SyncCredentials(credentials))


def rules_aio_channel(address: str, credentials: Metadata) -> grpc.aio.Channel:
    """An asyncio channel to a rules service's replicas with game affinity (lobby, clock
    keeper; module docstring): pass :func:`game_metadata` with every call. Every call
    carries ``credentials`` (:func:`services.platform.auth.internal`) unless it has its own
    ``authorization``."""
    return grpc.aio.insecure_channel(
        address, options=RULES_CHANNEL_OPTIONS, interceptors=aio_credentials(credentials)
    )


def game_metadata(
    game_id: str, metadata: tuple[tuple[str, str], ...] = ()
) -> tuple[tuple[str, str], ...]:
    """``metadata`` plus the :data:`GAME_HEADER` entry that routes a call on a rules
    channel to ``game_id``'s replica (``metadata`` alone for an empty ``game_id``: a
    random replica)."""
    return (*metadata, (GAME_HEADER, game_id)) if game_id else metadata
