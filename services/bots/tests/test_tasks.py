"""The bot task (services/bots/tasks.py) against a stand-in rules service:
duplicates submit the same move under the same idempotency key, stale tasks do
nothing, outages are retried, and a crashing policy falls back to a random
legal move on its last try instead of stalling the game."""

from __future__ import annotations

import json

import grpc
import pytest
from celery.exceptions import Retry

from roundhouse.v1 import game_pb2
from services.bots import tasks
from services.kernel.engine import ActionRange, is_listed
from services.platform.settings import BotSettings
from services.rules import protomap
from services.rules.titles import get_game

TITLE = "railbarons"


class Unavailable(grpc.RpcError):
    def code(self):
        return grpc.StatusCode.UNAVAILABLE

    def details(self):
        return "down"

    def trailing_metadata(self):
        return ()


class FakeRules:
    """A rules service holding one real railbarons state."""

    def __init__(self, fail_views: int = 0, title: str = TITLE):
        self.state = get_game(title).new_state(3, 7)
        self.title = title
        self.submitted: list[game_pb2.SubmitActionRequest] = []
        self.metadata: list[dict[str, str]] = []
        self.fail_views = fail_views

    def GetView(self, req, timeout=None, metadata=()):
        if self.fail_views:
            self.fail_views -= 1
            raise Unavailable()
        s = self.state
        return game_pb2.GetViewResponse(
            version=s.version,
            active_seats=list(s.active_seats()),
            finished=s.is_terminal(),
            view_json=json.dumps(s.view(req.seat)),
        )

    def ListLegalActions(self, req, timeout=None, metadata=()):
        entries = [a.to_json() for a in self.state.legal_actions(req.seat)]
        return protomap.legal_to_proto(self.title, entries, self.state.version)

    def SubmitAction(self, req, timeout=None, metadata=()):
        self.submitted.append(req)
        self.metadata.append(dict(metadata))
        return game_pb2.SubmitActionResponse(version=req.expected_version + 1)


@pytest.fixture(autouse=True)
def scheduled_retries(monkeypatch):
    """What the worker would do with task.retry(): schedule it (recorded here)."""
    scheduled = []

    def retry(countdown=None, exc=None, **kw):
        scheduled.append(countdown)
        return Retry("retry scheduled", exc, countdown)

    monkeypatch.setattr(tasks.play_turn, "retry", retry)
    return scheduled


@pytest.fixture
def rules(monkeypatch):
    fake = FakeRules()
    monkeypatch.setattr(tasks, "rules_stub", lambda title: fake)
    return fake


def run(seat, version, policy="random", retries=0, title=TITLE, game_id="g1"):
    task = tasks.play_turn
    task.push_request(retries=retries)
    try:
        return task.run(title, game_id, seat, version, policy)
    finally:
        task.pop_request()


@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_duplicated_tasks_submit_the_same_move_under_one_key(rules, policy):
    seat = rules.state.active_seats()[0]
    assert run(seat, 0, policy) == "moved"
    assert run(seat, 0, policy) == "moved"
    first, second = rules.submitted
    assert first.idempotency_key == second.idempotency_key == f"bot:g1:0:{seat}"
    assert first.action_json == second.action_json
    assert first.expected_version == 0
    legal = [json.dumps(a.to_json()) for a in rules.state.legal_actions(seat)]
    assert json.loads(first.action_json) in [json.loads(x) for x in legal]


def test_moves_carry_the_internal_credentials(rules, monkeypatch):
    """Rules services refuse every call without them (services/rules/serve.py); the
    game id header routes the call to the game's replica (services/platform/channels.py)."""
    monkeypatch.setattr(tasks, "get_settings", lambda cls: cls(internal_secret="s3cret"))
    assert run(rules.state.active_seats()[0], 0) == "moved"
    assert rules.metadata == [
        {
            "authorization": "Internal s3cret",
            "x-roundhouse-service": "bots",
            "roundhouse-game-id": "g1",
        }
    ]


