"""The lobby's seats: join, leave, add a hosted bot, reclaim a seat a bot took over."""

from __future__ import annotations

import grpc

from roundhouse.v1 import game_pb2
from services.accounts.models import BOT as BOT_ACCOUNT
from services.accounts.models import SYSTEM
from services.accounts.rules import TABLES_WRITE
from services.lobby.events import TABLE_JOINED
from services.lobby.handlers.common import (
    DENIED,
    REFUSED,
    log,
    require_owner,
)
from services.lobby.messages import (
    live_table,
    table_proto,
)
from services.lobby.models import BOT, OPEN, PLAYER, RUNNING
from services.lobby.store import (
    SeatRecord,
    TableRecord,
)
from services.lobby.tables import (
    check_seat_index,
    not_seated,
    open_seat,
    require_status,
)
from services.match.botcatalogue import POLICY_NAMES, policy_available
from services.platform.auth import (
    require_principal,
    require_scope,
)
from services.platform.grpc_errors import ServiceError, abort


class Seats:
    """The seats handlers of :class:`services.lobby.server.LobbyServicer`."""

    async def JoinSeat(self, request, context):
        if request.account:
            principal = await require_principal(context)
            if not principal.is_internal:
                await abort(
                    context, DENIED, "internal_only", "only internal services seat another account"
                )
            account = await self.accounts.by_username(request.account)
            if account is None or account.kind == SYSTEM:
                await abort(context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no such player")
            account_id, username, is_bot = account.id, account.username, account.kind == BOT_ACCOUNT
        else:
            principal = await self._player(context)
            account_id, username = principal.account_id, principal.username
            is_bot = principal.is_bot

        def change(t: TableRecord) -> None:
            open_seat(t, request.seat)
            not_seated(t, account_id, username)
            t.seats[request.seat] = SeatRecord(PLAYER, account_id, username, is_bot)

        table = await self._change(request.table_id, change)
        log.info("seat joined", table_id=table.table_id, seat=request.seat, account=account_id)
        await self._tell(account_id, TABLE_JOINED, table, request.seat)
        return table_proto(table)

    async def LeaveSeat(self, request, context):
        principal = await self._player(context)
        if not request.HasField("seat"):
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "LeaveSeat needs a seat"
            )

        def change(t: TableRecord) -> None:
            check_seat_index(t.num_players, request.seat)
            require_status(t, OPEN)
            self._own_seat(t, request.seat, principal)
            t.seats[request.seat] = SeatRecord()

        return table_proto(await self._change(request.table_id, change))

    async def AddBot(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        table = await self._table(request.table_id)
        require_owner(table, principal)
        which = request.WhichOneof("who")
        if which == "bot":
            account = await self.accounts.by_username(request.bot)
            if account is None:
                await abort(
                    context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no such bot account"
                )
            if account.kind != BOT_ACCOUNT:
                await abort(
                    context, REFUSED, "not_a_bot", f"{account.username} is not a bot account"
                )
            if (
                account.owner_id != principal.account_id
                and not principal.is_admin
                and not principal.is_internal
            ):
                await abort(
                    context, DENIED, "not_bot_owner", f"{account.username} is not your bot account"
                )
            # "" = the bot plays itself (its own program, its own tokens): no worker moves for it
            policy = account.hosted_policy or ""
        else:
            policy = request.policy
            if policy not in POLICY_NAMES:
                await abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "unknown_policy",
                    f"unknown bot policy; known: {', '.join(POLICY_NAMES)}",
                )
            account = await self.accounts.by_username(f"{policy}-bot")
            if account is None or account.kind != SYSTEM:
                raise ServiceError(
                    grpc.StatusCode.INTERNAL, "internal", f"no system account for {policy}"
                )
        if policy and not policy_available(policy, table.title):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "policy_unavailable",
                f"bot policy {policy!r} cannot play {table.title}",
            )

        def change(t: TableRecord) -> None:
            require_owner(t, principal)
            open_seat(t, request.seat)
            if account.kind != SYSTEM:
                not_seated(t, account.id, account.username)
            t.seats[request.seat] = SeatRecord(BOT, account.id, account.username, True, policy)

        table = await self._change(request.table_id, change)
        if not policy:  # a self-playing bot learns of its seat on its event stream
            await self._tell(account.id, TABLE_JOINED, table, request.seat)
        return table_proto(table)

    async def ReclaimSeat(self, request, context):
        """The seat's account takes the seat back from its takeover bot
        (``reclaim`` tables, within the window; the rules service decides)."""
        principal = await self._player(context)
        if not request.HasField("seat"):
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "ReclaimSeat needs a seat"
            )
        seat = request.seat
        table = await self._table(request.table_id)
        require_status(table, RUNNING)
        check_seat_index(table.num_players, seat)
        if table.seats[seat].account_id != principal.account_id:
            raise ServiceError(
                DENIED, "not_your_seat", f"seat {seat} is not held by your account", seat=seat
            )
        await self._call_rules(
            table.title,
            "Reclaim",
            game_pb2.ResignRequest(game_id=table.game_id, seat=seat),
            context,
        )

        def hand_back(t: TableRecord) -> None:
            t.seats[seat].policy, t.seats[seat].taken_over_at = "", None

        table = await self._change(request.table_id, hand_back)
        await self.hot.put(live_table(table))
        log.info("seat reclaimed", table_id=table.table_id, seat=seat)
        return table_proto(table)
