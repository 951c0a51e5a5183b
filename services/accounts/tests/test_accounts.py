"""Accounts over gRPC against the real store (PostgreSQL and SQLite) and Redis:
sign-up, sign-in, tokens (scopes, expiry, revocation), WhoAmI, bot accounts,
system bots, admins, the sign-in limiter and internal callers."""

from __future__ import annotations

import asyncio
import hashlib

import grpc
import sqlalchemy as sa

from roundhouse.v1 import accounts_pb2 as pb
from services.accounts.cli import create_admin
from services.accounts.models import Account, ApiToken
from services.accounts.tests.conftest import INTERNAL_SECRET, PASSWORD, meta, reason, refused
from services.platform.auth import bearer, client_address_metadata, internal

DENIED = grpc.StatusCode.PERMISSION_DENIED
UNAUTH = grpc.StatusCode.UNAUTHENTICATED


def sign_in(name, scopes=(), password=PASSWORD, **kw):
    return pb.CreateTokenRequest(username=name, password=password, scopes=list(scopes), **kw)


def test_sign_up_sign_in_and_who_am_i(accounts_env):
    async def body(env):
        created = await env.stub.CreateAccount(
            pb.CreateAccountRequest(username="Alice_1", password=PASSWORD)
        )
        assert created.kind == pb.ACCOUNT_KIND_HUMAN and created.username == "Alice_1"
        reply = await env.stub.CreateToken(
            sign_in("alice_1", ["play", "tables:write"], label="cli")
        )
        assert reply.token.startswith("rh_") and len(reply.token) > 40
        assert list(reply.info.scopes) == ["play", "tables:write"]
        me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(reply.token))
        assert me.account.username == "Alice_1" and me.account.account_id == created.account_id
        assert me.account.kind == pb.ACCOUNT_KIND_HUMAN and not me.account.bot_owner
        assert list(me.scopes) == ["play", "tables:write"]
        assert me.account.created_at.seconds > 0 and me.token.token_id == reply.info.token_id
        assert me.token.label == "cli" and not me.token.HasField("expires_at")
        public = await env.stub.GetAccount(pb.GetAccountRequest(username="ALICE_1"))
        assert public.account_id == created.account_id

    accounts_env(body)


def test_only_hashes_are_stored(accounts_env):
    async def body(env):
        token = await env.person("hashed")
        async with env.store.sessions() as s:
            account = await s.scalar(sa.select(Account).where(Account.username == "hashed"))
            rows = (await s.scalars(sa.select(ApiToken))).all()
        assert account.password_hash.startswith("$argon2id$")
        assert PASSWORD not in account.password_hash
        assert [r.token_hash for r in rows] == [hashlib.sha256(token.encode()).hexdigest()]

    accounts_env(body)


def test_system_bot_accounts_name_the_hosted_policies(accounts_env):
    async def body(env):
        tiers = ("random", "greedy", "search-easy", "search-medium", "search-hard")
        for policy in tiers:  # one hosted account per strength tier
            bot = await env.stub.GetAccount(pb.GetAccountRequest(username=f"{policy}-bot"))
            assert bot.kind == pb.ACCOUNT_KIND_SYSTEM and bot.hosted_policy == policy
        # nobody can sign in as one
        err = await refused(env.stub.CreateToken(sign_in("greedy-bot")), UNAUTH)
        assert reason(err) == "bad_credentials"

    accounts_env(body)


def test_list_and_revoke_tokens(accounts_env):
    async def body(env):
        first = await env.person("bob")
        second = (await env.stub.CreateToken(sign_in("bob", ["play"], label="phone"))).token
        listed = await env.stub.ListTokens(pb.ListTokensRequest(), metadata=bearer(first))
        assert [t.label for t in listed.tokens] == ["", "phone"]
        phone = listed.tokens[1]
        revoked = await env.stub.RevokeToken(
            pb.RevokeTokenRequest(token_id=phone.token_id), metadata=bearer(first)
        )
        assert revoked.HasField("revoked_at")
        err = await refused(env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(second)), UNAUTH)
        assert reason(err) == "token_revoked"
        listed = await env.stub.ListTokens(pb.ListTokensRequest(), metadata=bearer(first))
        assert [t.HasField("revoked_at") for t in listed.tokens] == [False, True]
        # someone else's token: PERMISSION_DENIED, and it stays valid
        carol = await env.person("carol")
        first_id = listed.tokens[0].token_id
        err = await refused(
            env.stub.RevokeToken(pb.RevokeTokenRequest(token_id=first_id), metadata=bearer(carol)),
            DENIED,
        )
        assert reason(err) == "not_owner"
        err = await refused(
            env.stub.ListTokens(pb.ListTokensRequest(username="bob"), metadata=bearer(carol)),
            DENIED,
        )
        assert reason(err) == "not_owner"
        await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(first))

    accounts_env(body)


