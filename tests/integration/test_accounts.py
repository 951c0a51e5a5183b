"""The accounts process of the stack (PostgreSQL store, Redis limiter): signing
up and in, WhoAmI, refusals, health and reflection."""

from __future__ import annotations

import uuid

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from roundhouse.v1 import accounts_pb2 as pb
from services.platform.auth import bearer, internal
from services.platform.grpc_errors import error_reason

pytestmark = pytest.mark.integration


def test_sign_up_sign_in_and_who_am_i_through_the_process(accounts):
    name = f"it_{uuid.uuid4().hex[:8]}"
    accounts.CreateAccount(pb.CreateAccountRequest(username=name, password="integration!"))
    reply = accounts.CreateToken(
        pb.CreateTokenRequest(username=name.upper(), password="integration!", scopes=["play"])
    )
    me = accounts.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(reply.token))
    assert me.account.username == name and list(me.scopes) == ["play"]
    with pytest.raises(grpc.RpcError) as err:
        accounts.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(reply.token + "x"))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(err.value) == "token_invalid"
    assert accounts.GetAccount(pb.GetAccountRequest(username="greedy-bot")).hosted_policy == (
        "greedy"
    )


def test_the_stack_shares_an_internal_secret_with_the_accounts(accounts, stack):
    with pytest.raises(grpc.RpcError) as err:
        accounts.WhoAmI(pb.WhoAmIRequest(), metadata=internal(stack.internal_secret, "tests"))
    # authenticated as a service (not refused as UNAUTHENTICATED), which has no account
    assert error_reason(err.value) == "not_an_account"


def test_health_and_reflection_need_no_token(stack):
    with grpc.insecure_channel(stack.accounts_address) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="roundhouse.v1.Accounts")
        )
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        (answer,) = list(
            stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            )
        )
        names = {s.name for s in answer.list_services_response.service}
        assert "roundhouse.v1.Accounts" in names
