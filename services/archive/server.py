"""The archiver process: the lifecycle consumer that archives finished games
(:class:`services.archive.archiver.Archiver`) and the ``roundhouse.v1.Archive``
gRPC service (``ListGames``), with health (NOT_SERVING while the consumer is
down or Redis or the database does not answer), reflection and metrics.

Errors follow ``proto/roundhouse/v1/archive.proto``.

Run: ``roundhouse serve archiver`` or ``python -m services.archive.server``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from datetime import datetime

import grpc
from google.protobuf import timestamp_pb2

from roundhouse.v1 import archive_pb2, archive_pb2_grpc, game_pb2
from services.archive.archiver import Archiver
from services.archive.store import ArchiveStore, GameRecord
from services.kernel.engine import canonical_json
from services.platform.db import create_engine, database_url, is_sqlite, ping, upgrade_async
from services.platform.grpc_errors import abort
from services.platform.logging import configure_logging, get_logger
from services.platform.settings import ArchiveSettings, get_settings, listen_address
from services.rules.results import result_proto
from services.rules.titles import TITLE_MODULES

log = get_logger("archive")

DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 20, 100


def game_info(record: GameRecord) -> game_pb2.GameInfo:
    """The public ``GameInfo`` of an archived game (no seed)."""
    return game_pb2.GameInfo(
        game_id=record.game_id,
        title=record.title,
        rules_version=record.rules_version,
        num_players=record.num_players,
        options_json=canonical_json(record.options),
        owner=record.owner,
    )


def _timestamp(moment: datetime) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(moment)
    return ts


def archived_game_proto(record: GameRecord) -> archive_pb2.ArchivedGame:
    """An archived game as the ``ArchivedGame`` message (no seed)."""
    result = record.result
    return archive_pb2.ArchivedGame(
        info=game_info(record),
        created_at=_timestamp(record.created_at),
        finished_at=_timestamp(record.finished_at),
        num_actions=record.num_actions,
        result=result_proto(result),
        seats=[
            archive_pb2.ArchivedSeat(
                seat=s.seat,
                name=s.name,
                kind=s.kind,
                policy=s.policy,
                account_id=s.account_id or "",
                score=int(result["scores"][s.seat]),
                rank=int(result["ranks"][s.seat]),
            )
            for s in record.seats
        ],
    )


def page_token(record: GameRecord) -> str:
    """The opaque token of the page after ``record`` (its keyset position)."""
    raw = json.dumps([record.finished_at.isoformat(), record.game_id]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def parse_page_token(token: str) -> tuple[datetime, str]:
    """Raises ValueError for a token :func:`page_token` did not make."""
    try:
        finished, game_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        moment = datetime.fromisoformat(finished)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    if moment.tzinfo is None or not isinstance(game_id, str):
        raise ValueError("not a page token")
    return moment, game_id


class ArchiveServicer(archive_pb2_grpc.ArchiveServicer):
    """``roundhouse.v1.Archive`` over an :class:`ArchiveStore`."""

    def __init__(self, store: ArchiveStore) -> None:
        self.store = store

    async def ListGames(self, request, context):
        if request.page_size < 0:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_page_size",
                "page_size must be 0 (the default, 20) or more",
            )
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        if request.title and request.title not in TITLE_MODULES:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "unknown_title",
                f"unknown title {request.title!r}; known: {', '.join(TITLE_MODULES)}",
            )
        before = None
        if request.page_token:
            try:
                before = parse_page_token(request.page_token)
            except ValueError:
                await abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "bad_page_token",
                    "page_token is not a next_page_token of ListGames",
                )
        account_id = await self._account(request, context)
        records = await self.store.list_games(account_id, request.title or None, size + 1, before)
        more = len(records) > size
        records = records[:size]
        return archive_pb2.ListGamesResponse(
            games=[archived_game_proto(r) for r in records],
            next_page_token=page_token(records[-1]) if more else "",
        )

    async def _account(self, request, context) -> str | None:
        if request.account_id and request.username:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "account_and_username",
                "give account_id or username, not both",
            )
        if request.username:
            found = await self.store.account_by_username(request.username[:64])
            if found is None:
                await abort(
                    context,
                    grpc.StatusCode.NOT_FOUND,
                    "unknown_account",
                    "no account of that username",
                )
            return found
        if request.account_id:
            if not await self.store.account_exists(request.account_id[:64]):
                await abort(
                    context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no account of that id"
                )
            return request.account_id
        return None


async def serve(address: str | None = None, settings: ArchiveSettings | None = None) -> None:
    """Run the archiver (consumer + ``Archive`` service) until SIGTERM/SIGINT.
    In embedded SQLite mode the store is migrated first."""
    from services.platform.bounds import ARCHIVE_BOUNDS
    from services.platform.server import redis_client, service_server

    settings = settings or get_settings(ArchiveSettings)
    configure_logging(settings.log_level, settings.log_format)
    address = address or listen_address(settings, settings.archive_address)
    url = database_url(settings)
    if is_sqlite(url):
        await upgrade_async(url)
    engine = create_engine(url, settings)
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    archiver = Archiver(settings, client, engine)
    servicer = ArchiveServicer(archiver.store)
    consumer = asyncio.create_task(archiver.run())

    async def close() -> None:
        archiver.stop.set()
        try:
            await asyncio.wait_for(consumer, 10)
        except Exception:  # noqa: BLE001 - a consumer that failed is logged, then closed
            log.exception("archiver consumer ended with an error")
        await client.aclose()
        await engine.dispose()

    async def ready() -> bool:
        if consumer.done():
            return False
        await client.ping()
        return await ping(engine)

    server = service_server(
        "archiver",
        settings,
        [archive_pb2.DESCRIPTOR.services_by_name["Archive"].full_name],
        lambda s: archive_pb2_grpc.add_ArchiveServicer_to_server(servicer, s),
        address,
        ARCHIVE_BOUNDS,
        on_stop=close,
        ready=ready,
    )
    await server.run_until_signal()


def main() -> None:
    from services.platform.server import run_service

    run_service(serve())


if __name__ == "__main__":
    main()