def test_a_revocation_reaches_another_server_within_the_cache_time(
    accounts_env, store_url, redis_url, key_prefix
):
    from services.accounts.tests.conftest import running_accounts

    async def body(a):
        async with running_accounts(store_url, redis_url, key_prefix, cache_seconds=0.5) as b:
            token = await a.person("dora")
            me = await b.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token))  # b caches it
            await a.stub.RevokeToken(
                pb.RevokeTokenRequest(token_id=me.token.token_id), metadata=bearer(token)
            )
            await asyncio.sleep(0.6)
            err = await refused(
                b.stub.ListBots(pb.ListBotsRequest(), metadata=bearer(token)), UNAUTH
            )
            assert reason(err) == "token_revoked"

    accounts_env(body, cache_seconds=0.5)


def test_an_expired_token_is_refused(accounts_env):
    async def body(env):
        await env.person("erin")
        token = (await env.stub.CreateToken(sign_in("erin", ["play"], expires_in_seconds=1))).token
        me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token))
        assert me.token.HasField("expires_at")
        await asyncio.sleep(1.1)
        err = await refused(env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token)), UNAUTH)
        assert reason(err) == "token_expired"

    accounts_env(body)


def test_bot_accounts_are_owned_and_play_with_their_own_tokens(accounts_env):
    async def body(env):
        owner = await env.person("owner")
        bot = await env.stub.CreateBotAccount(
            pb.CreateBotAccountRequest(username="owner-bot1", password=PASSWORD),
            metadata=bearer(owner),
        )
        assert bot.kind == pb.ACCOUNT_KIND_BOT and bot.bot_owner == "owner"
        assert not bot.hosted_policy
        # the bot signs in itself, like a person, and gets bot:play (never play)
        token = (await env.stub.CreateToken(sign_in("owner-bot1", ["bot:play"]))).token
        me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token))
        assert me.account.kind == pb.ACCOUNT_KIND_BOT and list(me.scopes) == ["bot:play"]
        assert me.account.bot_owner == "owner"
        err = await refused(env.stub.CreateToken(sign_in("owner-bot1", ["play"])), DENIED)
        assert (reason(err), meta(err)["scope"]) == ("scope_not_allowed", "play")
        err = await refused(env.stub.CreateToken(sign_in("owner", ["bot:play"])), DENIED)
        assert (reason(err), meta(err)["scope"]) == ("scope_not_allowed", "bot:play")
        # the owner mints its tokens and binds it to a hosted policy
        minted = await env.stub.CreateBotToken(
            pb.CreateBotTokenRequest(username="owner-bot1", scopes=["bot:play"]),
            metadata=bearer(owner),
        )
        assert (
            await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(minted.token))
        ).account.kind == pb.ACCOUNT_KIND_BOT
        hosted = await env.stub.SetBotPolicy(
            pb.SetBotPolicyRequest(username="owner-bot1", hosted_policy="greedy"),
            metadata=bearer(owner),
        )
        assert hosted.hosted_policy == "greedy" and hosted.kind == pb.ACCOUNT_KIND_BOT
        listed = await env.stub.ListBots(pb.ListBotsRequest(), metadata=bearer(owner))
        assert [b.username for b in listed.bots] == ["owner-bot1"]
        # a hosted bot without a password
        hosted2 = await env.stub.CreateBotAccount(
            pb.CreateBotAccountRequest(username="owner-bot2", hosted_policy="random"),
            metadata=bearer(owner),
        )
        assert hosted2.hosted_policy == "random"
        # another person may not manage them
        other = await env.person("other")
        for call in (
            env.stub.SetBotPolicy(
                pb.SetBotPolicyRequest(username="owner-bot1", hosted_policy=""),
                metadata=bearer(other),
            ),
            env.stub.CreateBotToken(
                pb.CreateBotTokenRequest(username="owner-bot1", scopes=["bot:play"]),
                metadata=bearer(other),
            ),
            env.stub.ListTokens(
                pb.ListTokensRequest(username="owner-bot1"), metadata=bearer(other)
            ),
        ):
            assert reason(await refused(call, DENIED)) == "not_owner"
        # the owner sees the bot's tokens; a person is never a bot
        tokens = await env.stub.ListTokens(
            pb.ListTokensRequest(username="owner-bot1"), metadata=bearer(owner)
        )
        assert len(tokens.tokens) == 2
        err = await refused(
            env.stub.SetBotPolicy(
                pb.SetBotPolicyRequest(username="other", hosted_policy="random"),
                metadata=bearer(owner),
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
        )
        assert reason(err) == "not_a_bot"
        err = await refused(
            env.stub.SetBotPolicy(
                pb.SetBotPolicyRequest(username="owner-bot1", hosted_policy="alphazero"),
                metadata=bearer(owner),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
        )
        assert reason(err) == "unknown_policy"

    accounts_env(body)


def test_bot_management_needs_the_bots_write_scope_and_a_person(accounts_env):
    async def body(env):
        player = await env.person("player", scopes=["play"])
        before = await env.counts()
        err = await refused(
            env.stub.CreateBotAccount(
                pb.CreateBotAccountRequest(username="nope-bot"), metadata=bearer(player)
            ),
            DENIED,
        )
        assert (reason(err), meta(err)["scope"]) == ("scope_missing", "bots:write")
        assert await env.counts() == before

    accounts_env(body)


def test_admins_are_made_on_the_command_line(accounts_env, store_url):
    async def body(env):
        print(await create_admin(store_url, "root_admin", PASSWORD, promote=False))
        token = (await env.stub.CreateToken(sign_in("root_admin", ["admin"]))).token
        me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token))
        assert me.account.is_admin and list(me.scopes) == ["admin"]
        public = await env.stub.GetAccount(pb.GetAccountRequest(username="root_admin"))
        assert not public.is_admin  # the role is not shown to others
        other = await env.person("someone")
        listed = await env.stub.ListTokens(
            pb.ListTokensRequest(username="someone"), metadata=bearer(token)
        )
        assert len(listed.tokens) == 1
        err = await refused(env.stub.CreateToken(sign_in("someone", ["admin"])), DENIED)
        assert (reason(err), meta(err)["scope"]) == ("scope_not_allowed", "admin")
        await create_admin(store_url, "someone", None, promote=True)
        admin_token = (await env.stub.CreateToken(sign_in("someone", ["admin"]))).token
        me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(admin_token))
        assert me.account.is_admin
        # an admin account's token without the admin scope does not act as admin
        plain = (await env.stub.CreateToken(sign_in("root_admin", ["play"]))).token
        err = await refused(
            env.stub.ListTokens(pb.ListTokensRequest(username="someone"), metadata=bearer(plain)),
            DENIED,
        )
        assert reason(err) == "not_owner" and other

    accounts_env(body)


