"""Bot tasks: one task per bot turn.

``play_turn`` reads the seat's view from the title's rules service (bots talk
to services only through gRPC), picks a move with the seat's policy and
submits it with the expected version and the idempotency key
``bot:<game id>:<version>:<seat>``. A stale task (the game moved on) does
nothing; a duplicated task gets the first answer back and moves once.
"""

from __future__ import annotations

import json

import grpc

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.bots.celery_app import app
from services.bots.decide import choose_action
from services.common.logging import get_logger
from services.common.settings import get_settings

log = get_logger("bots")

_stubs: dict[str, game_pb2_grpc.GameRulesStub] = {}


def rules_stub(title: str) -> game_pb2_grpc.GameRulesStub:
    """A cached stub per title (created lazily, so after the worker forks)."""
    stub = _stubs.get(title)
    if stub is None:
        channel = grpc.insecure_channel(get_settings().rules_addresses[title])
        stub = _stubs[title] = game_pb2_grpc.GameRulesStub(channel)
    return stub


def idempotency_key(game_id: str, version: int, seat: int) -> str:
    return f"bot:{game_id}:{version}:{seat}"


@app.task(
    name="roundhouse.bots.play_turn",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=8,
)
def play_turn(self, title: str, game_id: str, seat: int, version: int, policy: str) -> str:
    """Play seat ``seat``'s move at ``version`` of ``game_id`` with ``policy``.

    Returns ``"moved"``, ``"stale"`` or ``"refused"`` (for logs). Retries with
    back-off while the rules service is unavailable.
    """
    stub = rules_stub(title)
    try:
        view = stub.GetView(game_pb2.GetViewRequest(game_id=game_id, seat=seat), timeout=30)
        if view.finished or view.version != version or seat not in view.active_seats:
            return "stale"
        action = choose_action(
            title, policy, stub, game_id, seat, version, json.loads(view.view_json)
        )
        stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game_id,
                seat=seat,
                action_json=json.dumps(action),
                expected_version=version,
                idempotency_key=idempotency_key(game_id, version, seat),
            ),
            timeout=30,
        )
        return "moved"
    except grpc.RpcError as err:
        code = err.code()
        if code in (grpc.StatusCode.ABORTED, grpc.StatusCode.NOT_FOUND):
            return "stale"
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise self.retry(countdown=min(2**self.request.retries, 30)) from err
        log.error(
            "bot move refused",
            game_id=game_id,
            seat=seat,
            version=version,
            code=code.name,
            details=err.details(),
        )
        return "refused"
    except Exception as exc:  # a policy crash: retry (a game must not stall on one error)
        log.exception(
            "bot policy failed",
            game_id=game_id,
            seat=seat,
            version=version,
            policy=policy,
            retries=self.request.retries,
        )
        raise self.retry(countdown=min(2**self.request.retries, 30), exc=exc) from exc
