"""Bot tasks: one task per bot turn.

``play_turn`` reads the seat's view from the title's rules service (bots talk
to services only through gRPC), picks a move with the seat's policy and
submits it with the expected version and the idempotency key
``bot:<game id>:<version>:<seat>``. A stale task (the game moved on) does
nothing; a duplicated task gets the first answer back and moves once.

Failures: an unreachable or failing rules service is retried with back-off;
a policy that crashes is retried, and on the last attempt the seat plays a
``random`` legal move instead, so one bug never stalls a game (the crash is
logged as an error). A task whose worker dies mid-turn stops beating and
the dispatcher enqueues its turn again within seconds
(:mod:`services.bots.heartbeat`); a task lost anyway is found by the
dispatcher's stall sweep.
"""

from __future__ import annotations

import json

import grpc
from celery.exceptions import Reject

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.bots.celery_app import app
from services.bots.decide import choose_action
from services.platform.auth import internal
from services.platform.channels import game_metadata, rules_sync_channel
from services.platform.grpc_errors import error_reason
from services.platform.logging import get_logger
from services.platform.settings import BotSettings, get_settings

log = get_logger("bots")

MAX_RETRIES = 8
RETRY_CODES = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)

_stubs: dict[str, game_pb2_grpc.GameRulesStub] = {}


def rules_stub(title: str) -> game_pb2_grpc.GameRulesStub:
    """A cached stub per title (created lazily, so after the worker forks). Its channel
    routes each game's calls to one replica: pass :func:`game_metadata`."""
    stub = _stubs.get(title)
    if stub is None:
        channel = rules_sync_channel(
            get_settings(BotSettings).rules_addresses[title], internal_metadata()
        )
        stub = _stubs[title] = game_pb2_grpc.GameRulesStub(channel)
    return stub


def internal_metadata() -> tuple[tuple[str, str], ...]:
    """The bot workers' internal-service credentials (rules services refuse every call but
    health and reflection without them; their channels add them to each call)."""
    return internal(get_settings(BotSettings).internal_secret, "bots")


def idempotency_key(game_id: str, version: int, seat: int) -> str:
    return f"bot:{game_id}:{version}:{seat}"


def _backoff(retries: int) -> int:
    return min(2**retries, 30)


@app.task(
    name="roundhouse.bots.play_turn",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
)
def play_turn(self, title: str, game_id: str, seat: int, version: int, policy: str) -> str:
    """Play seat ``seat``'s move at ``version`` of ``game_id`` with ``policy``.

    Returns ``"moved"``, ``"stale"`` or ``"refused"`` (for logs).
    """
    stub = rules_stub(title)
    last_try = self.request.retries >= MAX_RETRIES
    try:
        view = stub.GetView(
            game_pb2.GetViewRequest(game_id=game_id, seat=seat),
            timeout=30,
            metadata=game_metadata(game_id),
        )
        if view.finished or view.version != version or seat not in view.active_seats:
            return "stale"
        secret = get_settings(BotSettings).bot_secret
        state_view = json.loads(view.view_json)
        try:
            action = choose_action(title, policy, stub, game_id, seat, version, state_view, secret)
        except grpc.RpcError:
            raise
        except Exception as exc:  # a policy crash
            if not last_try:
                log.exception(
                    "bot policy failed; retrying",
                    game_id=game_id,
                    seat=seat,
                    version=version,
                    policy=policy,
                    retries=self.request.retries,
                )
                raise self.retry(countdown=_backoff(self.request.retries), exc=exc) from exc
            log.exception(
                "bot policy failed on its last try; playing a random move",
                game_id=game_id,
                seat=seat,
                version=version,
                policy=policy,
            )
            action = choose_action(
                title, "random", stub, game_id, seat, version, state_view, secret
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
            metadata=game_metadata(game_id, internal_metadata()),
        )
        return "moved"
    except grpc.RpcError as err:
        code = err.code()
        if code in (grpc.StatusCode.ABORTED, grpc.StatusCode.NOT_FOUND):
            return "stale"
        if error_reason(err) == "idempotency_key_reused":  # a twin task moved first
            return "stale"
        if code in RETRY_CODES and not last_try:
            try:
                raise self.retry(countdown=_backoff(self.request.retries)) from err
            except Reject:  # the retry could not be published (Redis out of memory, say)
                log.warning(
                    "bot move unavailable and its retry not enqueued; the dispatcher enqueues "
                    "the turn again",
                    game_id=game_id,
                    seat=seat,
                    version=version,
                    reason=error_reason(err),
                )
                return "refused"
        log.error(
            "bot move refused",
            game_id=game_id,
            seat=seat,
            version=version,
            code=code.name,
            reason=error_reason(err),
            details=err.details(),
        )
        return "refused"
