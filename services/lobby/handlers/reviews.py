"""Game reviews (issue 31): ``RequestReview`` stores a ``queued`` review of a finished table
(:class:`services.bots.review_store.ReviewStore`, once per table) and sends one review task
onto the bots' broker, on the review queue (:func:`services.bots.celery_app.review_queue`),
never the live bots' queue; ``GetReview`` reads it back. The task gets the game's public
record: the seats, the seed (public once the game is over, as the replay shows), the options
and the moves (the rules service's ``WatchGame`` of the whole game, as the replay reads them;
it falls back on the archive itself), up to a resignation entry.
"""

from __future__ import annotations

import asyncio
import json

import grpc

from roundhouse.v1 import game_pb2, lobby_pb2
from services.accounts.rules import TABLES_WRITE
from services.lobby.handlers.common import DENIED, log
from services.lobby.models import FINISHED
from services.lobby.store import TableRecord
from services.lobby.tables import require_status
from services.platform.auth import Principal, require_scope
from services.platform.grpc_errors import ServiceError, relay
from services.platform.reviews import Review, ReviewStore, send_review


def review_proto(review: Review) -> lobby_pb2.Review:
    """A stored review as the ``Review`` message."""
    answer = lobby_pb2.Review(
        table_id=review.table_id,
        state=review.state,
        done=review.done,
        total=review.total,
        error=review.error or "",
    )
    for e in review.entries or ():
        answer.entries.append(
            lobby_pb2.ReviewEntry(
                version=e["version"],
                seat=e["seat"],
                label=e["label"],
                win_chance_before=e["win_chance_before"],
                win_chance_after=e["win_chance_after"],
                best_label=e["best_label"],
                loss=e["loss"],
            )
        )
    return answer


def require_seated_or_owner(t: TableRecord, principal: Principal) -> None:
    """A seated player, the table's owner or an admin; else PERMISSION_DENIED ``not_seated``."""
    if principal.is_admin or principal.is_internal or principal.account_id == t.owner_id:
        return
    if any(s.account_id == principal.account_id for s in t.seats if s.account_id):
        return
    raise ServiceError(
        DENIED, "not_seated", "only a seated player or the table's owner may request a review"
    )


class Reviews:
    """The review handlers of :class:`services.lobby.server.LobbyServicer`."""

    def _reviews(self) -> ReviewStore:
        return ReviewStore(sessions=self.store.sessions)

    async def _moves(self, title: str, game_id: str, context) -> list[list]:
        """The game's moves ``[seat, action]`` up to a resignation entry."""
        moves: list[list] = []
        try:
            async for update in self._watch_game(title, game_id, 0):
                action = json.loads(update.action_json)
                if action.get("type") == "resign":
                    break
                moves.append([update.seat, action])
                if update.finished:
                    break
        except grpc.aio.AioRpcError as err:
            await relay(context, err)
        return moves

    async def RequestReview(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        table = await self._table(request.table_id)
        require_status(table, FINISHED)
        require_seated_or_owner(table, principal)
        store = self._reviews()
        found = await store.get(table.table_id)
        if found is not None:
            return review_proto(found)
        res = await self._call_rules(
            table.title, "GetResult", game_pb2.GetResultRequest(game_id=table.game_id), context
        )
        moves = await self._moves(table.title, table.game_id, context)
        review, created = await store.request(
            table.table_id, table.game_id, table.title, len(moves), principal.account_id
        )
        if created:
            args = [
                table.table_id,
                table.title,
                len(table.seats),
                str(res.seed),
                json.loads(table.options_json) if table.options_json else None,
                moves,
                0.0,  # the title's default budget
                table.game_id,
            ]
            await asyncio.to_thread(
                self.send_review, self.settings.celery_broker, self.settings.key_prefix, args
            )
            log.info("review requested", table_id=table.table_id, moves=len(moves))
        return review_proto(review)

    async def GetReview(self, request, context):
        table = await self._table(request.table_id)
        found = await self._reviews().get(table.table_id)
        if found is None:
            raise ServiceError(
                grpc.StatusCode.NOT_FOUND, "no_review", "this table has not been reviewed"
            )
        return review_proto(found)

    send_review = staticmethod(send_review)
    """Sends the review task (:func:`services.platform.reviews.send_review`; replaceable in
    tests)."""


__all__ = ["Reviews", "review_proto", "require_seated_or_owner"]