def from_address(address: str, secret: str = INTERNAL_SECRET):
    """The metadata of a sign-in the gateway forwards for a client at ``address``."""
    return client_address_metadata(secret, address)


def test_failed_sign_ins_are_rate_limited_per_username_and_address(accounts_env):
    async def body(env):
        await env.person("frank")
        for _ in range(3):
            err = await refused(
                env.stub.CreateToken(
                    sign_in("frank", password="wrong-pass"), metadata=from_address("10.0.0.66")
                ),
                UNAUTH,
            )
            assert reason(err) == "bad_credentials"
        # the pair's budget is spent: even the right password from that address waits
        err = await refused(
            env.stub.CreateToken(sign_in("FRANK"), metadata=from_address("10.0.0.66")),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        )
        assert reason(err) == "too_many_failures" and 0 < int(meta(err)["retry_after_s"]) <= 60
        before = await env.counts()
        await refused(
            env.stub.CreateToken(sign_in("frank"), metadata=from_address("10.0.0.66")),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        )
        assert await env.counts() == before
        # the owner from another address is not locked out; other usernames are not affected
        await env.stub.CreateToken(sign_in("frank"), metadata=from_address("10.0.0.1"))
        await env.person("grace")

    accounts_env(body, per_pair="3/minute")


def test_the_pair_limit_is_a_backoff(redis_url, key_prefix):
    """Windows of growing length: once a longer window is spent too, the wait is its (the
    longest spent); a success clears the pair, and other pairs never counted."""
    from services.accounts.limiter import SigninLimiter
    from services.platform.grpc_errors import ServiceError

    async def body():
        limiter = SigninLimiter(redis_url, key_prefix, "2/minute;3/hour", "100/minute")
        await limiter.failed("hedy", "10.0.0.7")
        await limiter.check("hedy", "10.0.0.7")
        await limiter.failed("hedy", "10.0.0.7")
        try:
            await limiter.check("hedy", "10.0.0.7")
        except ServiceError as err:
            assert err.metadata["limit"] == "2 per 1 minute"
            assert int(err.metadata["retry_after_s"]) <= 60
        else:
            raise AssertionError("two failures: the first window is spent")
        await limiter.failed("hedy", "10.0.0.7")  # (a failure counted by another replica)
        try:
            await limiter.check("HEDY", "10.0.0.7")
        except ServiceError as err:
            assert err.reason == "too_many_failures" and err.metadata["limit"] == "3 per 1 hour"
            assert int(err.metadata["retry_after_s"]) > 60
        else:
            raise AssertionError("three failures: the hour's window is spent")
        await limiter.check("hedy", "10.0.0.8")  # another address: nothing counted
        await limiter.succeeded("hedy", "10.0.0.7")
        await limiter.check("hedy", "10.0.0.7")

    asyncio.run(body())


