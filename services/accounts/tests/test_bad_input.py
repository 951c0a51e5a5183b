"""Bad input to the accounts service: each refusal has its status code and
ErrorInfo reason, never echoes the hostile value, and writes nothing."""

from __future__ import annotations

import grpc
import pytest

from roundhouse.v1 import accounts_pb2 as pb
from services.accounts.tests.conftest import PASSWORD, bearer, meta, reason, refused

INVALID = grpc.StatusCode.INVALID_ARGUMENT

BAD_NAMES = [
    "",
    "a",
    "x" * 31,
    "x" * 100_000,
    "bob'; DROP TABLE accounts;--",
    "Robert'); DELETE FROM api_tokens; --",
    "' OR '1'='1",
    "<script>alert(1)</script>",
    "<b>bold</b>",
    "a b",
    "ålice",
    "bob\x00",
    "名前",
    "bob.smith",
]


@pytest.mark.parametrize("name", BAD_NAMES, ids=range(len(BAD_NAMES)))
def test_bad_usernames_are_refused_and_nothing_is_stored(accounts_env, name):
    async def body(env):
        owner = await env.person("the_owner")
        before = await env.counts()
        calls = [
            env.stub.CreateAccount(pb.CreateAccountRequest(username=name, password=PASSWORD)),
            env.stub.CreateBotAccount(
                pb.CreateBotAccountRequest(username=name), metadata=bearer(owner)
            ),
            env.stub.CreateToken(pb.CreateTokenRequest(username=name, password=PASSWORD)),
            env.stub.GetAccount(pb.GetAccountRequest(username=name)),
        ]
        for call in calls:
            err = await refused(call, INVALID)
            assert reason(err) == "bad_username"
            assert "2-30 characters" in err.details()
            if len(name) > 3:
                assert name not in err.details()
        assert await env.counts() == before

    accounts_env(body)


def test_duplicate_usernames_in_any_case_are_refused(accounts_env):
    async def body(env):
        await env.person("Zed")
        before = await env.counts()
        for name in ("Zed", "zed", "ZED", "zEd"):
            err = await refused(
                env.stub.CreateAccount(pb.CreateAccountRequest(username=name, password=PASSWORD)),
                grpc.StatusCode.ALREADY_EXISTS,
            )
            assert reason(err) == "username_taken"
        owner = await env.person("zed_owner")
        before = await env.counts()
        for name in ("ZED", "Random-Bot"):  # a person's name, a system bot's name
            err = await refused(
                env.stub.CreateBotAccount(
                    pb.CreateBotAccountRequest(username=name), metadata=bearer(owner)
                ),
                grpc.StatusCode.ALREADY_EXISTS,
            )
            assert reason(err) == "username_taken"
        assert await env.counts() == before

    accounts_env(body)


def test_password_limits(accounts_env):
    async def body(env):
        before = await env.counts()
        for password in ("", "7chars!", "x" * 129, "x" * 100_000):
            err = await refused(
                env.stub.CreateAccount(pb.CreateAccountRequest(username="pw", password=password)),
                INVALID,
            )
            assert reason(err) == "bad_password"
            assert meta(err) == {"min": "8", "max": "128"}
        err = await refused(
            env.stub.CreateToken(pb.CreateTokenRequest(username="pw", password="x" * 129)), INVALID
        )
        assert reason(err) == "bad_password"
        assert await env.counts() == before
        for name, password in (("pw_short", "8 chars!"), ("pw_long", "é" * 128)):
            await env.stub.CreateAccount(pb.CreateAccountRequest(username=name, password=password))
            await env.stub.CreateToken(pb.CreateTokenRequest(username=name, password=password))

    accounts_env(body)


