"""``roundhouse serve rules <title>`` runs the title's own entry point, with
every service the title adds beside GameRules (e1894: Interchange), and answers only
the platform's own callers (issue 33, item 5): every call but health checking and
reflection needs the internal secret, and without a secret it does not start."""

from __future__ import annotations

import sys

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from roundhouse.v1 import e1894_interchange_pb2, e1894_interchange_pb2_grpc, game_pb2, game_pb2_grpc
from services.cli.launcher import Stack
from services.platform.auth import bearer, internal
from services.platform.channels import rules_sync_channel
from services.platform.grpc_errors import error_info

pytestmark = pytest.mark.integration

INTERCHANGE = "roundhouse.v1.e1894.Interchange"


def _serve(stack: Stack, title: str):
    return stack.spawn(
        f"serve-{title}", [sys.executable, "-m", "services.cli.main", "serve", "rules", title]
    )


def _refused(call, reason: str) -> None:
    with pytest.raises(grpc.RpcError) as err:
        call()
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, err.value.details()
    info = error_info(err.value)
    assert info is not None and info.reason == reason, (info, err.value.details())


def test_serve_rules_e1894_serves_interchange(redis_url, tmp_path):
    stack = Stack(["e1894"], redis_url=redis_url, run_dir=tmp_path)
    address = stack.rules_addresses["e1894"]
    try:
        _serve(stack, "e1894")
        stack.wait_healthy(address)
        with rules_sync_channel(address, internal(stack.internal_secret, "tests")) as channel:
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


def test_a_rules_service_answers_only_callers_with_the_internal_secret(redis_url, tmp_path):
    stack = Stack(["railbarons"], redis_url=redis_url, run_dir=tmp_path)
    address = stack.rules_addresses["railbarons"]
    create = game_pb2.CreateGameRequest(title="railbarons", num_players=2, seed=3)
    right = internal(stack.internal_secret, "tests")
    try:
        _serve(stack, "railbarons")
        stack.wait_healthy(address)  # health needs no credentials
        with grpc.insecure_channel(address) as bare, rules_sync_channel(address, right) as good:
            stub = game_pb2_grpc.GameRulesStub(bare)
            wrong = internal("not-" + stack.internal_secret, "tests")
            for md, reason in (
                ((), "token_missing"),
                (wrong, "token_invalid"),
                (bearer("rh_someones_token"), "internal_only"),
            ):
                game_id = f"g-{reason}"
                named = game_pb2.CreateGameRequest(
                    title="railbarons", num_players=2, seed=3, game_id=game_id
                )
                _refused(
                    lambda named=named, md=md: stub.CreateGame(named, metadata=md, timeout=5),
                    reason,
                )
                # the refused create made nothing: the rightful caller finds no such game
                with pytest.raises(grpc.RpcError) as err:
                    game_pb2_grpc.GameRulesStub(good).GetView(
                        game_pb2.GetViewRequest(game_id=game_id), timeout=5
                    )
                assert err.value.code() == grpc.StatusCode.NOT_FOUND
            created = game_pb2_grpc.GameRulesStub(good).CreateGame(create, timeout=5)
            hidden = game_pb2.GetViewRequest(game_id=created.info.game_id, seat=0)
            for md, reason in (((), "token_missing"), (wrong, "token_invalid")):
                for call in (
                    lambda md=md: stub.GetView(hidden, metadata=md, timeout=5),
                    lambda md=md: stub.ListLegalActions(
                        game_pb2.ListLegalActionsRequest(game_id=created.info.game_id, seat=0),
                        metadata=md,
                        timeout=5,
                    ),
                    lambda md=md: stub.GetResult(
                        game_pb2.GetResultRequest(game_id=created.info.game_id),
                        metadata=md,
                        timeout=5,
                    ),
                    lambda md=md: next(
                        stub.WatchGame(
                            game_pb2.WatchGameRequest(game_id=created.info.game_id),
                            metadata=md,
                            timeout=5,
                        )
                    ),
                ):
                    _refused(call, reason)
            _refused(lambda: stub.GetView(hidden, timeout=5), "token_missing")
            # the right secret (the channel adds it) sees the seat's view
            view = game_pb2_grpc.GameRulesStub(good).GetView(hidden, timeout=5)
            assert view.info.game_id == created.info.game_id and view.view_json
            answer = health_pb2_grpc.HealthStub(bare).Check(
                health_pb2.HealthCheckRequest(), timeout=5
            )
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        stack.stop()


def test_a_rules_service_without_a_secret_does_not_start(redis_url, tmp_path):
    stack = Stack(["railbarons"], redis_url=redis_url, run_dir=tmp_path)
    stack.internal_secret = ""
    try:
        proc = _serve(stack, "railbarons")
        assert proc.popen.wait(timeout=60) != 0
        assert "ROUNDHOUSE_INTERNAL_SECRET is not set" in proc.log_path.read_text()
    finally:
        stack.stop()
