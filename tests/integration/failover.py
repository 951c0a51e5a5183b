"""Clients that play games through a rules service and remember every move it
acknowledged, and the check that none of them was lost (the Redis Cluster failover
test and ``benchmarks/bench_failover.py``).

A :class:`MoveClient` plays one game as its players' client would: it reads the seat to
move and its legal moves, sends one (chosen at random) with an idempotency key, and on
UNAVAILABLE (``storage_unavailable`` while a failover is under way, ``not_replicated``
when ``WAIT`` did not see the move on a replica in time) sends the same request again
with the same key until it is answered. An answered move is *acknowledged*: the client
keeps its version, action and the time window it was sent in. :func:`lost_moves` then
reads each game's log and counts the acknowledged moves that are not there: an entry at
that version with that action, appended within that window (a move lost and played
again afterwards has a later time, so it is told apart even when the same action is
chosen again).
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
from collections import Counter

import grpc
import redis

from roundhouse.v1 import game_pb2
from services.platform.grpc_errors import error_reason
from services.platform.hotstore import KeySpace

RETRY_S = 0.05
"""The pause before a refused move is sent again (the services' ``retry_after_s`` is 1 s;
a quicker client makes the test shorter and exercises the retries more)."""


@dataclasses.dataclass(frozen=True)
class Ack:
    """An acknowledged move: the version it made, its action, when it was sent and answered
    (ms since the epoch), and how long the answer took (s, the retries included)."""

    version: int
    action_json: str
    sent_ms: int
    acked_ms: int
    latency_s: float


class MoveClient(threading.Thread):
    """Plays ``game_id`` on ``stub`` (internal credentials) until ``stop`` is set, the game
    ends or ``max_moves`` were acknowledged.

    Attributes: ``acks`` (every :class:`Ack`, in order: after a rewind a version is
    acknowledged again, and both are kept), ``refusals`` (reason -> count of
    UNAVAILABLE answers retried), ``errors`` (unexpected answers, which fail the check).
    """

    def __init__(
        self,
        stub,
        game_id: str,
        stop: threading.Event,
        max_moves: int = 10**9,
        seed: int | None = None,
    ) -> None:
        super().__init__(daemon=True, name=f"client-{game_id}")
        self.stub, self.game_id, self.stop, self.max_moves = stub, game_id, stop, max_moves
        self.rng = random.Random(seed)
        self.acks: list[Ack] = []
        self.refusals: Counter[str] = Counter()
        self.errors: list[str] = []
        self.finished = False

    def _call(self, method, request):
        """One read, retried through UNAVAILABLE (a failover)."""
        while not self.stop.is_set():
            try:
                return method(request, timeout=10)
            except grpc.RpcError as err:
                if err.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                ):
                    raise
                self.refusals[error_reason(err) or err.code().name] += 1
                time.sleep(RETRY_S)
        return None

    def run(self) -> None:
        try:
            self._play()
        except grpc.RpcError as err:
            self.errors.append(f"{err.code().name} {error_reason(err)}: {err.details()}")

    def _play(self) -> None:
        while not self.stop.is_set() and len(self.acks) < self.max_moves:
            view = self._call(self.stub.GetView, game_pb2.GetViewRequest(game_id=self.game_id))
            if view is None:
                return
            if view.finished:
                self.finished = True
                return
            seat = view.active_seats[0]
            legal = self._call(
                self.stub.ListLegalActions,
                game_pb2.ListLegalActionsRequest(game_id=self.game_id, seat=seat),
            )
            if legal is None:
                return
            if legal.version != view.version or not legal.actions_json:
                continue  # moved on meanwhile
            action = self.rng.choice(list(legal.actions_json))
            self._submit(seat, view.version, action)

    def _submit(self, seat: int, version: int, action: str) -> None:
        request = game_pb2.SubmitActionRequest(
            game_id=self.game_id,
            seat=seat,
            expected_version=version,
            action_json=action,
            idempotency_key=f"{self.game_id}:{version}:{self.rng.getrandbits(64):x}",
        )
        sent_ms, started = int(time.time() * 1000), time.perf_counter()
        while not self.stop.is_set():
            try:
                answer = self.stub.SubmitAction(request, timeout=10)
            except grpc.RpcError as err:
                reason = error_reason(err)
                if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    self.refusals[reason or err.code().name] += 1
                    time.sleep(RETRY_S)
                    continue
                if reason in ("stale_version", "future_version"):
                    return  # the game is elsewhere (a rewind): read it again
                raise
            self.acks.append(
                Ack(
                    answer.version,
                    action,
                    sent_ms,
                    int(time.time() * 1000),
                    time.perf_counter() - started,
                )
            )
            return


def lost_moves(
    client: redis.Redis | redis.RedisCluster, keys: KeySpace, clients: list[MoveClient]
) -> list[tuple[str, Ack]]:
    """The acknowledged moves that the games' logs do not hold (module docstring)."""
    lost = []
    for c in clients:
        entries = {
            int(fields["version"]): fields for _, fields in client.xrange(keys.log(c.game_id))
        }
        for ack in c.acks:
            entry = entries.get(ack.version)
            kept = (
                entry is not None
                and json.loads(entry["action"]) == json.loads(ack.action_json)
                and ack.sent_ms - 5 <= int(entry["at"]) <= ack.acked_ms + 5
            )
            if not kept:
                lost.append((c.game_id, ack))
    return lost


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` (nearest rank); 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]
