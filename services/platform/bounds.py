"""Bounds on what the services accept from clients, in one place (issue 13).

Every string and message a public service accepts has a bound here; the
table in ``docs/architecture.md`` ("Limits and quotas") lists them with what
happens at each. Per-account quotas and rate limits are settings (they are
operators' choices, see :mod:`services.lobby.quotas`); these are properties
of the API and the same in every deployment.

Lengths are in characters (Python ``len`` of the decoded text) unless the
name says bytes. Refusals are INVALID_ARGUMENT with a reason (``too_long``,
``message_too_large``) and ErrorInfo metadata ``field``, ``max_length`` and
``length`` (or ``max_bytes`` and ``bytes``); the text itself is never echoed.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping

import grpc

from services.platform.grpc_errors import ServiceError
from services.platform.interceptors import WrappedHandlers

TABLE_ID_MAX = 64
"""Table ids (the lobby makes 12 hex digits; longer ones cannot exist)."""
TITLE_MAX = 32
"""Title names (``railbarons``, ...)."""
USERNAME_MAX = 30
"""Usernames (``services/accounts/rules.py`` allows 2-30 of ``A-Za-z0-9_-``)."""
POLICY_MAX = 32
"""Hosted bot policy names."""
OPTIONS_JSON_MAX = 4096
"""``options_json`` of a table or game; stored in its canonical form (sorted
keys, no spaces), which is never longer than the accepted text."""
ACTION_JSON_MAX = 4096
"""``action_json`` of a move (the largest action of any title is a few hundred characters)."""
IDEMPOTENCY_KEY_MAX = 200
"""``idempotency_key`` of a move."""
PAGE_TOKEN_MAX = 256
"""``page_token`` of a listing (the lobby's tokens are under 100 characters)."""
RECORDED_GAME_MAX_BYTES = 1024 * 1024
"""``game_json`` of ``ImportRecordedGame`` (bytes of UTF-8): a game recorded on 18xx.games
is 130-180 KB (the four of ``tests/fixtures/e1894/``), so this is over 5 times the largest.
The HTTP gateway's import route reads a body of up to ``gateway_import_max_body_bytes``
(4 MiB: a pretty-printed file, a form) and passes the game on compact."""

LOBBY_FIELDS: Mapping[str, int] = {
    "table_id": TABLE_ID_MAX,
    "title": TITLE_MAX,
    "options_json": OPTIONS_JSON_MAX,
    "action_json": ACTION_JSON_MAX,
    "idempotency_key": IDEMPOTENCY_KEY_MAX,
    "page_token": PAGE_TOKEN_MAX,
    "player": USERNAME_MAX,
    "policy": POLICY_MAX,
    "bot": USERNAME_MAX,
}
"""Top-level string fields of lobby requests -> longest accepted (any request
of the lobby that has the field)."""

RULES_FIELDS: Mapping[str, int] = {
    "title": TITLE_MAX,
    "options_json": OPTIONS_JSON_MAX,
    "action_json": ACTION_JSON_MAX,
}
"""The same for the rules services (``game_id`` has its own rule,
``services.platform.grpc_errors.require_game_id``; ``idempotency_key`` is
checked by the servicer, reason ``bad_idempotency_key``)."""

KIB = 1024

# The ranges of the protobuf integer types: a larger value cannot be put in a request at all
# (protobuf raises ValueError), so the HTTP gateway bounds every integer it takes by its
# field's type (``services/web/models.py``: 400 ``out_of_range`` with ``min`` / ``max``).
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1

# Largest request message per method (bytes of the serialized request). A
# request over its method's bound is refused before it is parsed; anything
# over the server's largest bound is refused by gRPC itself while it is read.
LOBBY = "/roundhouse.v1.Lobby/"
LOBBY_MESSAGE_BYTES: Mapping[str, int] = {
    LOBBY + "CreateTable": OPTIONS_JSON_MAX + 1 * KIB,
    LOBBY + "SubmitMove": ACTION_JSON_MAX + IDEMPOTENCY_KEY_MAX + 1 * KIB,
    LOBBY + "ListTables": PAGE_TOKEN_MAX + 1 * KIB,
    LOBBY + "ImportRecordedGame": RECORDED_GAME_MAX_BYTES + 1 * KIB,
    LOBBY + "SendChat": 9 * KIB,  # chat_max_length (at most 2,000 code points) in UTF-8
}
LOBBY_DEFAULT_MESSAGE_BYTES = 1 * KIB
"""Every other lobby method: ids, a seat, a version."""

READ_BYTES = 256 * KIB
"""Largest request the lobby, the accounts, the tournaments and the archive read at
all: up to this, a
request over its method's bound is refused INVALID_ARGUMENT
``message_too_large`` with the bound; 64 such requests at once hold 16 MiB.

Past it there is no reason code, and cannot be one: gRPC's core checks
``grpc.max_receive_message_length`` while it reads the message, before any
Python code (interceptor, deserializer or handler) sees the call, and ends
the call itself with RESOURCE_EXHAUSTED ``SERVER: Received message larger
than max (N vs. 262144)`` and no trailing metadata; grpcio has no hook to add
an ErrorInfo to that answer. Raising the limit so that our code could refuse
it would mean reading and holding the whole message first, which is what
the limit prevents. So a RESOURCE_EXHAUSTED without ErrorInfo is this case
(every refusal of a quota or a rate has ``retry_after_s``), and a client
must not retry it (``docs/api.md``); the HTTP gateway answers 413
``body_too_large`` long before (``gateway_max_body_bytes``, 64 KiB)."""

RULES = "/roundhouse.v1.GameRules/"
RULES_MESSAGE_BYTES: Mapping[str, int] = {
    RULES + "CreateGame": OPTIONS_JSON_MAX + 1 * KIB,
    RULES + "SubmitAction": ACTION_JSON_MAX + IDEMPOTENCY_KEY_MAX + 1 * KIB,
    RULES + "GetView": 1 * KIB,
    RULES + "ListLegalActions": 1 * KIB,
    RULES + "WatchGame": 1 * KIB,
    RULES + "GetResult": 1 * KIB,
    RULES + "Resign": 1 * KIB,
}
"""Rules services; their other methods (a title's import of a whole game)
keep the server's ``max_message_bytes``."""

ACCOUNTS_DEFAULT_MESSAGE_BYTES = 4 * KIB
"""Accounts: usernames, passwords (at most 128), labels, ids."""


TOURNAMENTS = "/roundhouse.v1.Tournaments/"
TOURNAMENTS_MESSAGE_BYTES: Mapping[str, int] = {
    # settings: options_json, name (80), placement points and tiebreaks, the clock
    TOURNAMENTS + "CreateTournament": OPTIONS_JSON_MAX + 2 * KIB,
}
TOURNAMENTS_DEFAULT_MESSAGE_BYTES = 1 * KIB
"""Every other tournament method: ids, a username, a round's ranks and scores (6 seats)."""

ARCHIVE_DEFAULT_MESSAGE_BYTES = 1 * KIB
"""The archive's ``ListGames``: a username, a title, a page token."""


@dataclasses.dataclass(frozen=True)
class ServiceBounds:
    """What one gRPC service accepts, for :func:`services.platform.server.service_server`.

    Attributes:
        message_bytes: method -> largest request (bytes), checked before parsing.
        default_message_bytes: the bound of the methods not named (None: the
            server's ``max_message_bytes``, for the rules services' imports).
        read_bytes: largest request gRPC reads at all (None: the largest bound).
        streams: calls served at once on top of the setting
            ``max_concurrent_rpcs`` (the service's long-lived streams).
        max_send_bytes: largest answer (None: the setting ``max_message_bytes``).
    """

    message_bytes: Mapping[str, int] = dataclasses.field(default_factory=dict)
    default_message_bytes: int | None = None
    read_bytes: int | None = READ_BYTES
    streams: int = 0
    max_send_bytes: int | None = None


TOURNAMENTS_BOUNDS = ServiceBounds(TOURNAMENTS_MESSAGE_BYTES, TOURNAMENTS_DEFAULT_MESSAGE_BYTES)
ARCHIVE_BOUNDS = ServiceBounds({}, ARCHIVE_DEFAULT_MESSAGE_BYTES)
ACCOUNTS_BOUNDS = ServiceBounds({}, ACCOUNTS_DEFAULT_MESSAGE_BYTES, max_send_bytes=1024 * KIB)
"""The lobby's (its watches added) and the rules services' (their watchers added, no
``read_bytes``: an import may be up to ``max_message_bytes``) are made where the setting
is known: :func:`lobby_bounds`, :func:`rules_bounds`."""


LOBBY_READ_BYTES = max(READ_BYTES, *LOBBY_MESSAGE_BYTES.values())
"""Largest request the lobby reads at all: :data:`READ_BYTES`, or its import's bound when
larger (a recorded game); every other method is still refused at its own bound."""


def lobby_bounds(max_watches: int) -> ServiceBounds:
    return ServiceBounds(
        LOBBY_MESSAGE_BYTES, LOBBY_DEFAULT_MESSAGE_BYTES, LOBBY_READ_BYTES, streams=max_watches
    )


def rules_bounds(max_watchers: int) -> ServiceBounds:
    return ServiceBounds(RULES_MESSAGE_BYTES, None, None, streams=max_watchers)


def check_length(field: str, text: str, max_length: int) -> None:
    """Raise :class:`ServiceError` INVALID_ARGUMENT ``too_long`` (metadata
    ``field``, ``max_length``, ``length``) when ``text`` is longer than
    ``max_length`` characters."""
    if len(text) > max_length:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "too_long",
            f"{field} is at most {max_length} characters, got {len(text)}",
            field=field,
            max_length=max_length,
            length=len(text),
        )


