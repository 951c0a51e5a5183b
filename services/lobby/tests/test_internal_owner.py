"""Internal services (the tournament service) run tables for an owner: CreateTable with
``owner``, JoinSeat with ``account``, AddBot of the owner's bot account, StartTable; anyone
else setting ``owner`` or ``account`` is refused ``internal_only`` and nothing is written."""

from __future__ import annotations

import grpc

from roundhouse.v1 import lobby_pb2
from services.lobby.tests.harness import INTERNAL_SECRET
from services.lobby.tests.test_tables import DENIED, unchanged
from services.platform.auth import internal


def test_an_internal_service_runs_a_table_for_its_owner(lobby_env):
    async def body(env):
        org, ann = await env.person("org"), await env.person("ann")
        bot = await env.bot_account(org, "org-bot", "random")
        md = internal(INTERNAL_SECRET, "tournaments")
        table = await env.lobby.CreateTable(
            lobby_pb2.CreateTableRequest(title="railbarons", num_players=3, owner="org"),
            metadata=md,
        )
        assert (table.owner, table.owner_id) == ("org", org.account.id)
        tid = table.table_id
        await env.lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=tid, seat=0, account="ann"), metadata=md
        )
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=1, bot="org-bot"), metadata=md
        )
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=2, policy="greedy"), metadata=md
        )
        table = await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=md)
        assert table.status == lobby_pb2.TABLE_STATUS_RUNNING
        assert [s.account_id for s in table.seats][:2] == [ann.account.id, bot.account.id]
        # the seat is ann's: her token plays it
        view = await env.lobby.GetSeatView(
            lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ann.md
        )
        assert view is not None
        other = await env.table(ann, 3)
        for call in (
            env.lobby.CreateTable(
                lobby_pb2.CreateTableRequest(title="railbarons", num_players=3, owner="org"),
                metadata=ann.md,
            ),
            env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=other.table_id, seat=0, account="org"),
                metadata=ann.md,
            ),
        ):
            await unchanged(env, call, DENIED, "internal_only")
        await unchanged(
            env,
            env.lobby.CreateTable(
                lobby_pb2.CreateTableRequest(title="railbarons", num_players=3, owner="nobody"),
                metadata=md,
            ),
            grpc.StatusCode.NOT_FOUND,
            "unknown_account",
        )

    lobby_env(body)