def test_bad_token_requests_write_nothing(accounts_env):
    async def body(env):
        token = await env.person("tess")
        before = await env.counts()
        cases = [
            (dict(scopes=["play", "root"]), INVALID, "unknown_scope"),
            (dict(scopes=["x" * 10_000]), INVALID, "unknown_scope"),
            (dict(expires_in_seconds=-1), INVALID, "bad_expiry"),
            (dict(expires_in_seconds=11 * 365 * 24 * 3600), INVALID, "bad_expiry"),
            (dict(label="x" * 65), INVALID, "bad_label"),
            (dict(label="tab\tlabel"), INVALID, "bad_label"),
            (dict(scopes=["admin"]), grpc.StatusCode.PERMISSION_DENIED, "scope_not_allowed"),
            (dict(password="wrong password"), grpc.StatusCode.UNAUTHENTICATED, "bad_credentials"),
        ]
        for fields, code, why in cases:
            request = {"username": "tess", "password": PASSWORD, **fields}
            err = await refused(env.stub.CreateToken(pb.CreateTokenRequest(**request)), code)
            assert reason(err) == why, fields
        err = await refused(
            env.stub.CreateToken(pb.CreateTokenRequest(username="nobody", password=PASSWORD)),
            grpc.StatusCode.UNAUTHENTICATED,
        )
        assert reason(err) == "bad_credentials"  # the same answer: names are not revealed
        for token_id in ("", "1; DROP TABLE api_tokens", "Z" * 32):
            err = await refused(
                env.stub.RevokeToken(
                    pb.RevokeTokenRequest(token_id=token_id), metadata=bearer(token)
                ),
                INVALID,
            )
            assert reason(err) == "bad_token_id"
        err = await refused(
            env.stub.RevokeToken(pb.RevokeTokenRequest(token_id="0" * 32), metadata=bearer(token)),
            grpc.StatusCode.NOT_FOUND,
        )
        assert reason(err) == "unknown_token"
        err = await refused(
            env.stub.GetAccount(pb.GetAccountRequest(username="nobody")), grpc.StatusCode.NOT_FOUND
        )
        assert reason(err) == "unknown_account"
        assert await env.counts() == before

    accounts_env(body)


def test_calls_without_a_token_or_with_a_wrong_one(accounts_env):
    async def body(env):
        before = await env.counts()
        for metadata, why in (
            ((), "token_missing"),
            (bearer("rh_" + "A" * 43), "token_invalid"),
            (bearer("<script>"), "token_invalid"),
        ):
            err = await refused(
                env.stub.CreateBotAccount(
                    pb.CreateBotAccountRequest(username="sneaky"), metadata=metadata
                ),
                grpc.StatusCode.UNAUTHENTICATED,
            )
            assert reason(err) == why
        assert await env.counts() == before

    accounts_env(body)


def test_expired_and_revoked_tokens_write_nothing(accounts_env):
    async def body(env):
        import asyncio

        await env.person("wren")
        sign_in = dict(username="wren", password=PASSWORD, scopes=["bots:write"])
        short = (
            await env.stub.CreateToken(pb.CreateTokenRequest(**sign_in, expires_in_seconds=1))
        ).token
        revoked = await env.stub.CreateToken(pb.CreateTokenRequest(**sign_in))
        await env.stub.RevokeToken(
            pb.RevokeTokenRequest(token_id=revoked.info.token_id), metadata=bearer(revoked.token)
        )
        await asyncio.sleep(1.1)
        before = await env.counts()
        for token, why in ((short, "token_expired"), (revoked.token, "token_revoked")):
            for call in (
                env.stub.CreateBotAccount(
                    pb.CreateBotAccountRequest(username="wren-bot"), metadata=bearer(token)
                ),
                env.stub.RevokeToken(
                    pb.RevokeTokenRequest(token_id=revoked.info.token_id), metadata=bearer(token)
                ),
            ):
                err = await refused(call, grpc.StatusCode.UNAUTHENTICATED)
                assert reason(err) == why
        assert await env.counts() == before
        assert await env.store.by_username("wren-bot") is None

    accounts_env(body)
