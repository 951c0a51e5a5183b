"""``roundhouse serve rules <title>`` runs the title's own entry point, with
every service the title adds beside GameRules (e1894: Interchange)."""

from __future__ import annotations

import sys

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from roundhouse.v1 import e1894_interchange_pb2, e1894_interchange_pb2_grpc
from services.cli.launcher import Stack

pytestmark = pytest.mark.integration

INTERCHANGE = "roundhouse.v1.e1894.Interchange"


def test_serve_rules_e1894_serves_interchange(redis_url, tmp_path):
    stack = Stack(["e1894"], redis_url=redis_url, run_dir=tmp_path)
    address = stack.rules_addresses["e1894"]
    try:
        stack.spawn(
            "serve-e1894", [sys.executable, "-m", "services.cli.main", "serve", "rules", "e1894"]
        )
        stack.wait_healthy(address)
        with grpc.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            answer = health.Check(health_pb2.HealthCheckRequest(service=INTERCHANGE), timeout=5)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
            # and it answers: exporting an unknown game is NOT_FOUND, not UNIMPLEMENTED
            stub = e1894_interchange_pb2_grpc.InterchangeStub(channel)
            with pytest.raises(grpc.RpcError) as err:
                stub.ExportGame(e1894_interchange_pb2.ExportGameRequest(game_id="nope"), timeout=5)
            assert err.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        stack.stop()
