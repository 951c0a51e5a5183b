"""The SDK against a scripted HTTP transport: errors, models, stream resume."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from roundhouse_client import (
    AsyncClient,
    Client,
    Conflict,
    InvalidRequest,
    RateLimited,
    turn_moves,
)
from roundhouse_client.errors import Unauthenticated, Unavailable
from roundhouse_client.models import Move


def _client(handler) -> Client:
    client = Client("http://rh.test", token="rh_x", transport=httpx.MockTransport(handler))
    client.reconnect_delay_s = 0.0
    return client


def test_token_and_bearer_header():
    seen = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["auth"] = request.headers.get("authorization")
        seen["body"] = json.loads(request.content)
        return httpx.Response(200, json={"token": "rh_abc", "scopes": ["play"]})

    token = _client(handler).create_token("ada", "pw-long-enough", ["play"])
    assert token.token == "rh_abc" and token.scopes == ["play"]
    assert seen["auth"] == "Bearer rh_x"
    assert seen["body"] == {"username": "ada", "password": "pw-long-enough", "scopes": ["play"]}


@pytest.mark.parametrize(
    ("status", "cls", "code"),
    [
        (400, InvalidRequest, "dial_in_red"),
        (401, Unauthenticated, "token_invalid"),
        (409, Conflict, "stale_version"),
        (429, RateLimited, "rate_limited"),
        (503, Unavailable, "database_unavailable"),
    ],
)
def test_errors_are_typed_with_their_reason(status, cls, code):
    def handler(request):  # always the same answer: a 429 is retried, then raised
        body = {"code": code, "message": "no", "details": {"current_version": 7}}
        return httpx.Response(status, json=body, headers={"retry-after": "3"})

    client = _client(handler)
    client.rate_limit_retries = 0
    with pytest.raises(cls) as err:
        client.get_table("t1")
    assert err.value.code == code and err.value.status == status
    if cls is Conflict:
        assert err.value.current_version == 7
    if cls is RateLimited:
        assert err.value.retry_after == 3.0


def test_move_sends_an_idempotency_key_and_reads_the_answer():
    bodies = []

    def handler(request):
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={"version": 5, "active_seats": [1], "finished": False})

    client = _client(handler)
    result = client.move("t1", {"type": "pass"}, expected_version=4)
    client.move("t1", {"type": "pass"}, expected_version=4, idempotency_key="k1")
    assert result.version == 5 and result.active_seats == [1]
    assert bodies[0]["expected_version"] == 4 and len(bodies[0]["idempotency_key"]) == 32
    assert bodies[1]["idempotency_key"] == "k1"


def test_ranged_move_values():
    move = Move.model_validate(
        {
            "label": "Buy 2-train for 1-630 F",
            "action": {"type": "buy_train", "price": 1},
            "range": {"field": "price", "min": 1, "max": 630, "step": 1},
        }
    )
    assert move.with_value(630)["price"] == 630
    with pytest.raises(ValueError):
        move.with_value(631)
    with pytest.raises(ValueError):
        Move(label="Pass", action={"type": "pass"}).with_value(3)


def test_table_stream_resumes_after_a_drop_without_repeating():
    calls = []

    def handler(request):
        calls.append(dict(request.url.params))
        if len(calls) == 1:
            lines = [{"type": "state", "version": 3}, {"type": "move", "version": 4}, ""]
            body = "\n".join(json.dumps(x) if x else "" for x in lines) + "\n"
            return httpx.Response(200, content=body.encode())  # closes before the end
        body = [
            {"type": "move", "version": 4},  # repeated by the server: dropped by the client
            {"type": "move", "version": 5, "finished": True},
        ]
        return httpx.Response(200, content="\n".join(map(json.dumps, body)).encode())

    lines = list(_client(handler).stream_table("t1"))
    assert [line["version"] for line in lines] == [3, 4, 5]
    assert calls == [{}, {"from_version": "4"}]


def test_event_stream_resumes_after_the_last_event_id():
    calls = []

    def handler(request):
        calls.append(dict(request.url.params))
        if len(calls) == 1:
            return httpx.Response(200, content=b'{"id": "1-0", "type": "gameStart"}\n\n')
        if len(calls) == 2:
            raise httpx.ReadTimeout("silent", request=request)
        return httpx.Response(200, content=b'{"id": "2-0", "type": "yourTurn", "version": 1}\n')

    stream = _client(handler).stream_events()
    first, second = next(stream), next(stream)
    assert (first["type"], second["type"]) == ("gameStart", "yourTurn")
    assert calls == [{}, {"from_id": "1-0"}, {"from_id": "1-0"}]


def test_an_event_stream_with_moves_asks_for_them_again_on_resume_and_reads_them():
    calls = []
    turn = {
        "id": "2-0",
        "type": "yourTurn",
        "version": 4,
        "moves": [{"label": "Bid $7", "action": {"type": "bid", "amount": 7}}],
    }

    def handler(request):
        calls.append(dict(request.url.params))
        if len(calls) == 1:
            return httpx.Response(200, content=b'{"id": "1-0", "type": "gameStart"}\n')
        return httpx.Response(200, content=json.dumps(turn).encode() + b"\n")

    stream = _client(handler).stream_events(moves=True)
    first, second = next(stream), next(stream)
    assert turn_moves(first) is None
    moves = turn_moves(second)
    assert moves is not None and moves.version == 4
    assert [m.label for m in moves.moves] == ["Bid $7"]
    assert moves.moves[0].action == {"type": "bid", "amount": 7}
    assert turn_moves({**turn, "moves": None}) is None  # a turn that had passed
    assert calls == [{"moves": "true"}, {"moves": "true", "from_id": "1-0"}]


def test_async_client_streams_and_errors():
    async def scenario():
        def handler(request):
            if request.url.path.endswith("/moves"):
                return httpx.Response(
                    200,
                    json={"version": 2, "moves": [{"label": "Pass", "action": {"type": "pass"}}]},
                )
            if request.url.path.endswith("/stream"):
                return httpx.Response(
                    200, content=b'{"type": "state", "version": 2, "finished": true}\n'
                )
            return httpx.Response(404, json={"code": "table_not_found", "message": "no"})

        async with AsyncClient("http://rh.test", transport=httpx.MockTransport(handler)) as rh:
            moves = await rh.moves("t1")
            lines = [line async for line in rh.stream_table("t1")]
            with pytest.raises(Exception) as err:
                await rh.get_table("nope")
            return moves, lines, err.value

    moves, lines, error = asyncio.run(scenario())
    assert moves.moves[0].label == "Pass" and lines[0]["finished"] is True
    assert error.code == "table_not_found" and error.status == 404


def test_a_rate_limited_call_is_sent_again_after_the_wait_asked(monkeypatch):
    waits, calls = [], []
    monkeypatch.setattr("roundhouse_client.client.time.sleep", waits.append)

    def handler(request):
        calls.append(json.loads(request.content)["idempotency_key"])
        if len(calls) < 3:
            body = {
                "code": "move_rate",
                "message": "slow down",
                "details": {"retry_after_s": "0.5"},
            }
            return httpx.Response(429, json=body)
        return httpx.Response(200, json={"version": 2, "active_seats": [0], "finished": False})

    assert _client(handler).move("t1", {"type": "pass"}, expected_version=1).version == 2
    assert waits == [0.5, 0.5]
    assert len(set(calls)) == 1  # the same idempotency key each time


def test_rate_limit_retries_give_up_and_raise(monkeypatch):
    monkeypatch.setattr("roundhouse_client.client.time.sleep", lambda s: None)

    def handler(request):
        return httpx.Response(429, json={"code": "table_rate", "message": "no", "details": {}})

    client = _client(handler)
    client.rate_limit_retries = 2
    with pytest.raises(RateLimited) as err:
        client.create_table("railbarons", 3)
    assert err.value.code == "table_rate"


def test_review_methods_call_the_review_routes():
    calls = []
    review = {"table_id": "t1", "state": "queued", "progress": {"done": 0, "total": 3}}

    def handler(request):
        calls.append((request.method, request.url.path))
        if request.method == "GET":
            return httpx.Response(404, json={"code": "no_review", "message": "not reviewed"})
        return httpx.Response(202, json=review)

    client = _client(handler)
    with pytest.raises(Exception) as err:
        client.review("t1")
    assert getattr(err.value, "code", None) == "no_review"
    assert client.request_review("t1") == review
    assert calls == [("GET", "/api/tables/t1/review"), ("POST", "/api/tables/t1/review")]

    async def run():
        async with AsyncClient("http://rh.test", transport=httpx.MockTransport(handler)) as rh:
            return await rh.request_review("t1")

    assert asyncio.run(run()) == review


def test_a_typed_action_is_sent_as_its_canonical_json():
    from roundhouse_client.actions import E1894BuyTrain, RailbaronsBid, parse_action

    bodies = []

    def handler(request):
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={"version": 4, "active_seats": [1], "finished": False})

    client = _client(handler)
    client.move("t1", RailbaronsBid(amount=7), expected_version=3, idempotency_key="k")
    assert bodies[0]["action"] == {"type": "bid", "amount": 7}
    buy = parse_action(
        "e1894", {"type": "buy_train", "train": "2-3", "price": 300, "exchange": None}
    )
    assert isinstance(buy, E1894BuyTrain)
    client.move("t1", buy, expected_version=4)
    assert bodies[1]["action"] == {
        "type": "buy_train",
        "train": "2-3",
        "price": 300,
        "exchange": None,
    }
