"""The accounts *process* (``python -m services.accounts.server``) on a private
PostgreSQL cluster that the test stops and starts: calls answer UNAVAILABLE and
health turns NOT_SERVING while the database is down; both recover after."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from roundhouse.v1 import accounts_pb2 as pb
from roundhouse.v1 import accounts_pb2_grpc
from services.cli.launcher import free_port
from services.platform.grpc_errors import error_reason

pytestmark = pytest.mark.integration


def wait_for_health(stub, want, timeout: float = 30):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status
            if last == want:
                return
        except grpc.RpcError as err:
            last = err.code()
        time.sleep(0.2)
    raise AssertionError(f"health stayed {last}, wanted {want}")


def test_the_accounts_process_with_its_database_down(
    private_postgres, redis_url, key_prefix, tmp_path
):
    port = free_port()
    env = {
        **os.environ,
        "ROUNDHOUSE_DATABASE_URL": private_postgres.url,
        "ROUNDHOUSE_REDIS_URL": redis_url,
        "ROUNDHOUSE_KEY_PREFIX": key_prefix,
        "ROUNDHOUSE_ACCOUNTS_ADDRESS": f"127.0.0.1:{port}",
        "ROUNDHOUSE_DB_TIMEOUT_S": "2",
        "ROUNDHOUSE_LOG_FORMAT": "json",
    }
    log = open(tmp_path / "accounts.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.accounts.server"], env=env, stdout=log, stderr=log
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            accounts = accounts_pb2_grpc.AccountsStub(channel)
            wait_for_health(health, health_pb2.HealthCheckResponse.SERVING)
            accounts.CreateAccount(pb.CreateAccountRequest(username="wanda", password="password!"))
            private_postgres.stop()
            with pytest.raises(grpc.RpcError) as err:
                accounts.CreateAccount(
                    pb.CreateAccountRequest(username="xena", password="password!")
                )
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            assert error_reason(err.value) == "database_unavailable"
            wait_for_health(health, health_pb2.HealthCheckResponse.NOT_SERVING)
            private_postgres.start()
            wait_for_health(health, health_pb2.HealthCheckResponse.SERVING)
            accounts.CreateAccount(pb.CreateAccountRequest(username="xena", password="password!"))
            token = accounts.CreateToken(
                pb.CreateTokenRequest(username="wanda", password="password!", scopes=["play"])
            ).token
            assert token.startswith("rh_")
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    assert proc.returncode == 0, (tmp_path / "accounts.log").read_text()[-2000:]