def check_lengths(request: object, bounds: Mapping[str, int]) -> None:
    """:func:`check_length` for each ``field -> max_length`` of ``bounds``
    that ``request`` (a protobuf message) has set."""
    for field, max_length in bounds.items():
        check_length(field, getattr(request, field), max_length)


class FieldBounds(grpc.aio.ServerInterceptor):
    """A server interceptor that refuses, before the handler runs, a request
    of a method under ``prefix`` whose top-level string field named in
    ``bounds`` is too long (:func:`check_length`). It sits inside the error
    mapping (``services.platform.server.GrpcServer``), which turns the
    :class:`ServiceError` into the status."""

    def __init__(self, prefix: str, bounds: Mapping[str, int]) -> None:
        self.prefix, self.bounds = prefix, dict(bounds)
        self._wrapped = WrappedHandlers()

    def _check(self, request: object) -> None:
        descriptor = getattr(request, "DESCRIPTOR", None)
        if descriptor is None:
            return
        for field in descriptor.fields:
            limit = self.bounds.get(field.name)
            if limit is not None and field.type == field.TYPE_STRING and not field.is_repeated:
                check_length(field.name, getattr(request, field.name), limit)

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or not handler_call_details.method.startswith(self.prefix):
            return handler
        return self._wrapped.get(handler_call_details.method, handler, lambda: self._wrap(handler))

    def _wrap(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(request, context):
                self._check(request)
                return await inner(request, context)

            return grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
            stream = handler.unary_stream

            async def generator(request, context):
                self._check(request)
                async for item in stream(request, context):
                    yield item

            return grpc.unary_stream_rpc_method_handler(
                generator,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler
