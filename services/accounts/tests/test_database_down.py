"""With the database down, account calls answer UNAVAILABLE
(``database_unavailable``) and write nothing; once it is back they work again.
Uses a private PostgreSQL cluster that the test stops and starts (never the
machine's shared server)."""

from __future__ import annotations

import asyncio

import grpc

from roundhouse.v1 import accounts_pb2 as pb
from services.accounts.tests.conftest import PASSWORD, bearer, reason, refused, running_accounts


def test_database_down_is_unavailable_and_recovers(private_postgres, redis_url, key_prefix):
    async def main():
        async with running_accounts(
            private_postgres.url, redis_url, key_prefix, cache_seconds=0
        ) as env:
            token = await env.person("uma")
            before = await env.counts()
            private_postgres.stop()
            calls = [
                env.stub.CreateAccount(
                    pb.CreateAccountRequest(username="victor", password=PASSWORD)
                ),
                env.stub.CreateToken(pb.CreateTokenRequest(username="uma", password=PASSWORD)),
                env.stub.GetAccount(pb.GetAccountRequest(username="uma")),
                env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token)),  # in the interceptor
                env.stub.ListBots(pb.ListBotsRequest(), metadata=bearer(token)),
            ]
            for call in calls:
                err = await refused(call, grpc.StatusCode.UNAVAILABLE)
                assert reason(err) == "database_unavailable"
                assert "database" in err.details() and "asyncpg" not in err.details()
            private_postgres.start()
            # the pool notices the restart (pre-ping) and reconnects
            me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token))
            assert me.account.username == "uma"
            assert await env.counts() == before  # nothing was half-written
            await env.stub.CreateAccount(
                pb.CreateAccountRequest(username="victor", password=PASSWORD)
            )
            assert (await env.counts())[0] == before[0] + 1

    asyncio.run(main())