def test_the_workers_rules_channel_sends_the_credentials_on_reads_too(monkeypatch):
    """``rules_stub``'s channel adds the internal credentials to every call, reads (a seat's
    hidden view) included: a real gRPC server sees them on a bare GetView."""
    from concurrent import futures

    from services.platform.channels import game_metadata

    seen: list[dict[str, str]] = []

    def get_view(request, context):
        seen.append(dict(context.invocation_metadata()))
        return game_pb2.GetViewResponse(version=7)

    handler = grpc.method_handlers_generic_handler(
        "roundhouse.v1.GameRules",
        {
            "GetView": grpc.unary_unary_rpc_method_handler(
                get_view,
                game_pb2.GetViewRequest.FromString,
                game_pb2.GetViewResponse.SerializeToString,
            )
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    settings = BotSettings(
        internal_secret="s3cret", rules_addresses={"railbarons": f"127.0.0.1:{port}"}
    )
    monkeypatch.setattr(tasks, "get_settings", lambda cls: settings)
    monkeypatch.setattr(tasks, "_stubs", {})
    try:
        stub = tasks.rules_stub("railbarons")
        request = game_pb2.GetViewRequest(game_id="g1", seat=0)
        assert stub.GetView(request, metadata=game_metadata("g1"), timeout=5).version == 7
    finally:
        server.stop(None)
    assert seen[0]["authorization"] == "Internal s3cret"
    assert seen[0]["x-roundhouse-service"] == "bots"
    assert seen[0]["roundhouse-game-id"] == "g1"


def test_a_stale_task_does_nothing(rules):
    seat = rules.state.active_seats()[0]
    assert run(seat, 3) == "stale"  # the game is not at version 3
    assert run((seat + 1) % 3, 0) == "stale"  # not that seat's turn
    assert rules.submitted == []


def test_an_outage_is_retried(monkeypatch, scheduled_retries):
    fake = FakeRules(fail_views=1)
    monkeypatch.setattr(tasks, "rules_stub", lambda title: fake)
    with pytest.raises(Retry):
        run(fake.state.active_seats()[0], 0)
    assert fake.submitted == [] and scheduled_retries == [1]


def test_a_crashing_policy_is_retried_then_replaced_by_a_random_move(rules, monkeypatch):
    real = tasks.choose_action

    def crashing(title, policy, *args, **kwargs):
        if policy == "greedy":
            raise RuntimeError("policy bug")
        return real(title, policy, *args, **kwargs)

    monkeypatch.setattr(tasks, "choose_action", crashing)
    seat = rules.state.active_seats()[0]
    with pytest.raises(Retry):
        run(seat, 0, "greedy")
    assert rules.submitted == []
    assert run(seat, 0, "greedy", retries=tasks.MAX_RETRIES) == "moved"
    assert len(rules.submitted) == 1


def test_the_random_bot_draws_prices_from_the_ranges_it_is_shown(monkeypatch):
    """1894's opening auction lists each private's bids as one range (e.g. 30..480 step 5):
    the random bot's moves are listed moves, an entry drawn uniformly, then a price drawn from
    inside the range where the entry is one."""
    fake = FakeRules(title="e1894")
    monkeypatch.setattr(tasks, "rules_stub", lambda title: fake)
    seat = fake.state.active_seats()[0]
    legal = fake.state.legal_actions(seat)
    ranges = [e for e in legal if isinstance(e, ActionRange)]
    assert ranges and all(e.step == 5 for e in ranges)
    for k in range(40):
        assert run(seat, 0, title="e1894", game_id=f"g{k}") == "moved"
    moves = [get_game("e1894").parse_action(r.action_json) for r in fake.submitted]
    assert all(is_listed(legal, m) for m in moves)
    inside = [m for m in moves if any(r.contains(m) for r in ranges)]
    share = len(ranges) / len(legal)  # every entry weighs the same (choose_per_entry)
    assert 0.5 * share * 40 <= len(inside) <= 40 and len(inside) < 40
    assert len({m.price for m in inside}) > 5 and max(m.price for m in inside) > 250


def test_the_random_bot_draws_from_the_play_out_subset_where_a_title_has_one():
    """The hosted random bot plays like the arena's: from ``playout_actions`` (1894 loops on
    all legal moves); the list of such titles matches the engines."""
    from services.bots.decide import PLAYOUT_SUBSET_TITLES
    from services.rules.titles import TITLE_MODULES

    for title in TITLE_MODULES:
        game = get_game(title)
        state = game.new_state(game.min_players, 1)
        assert (title in PLAYOUT_SUBSET_TITLES) == hasattr(state, "playout_actions"), title
