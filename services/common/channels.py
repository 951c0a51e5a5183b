"""gRPC client channels between Roundhouse services.

Addresses come from the settings (``rules_addresses``, ``lobby_address``). A
``dns:///host:port`` address (as in ``deploy/k8s``, where the rules Services
are headless) resolves to every replica and calls are spread over them with
the ``round_robin`` policy; a plain ``host:port`` works the same for one
server. Keepalive pings (every 30 s, also while a call only waits on a
stream) notice dead peers; the servers accept them
(``services/common/server.py``).
"""

from __future__ import annotations

import grpc

CHANNEL_OPTIONS = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_receive_message_length", 32 * 1024 * 1024),
)


def sync_channel(address: str) -> grpc.Channel:
    """A blocking-API channel (bot workers)."""
    return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)


def aio_channel(address: str) -> grpc.aio.Channel:
    """An asyncio channel (the lobby)."""
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