def test_failed_sign_ins_are_rate_limited_per_peer(accounts_env):
    async def body(env):
        for i in range(4):
            await refused(env.stub.CreateToken(sign_in(f"ghost{i}")), UNAUTH)
        err = await refused(
            env.stub.CreateToken(sign_in("ghost9")), grpc.StatusCode.RESOURCE_EXHAUSTED
        )
        assert reason(err) == "too_many_failures" and int(meta(err)["retry_after_s"]) > 0
        # another client behind the gateway has its own budget
        await refused(
            env.stub.CreateToken(sign_in("ghost9"), metadata=from_address("10.1.2.3")), UNAUTH
        )

    accounts_env(body, per_peer="4/minute")


def test_a_forwarded_address_without_the_gateways_proof_is_ignored(accounts_env):
    async def body(env):
        for i in range(2):
            forged = from_address(f"10.9.9.{i}", secret="not-the-secret")
            await refused(env.stub.CreateToken(sign_in(f"ghost{i}"), metadata=forged), UNAUTH)
        err = await refused(
            env.stub.CreateToken(sign_in("ghost9"), metadata=from_address("10.9.9.9", "x")),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        )  # all three counted against the caller's own address
        assert reason(err) == "too_many_failures"

    accounts_env(body, per_peer="2/minute")


def test_internal_services_authenticate_with_the_shared_secret(accounts_env):
    async def body(env):
        err = await refused(
            env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=internal(INTERNAL_SECRET, "dispatcher")),
            grpc.StatusCode.FAILED_PRECONDITION,
        )
        assert reason(err) == "not_an_account"  # authenticated, but not an account
        err = await refused(
            env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=internal("guess", "dispatcher")), UNAUTH
        )
        assert reason(err) == "token_invalid"
        err = await refused(
            env.stub.WhoAmI(
                pb.WhoAmIRequest(), metadata=(("authorization", f"Internal {INTERNAL_SECRET}"),)
            ),
            UNAUTH,
        )
        assert reason(err) == "bad_authorization"

    accounts_env(body)
