"""Game reviews over the lobby: RequestReview (a seated player or the owner, a finished
table, once) sends one review task on the review queue; GetReview reads the stored review."""

from __future__ import annotations

import asyncio

import grpc

from roundhouse.v1 import lobby_pb2
from services.bots.review import ReviewConfig
from services.bots.review_task import run_review
from services.lobby.events import lifecycle_to_events
from services.lobby.tests.harness import refused
from services.lobby.tests.test_races_and_resignation import _two_player_table
from services.platform.reviews import REVIEW_READY_ENTRY, REVIEW_TASK, review_queue

DENIED = grpc.StatusCode.PERMISSION_DENIED
REFUSED = grpc.StatusCode.FAILED_PRECONDITION


class SentTasks:
    """Records the tasks the lobby sends (instead of a broker)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, list, str]] = []

    def __call__(self, broker_url, prefix, args):
        self.sent.append((REVIEW_TASK, args, review_queue(prefix)))


def test_a_finished_table_is_reviewed_once_on_request(lobby_env, store_url):
    async def body(env):
        sent = SentTasks()
        env.servicer.send_review = sent
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        eve = await env.person("eve")
        request = lobby_pb2.GetTableRequest(table_id=tid)
        await refused(env.lobby.RequestReview(request, metadata=ada.md), REFUSED, "not_finished")
        for _ in range(3):
            view = await env.lobby.GetSeatView(
                lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
            )
            seat = view.active_seats[0]
            player = (ada, bob)[seat]
            me = lobby_pb2.SeatRequest(table_id=tid, seat=seat)
            legal = await env.lobby.ListMoves(me, metadata=player.md)
            await env.lobby.SubmitMove(
                lobby_pb2.SubmitMoveRequest(
                    table_id=tid,
                    seat=seat,
                    expected_version=view.version,
                    action_json=legal.actions_json[0],
                ),
                metadata=player.md,
            )
        await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md)
        await refused(env.lobby.GetReview(request), grpc.StatusCode.NOT_FOUND, "no_review")
        await refused(env.lobby.RequestReview(request, metadata=eve.md), DENIED, "not_seated")
        play_only = await env.token(ada.account, ["play"])
        await refused(
            env.lobby.RequestReview(request, metadata=play_only.md), DENIED, "scope_missing"
        )
        assert sent.sent == []
        first = await env.lobby.RequestReview(request, metadata=bob.md)
        assert (first.state, first.done, first.total) == ("queued", 0, 3)
        second = await env.lobby.RequestReview(request, metadata=ada.md)
        assert second == first
        assert len(sent.sent) == 1
        name, args, queue = sent.sent[0]
        assert name == REVIEW_TASK and queue == review_queue(env.settings.key_prefix)
        assert args[0] == tid and args[2] == 2 and len(args[5]) == 3
        # the worker's part, in a thread of its own (it runs its own event loop)
        outcome = await asyncio.to_thread(
            run_review,
            store_url,
            args[0],
            args[1],
            args[2],
            int(args[3]),
            args[4],
            args[5],
            ReviewConfig(max_iterations=4),
        )
        assert outcome == "done"
        done = await env.lobby.GetReview(request)
        assert done.state == "done" and done.done == done.total == 3
        assert [e.version for e in done.entries] == [1, 2, 3]
        assert all(len(e.win_chance_before) == 2 and e.label for e in done.entries)
        # the worker's announcement becomes a reviewReady for each player, once
        assert args[7] == table.game_id
        entry = {"type": REVIEW_READY_ENTRY, "game_id": table.game_id, "table_id": tid}
        assert await lifecycle_to_events(env.hot, env.servicer.events, entry) == 2
        assert await lifecycle_to_events(env.hot, env.servicer.events, entry) == 0
        for player, seat in ((ada, 0), (bob, 1)):
            mine = await env.servicer.events.after(player.account.id, "0-0")
            ready = [e for e in mine if e.type == "reviewReady"]
            assert len(ready) == 1 and ready[0].table_id == tid and ready[0].seat == seat

    lobby_env(body, resignation={"railbarons": "end"})
