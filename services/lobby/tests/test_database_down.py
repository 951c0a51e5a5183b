"""With the database down, lobby calls answer UNAVAILABLE
(``database_unavailable``) and change nothing; once it is back they work.
Uses a private PostgreSQL cluster that the test stops and starts."""

from __future__ import annotations

import asyncio

import grpc

from roundhouse.v1 import lobby_pb2
from services.lobby.tests.harness import refused, running_lobby


def test_database_down_is_unavailable_and_recovers(private_postgres, redis_url, key_prefix):
    async def main():
        async with running_lobby(private_postgres.url, redis_url, key_prefix) as env:
            ada = await env.person("ada")
            table = await env.table(ada, 2)  # ada's token is now in the verifier's cache
            tid = table.table_id
            before = await env.rows()
            private_postgres.stop()
            calls = [
                env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid)),
                env.lobby.ListTables(lobby_pb2.ListTablesRequest()),
                env.lobby.CreateTable(
                    lobby_pb2.CreateTableRequest(title="railbarons", num_players=2),
                    metadata=ada.md,
                ),
                env.lobby.JoinSeat(
                    lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md
                ),
                env.lobby.AddBot(
                    lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="random"),
                    metadata=ada.md,
                ),
            ]
            for call in calls:
                err = await refused(call, grpc.StatusCode.UNAVAILABLE, "database_unavailable")
                assert "asyncpg" not in err.details()
            private_postgres.start()
            assert await env.rows() == before  # nothing was half-written
            table = await env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md
            )
            assert table.seats[0].name == "ada"

    asyncio.run(main())
