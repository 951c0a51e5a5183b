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
of ``ROUNDHOUSE_INTERNAL_SECRET`` and the caller's name) and add them to every call that
carries no ``authorization`` of its own, so no call site can forget them: a client
interceptor on the blocking channel, a wrapper of the channel's callables on the asyncio
one (grpc.aio's interceptors cost an intercepted call and a task per call).
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


class _CredentialedCall:
    """A grpc.aio multi-callable (any of the four kinds) whose calls carry ``credentials``
    unless they bring an ``authorization`` entry: a plain function call in front of the
    channel's own callable, so the call is grpc.aio's plain one (a client interceptor would
    wrap every call in an intercepted call and a task of its own: about 5% of the lobby's
    CPU under the poll mix, docs/benchmarks.md)."""

    __slots__ = ("_inner", "_credentials")

    def __init__(self, inner: Any, credentials: Metadata) -> None:
        self._inner = inner
        self._credentials = credentials

    def __call__(self, request: Any, *, metadata: Any = None, **kwargs: Any) -> Any:
        return self._inner(
            request, metadata=_with_credentials(metadata, self._credentials), **kwargs
        )


class _CredentialedChannel(grpc.aio.Channel):
    """An asyncio channel whose every call carries ``credentials`` unless it has its own
    ``authorization`` (:class:`_CredentialedCall`); the rest is ``channel``'s."""

    def __init__(self, channel: grpc.aio.Channel, credentials: Metadata) -> None:
        self._channel = channel
        self._credentials = tuple(credentials)

    async def __aenter__(self) -> _CredentialedChannel:
        return self

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        await self._channel.close(None)

    async def close(self, grace: float | None = None) -> None:
        await self._channel.close(grace)

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        return self._channel.get_state(try_to_connect)

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        await self._channel.wait_for_state_change(last_observed_state)

    async def channel_ready(self) -> None:
        await self._channel.channel_ready()

    def _credentialed(
        self,
        make: Any,
        method: str,
        request_serializer: Any,
        response_deserializer: Any,
        registered_method: bool | None,
    ) -> Any:
        """The inner channel's multi-callable ``make(...)``, its calls carrying the
        credentials."""
        inner = make(method, request_serializer, response_deserializer, registered_method)
        return _CredentialedCall(inner, self._credentials)

    def unary_unary(
        self,
        method: str,
        request_serializer: Any = None,
        response_deserializer: Any = None,
        _registered_method: bool | None = False,
    ) -> Any:
        return self._credentialed(
            self._channel.unary_unary,
            method,
            request_serializer,
            response_deserializer,
            _registered_method,
        )

    def unary_stream(
        self,
        method: str,
        request_serializer: Any = None,
        response_deserializer: Any = None,
        _registered_method: bool | None = False,
    ) -> Any:
        return self._credentialed(
            self._channel.unary_stream,
            method,
            request_serializer,
            response_deserializer,
            _registered_method,
        )

    def stream_unary(
        self,
        method: str,
        request_serializer: Any = None,
        response_deserializer: Any = None,
        _registered_method: bool | None = False,
    ) -> Any:
        return self._credentialed(
            self._channel.stream_unary,
            method,
            request_serializer,
            response_deserializer,
            _registered_method,
        )

    def stream_stream(
        self,
        method: str,
        request_serializer: Any = None,
        response_deserializer: Any = None,
        _registered_method: bool | None = False,
    ) -> Any:
        return self._credentialed(
            self._channel.stream_stream,
            method,
            request_serializer,
            response_deserializer,
            _registered_method,
        )


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
    return _CredentialedChannel(
        grpc.aio.insecure_channel(address, options=RULES_CHANNEL_OPTIONS), credentials
    )


def game_metadata(
    game_id: str, metadata: tuple[tuple[str, str], ...] = ()
) -> tuple[tuple[str, str], ...]:
    """``metadata`` plus the :data:`GAME_HEADER` entry that routes a call on a rules
    channel to ``game_id``'s replica (``metadata`` alone for an empty ``game_id``: a
    random replica)."""
    return (*metadata, (GAME_HEADER, game_id)) if game_id else metadata
