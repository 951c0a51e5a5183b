"""Edge-case input to the real lobby and rules services (issue 13, item 6):
lone surrogates in a string or a member name, JSON nested 1,000 deep, huge
echoed input and undecodable protobuf strings are all INVALID_ARGUMENT with a
reason (never INTERNAL, never RESOURCE_EXHAUSTED from an oversized error
header), and leave the stream, the state and the tables unchanged."""

from __future__ import annotations

import uuid

import grpc
import pytest

from roundhouse.v1 import game_pb2, lobby_pb2
from services.platform.grpc_errors import error_reason
from tests.integration.test_bad_input import TITLE, first_legal, new_game, snapshot, submit

pytestmark = pytest.mark.integration

DEEP = "[" * 1000 + "]" * 1000
HUGE_TYPE = "x" * 200_000
MAX_DETAILS = 2000  # characters of error message: far below the ~8 KB header limit

BAD_ACTIONS = [
    ('{"type":"develop","hex":"\\ud800"}', "bad_unicode"),
    ('{"type":"bid","\\udfff":1}', "bad_unicode"),
    ('{"\\ud800":"bid"}', "bad_unicode"),
    (DEEP, "json_too_deep"),
    ('{"type":"bid","amount":' + DEEP + "}", "json_too_deep"),
    # a move is small: 200 KB is refused before it is parsed (services/platform/bounds.py)
    ('{"type":"' + HUGE_TYPE + '"}', "message_too_large"),
    ('{"type":"bid","' + HUGE_TYPE + '":1}', "message_too_large"),
    ('{"type":"' + "x" * 4000 + '"}', "unknown_action_type"),
    ('{"type":"bid","' + "x" * 4000 + '":1}', "unexpected_field"),
]

BAD_OPTIONS = [
    ('{"\\ud800":1}', "bad_options"),
    ('{"a":"\\udc00"}', "bad_options"),
    (DEEP, "bad_options"),
    ('{"a":' + DEEP + "}", "bad_options"),
    ('{"' + "x" * 4000 + '":1}', "bad_options"),
    ('{"' + HUGE_TYPE + '":1}', "message_too_large"),
]


def assert_invalid(err: grpc.RpcError, reason: str | None = None) -> None:
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, (err.code(), err.details()[:200])
    if reason is not None:
        assert error_reason(err) == reason
    assert err.details()
    assert len(err.details()) < MAX_DETAILS


@pytest.mark.parametrize(("bad", "reason"), BAD_ACTIONS, ids=range(len(BAD_ACTIONS)))
def test_bad_action_json_at_the_rules_service(rules, rdb, stack, bad, reason):
    stub, game_id = new_game(rules)
    version, seat, _ = first_legal(stub, game_id)
    before = snapshot(stub, rdb, stack.prefix, game_id)
    with pytest.raises(grpc.RpcError) as err:
        submit(stub, game_id, seat, version, action_json=bad, key="k-" + uuid.uuid4().hex)
    assert_invalid(err.value, reason)
    assert snapshot(stub, rdb, stack.prefix, game_id) == before


@pytest.mark.parametrize(("bad", "reason"), BAD_OPTIONS, ids=range(len(BAD_OPTIONS)))
def test_bad_options_at_the_rules_service_and_the_lobby(rules, lobby, rdb, stack, bad, reason):
    games = [rdb.xlen(k) for k in stack.keys.lifecycle_streams]
    with pytest.raises(grpc.RpcError) as err:
        rules[TITLE].CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, options_json=bad)
        )
    assert_invalid(err.value, reason)
    tables = sorted(rdb.scan_iter(f"{stack.prefix}:table:*"))
    with pytest.raises(grpc.RpcError) as err:
        lobby.CreateTable(
            lobby_pb2.CreateTableRequest(title=TITLE, num_players=3, options_json=bad)
        )
    assert_invalid(err.value)
    assert [rdb.xlen(k) for k in stack.keys.lifecycle_streams] == games
    assert sorted(rdb.scan_iter(f"{stack.prefix}:table:*")) == tables


def _player_table(lobby, people):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    players = {}
    for seat in range(2):
        players[seat] = people.sign_up()
        lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=seat),
            metadata=players[seat].md,
        )
    return lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id)), players


@pytest.mark.parametrize(("bad", "reason"), BAD_ACTIONS, ids=range(len(BAD_ACTIONS)))
def test_bad_action_json_through_the_lobby(lobby, people, rules, rdb, stack, bad, reason):
    table, players = _player_table(lobby, people)
    stub = rules[TITLE]
    version, seat, _ = first_legal(stub, table.game_id)
    before = snapshot(stub, rdb, stack.prefix, table.game_id)
    with pytest.raises(grpc.RpcError) as err:
        lobby.SubmitMove(
            lobby_pb2.SubmitMoveRequest(
                table_id=table.table_id,
                seat=seat,
                expected_version=version,
                action_json=bad,
                idempotency_key="k-" + uuid.uuid4().hex,
            ),
            metadata=players[seat].md,
            timeout=10,
        )
    assert_invalid(err.value, reason)
    assert snapshot(stub, rdb, stack.prefix, table.game_id) == before


def _raw_call(address: str, method: str, payload: bytes, response_type, metadata):
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(
            method,
            request_serializer=lambda b: b,
            response_deserializer=response_type.FromString,
        )
        return call(payload, timeout=10, metadata=metadata)


def test_undecodable_strings_are_invalid_argument(rules, people, internal_md, rdb, stack):
    """A protobuf string field holding bytes that are not UTF-8 (a surrogate's
    encoding) cannot be decoded: INVALID_ARGUMENT ``bad_request``."""
    stub, game_id = new_game(rules)
    version, seat, _ = first_legal(stub, game_id)
    before = snapshot(stub, rdb, stack.prefix, game_id)
    good = game_pb2.SubmitActionRequest(
        game_id=game_id, seat=seat, expected_version=version, action_json="x"
    ).SerializeToString()
    bad = good.replace(b"\x01x", b"\x03\xed\xa0\x80")  # action_json "x" -> 3 bad bytes
    assert bad != good
    with pytest.raises(grpc.RpcError) as err:
        _raw_call(
            stack.rules_addresses[TITLE],
            "/roundhouse.v1.GameRules/SubmitAction",
            bad,
            game_pb2.SubmitActionResponse,
            internal_md,
        )
    assert_invalid(err.value, "bad_request")
    assert snapshot(stub, rdb, stack.prefix, game_id) == before
    join = lobby_pb2.JoinSeatRequest(table_id="t", seat=0).SerializeToString()
    bad_join = join.replace(b"\x01t", b"\x03\xed\xa0\x80")  # table_id "t" -> 3 bad bytes
    assert bad_join != join
    with pytest.raises(grpc.RpcError) as err:
        _raw_call(
            stack.lobby_address,
            "/roundhouse.v1.Lobby/JoinSeat",
            bad_join,
            lobby_pb2.Table,
            people.sign_up().md,
        )
    assert_invalid(err.value, "bad_request")
