"""Every service kind in two replicas (issue 17, item 3): the lobby, accounts, the
gateway, the tournament service, the clock keeper, the archiver, the dispatcher and
the rules service each run as two processes on one Redis and one PostgreSQL
database (``Stack(replicas=2)``), and clients reach both replicas of a kind through
one ``ipv4:host:port,host:port`` address with round-robin channels.

What is checked, per kind:

* lobby, accounts, rules: a table created on one lobby replica is seated and started
  on the other; both replicas answer; every game's stream is contiguous (no version
  appended twice) and replays to the result the lobby recorded;
* gateway: a person signs up, signs in and plays a whole game through both gateways
  in turn;
* tournament service: a 2-round Swiss created on one replica and started on the
  other pairs each round once (two tables a round, none created twice);
* clock keeper: a seat that never moves times out exactly once, and a bot finishes
  the game;
* archiver: every finished game is archived once;
* dispatcher: both replicas take part in the consumer group and no bot move is
  applied twice (contiguous streams).

How the replicas avoid double work: Redis consumer groups (dispatcher, archiver,
keeper, tournament service, lobby consumers; each replica its own consumer name),
compare-and-set appends on the game log (rules), a Lua claim per due timeout
(keeper), and row locks with a primary key per round in PostgreSQL (tournaments). The
shared periodic jobs (the dispatcher's sweeps, the keeper's looks, the tournament
reconciler) run in the replica holding their lease (``services/platform/lease.py``), and
a game's rules calls go to one rules replica (``services/platform/channels.py``); neither
is needed for correctness, only to save work.
"""

from __future__ import annotations

import asyncio
import json
import time

import grpc
import httpx
import pytest
import redis

from roundhouse.v1 import (
    lobby_pb2,
    lobby_pb2_grpc,
    tournaments_pb2,
    tournaments_pb2_grpc,
)
from services.archive.store import ArchiveStore
from services.cli.demo import create_tournament_bots, sign_up_organiser
from services.cli.launcher import Stack
from services.platform.db import create_engine
from services.platform.hotstore import KeySpace
from services.platform.settings import StoreSettings
from services.rules.titles import available_titles
from tests.integration.conftest import QUOTAS
from tests.integration.faults import finish_and_verify
from tests.integration.signin import signed_in_lobby

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif("railbarons" not in available_titles(), reason="needs Chicago Express"),
]
TITLE = "railbarons"
KINDS = ["rules-railbarons", "lobby", "accounts", "dispatcher", "archiver", "tournaments",
         "clocks", "gateway"]  # fmt: skip


@pytest.fixture
def replicated(redis_url, database_url, tmp_path, monkeypatch):
    for name, value in QUOTAS.items():
        monkeypatch.setenv(name, value)
    with Stack(
        [TITLE],
        redis_url=redis_url,
        database_url=database_url,
        workers=2,
        run_dir=tmp_path,
        log_level="INFO",
        gateway=True,
        replicas=2,
    ) as stack:
        yield stack


def _wait(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout_s:.0f} s")
        time.sleep(0.3)
    return value


def _replica_stub(stack, kind: str, i: int, md):
    """A lobby stub on one replica only (by its own port), with ``md``'s token."""
    channel = grpc.insecure_channel(f"127.0.0.1:{stack.ports[kind][i]}")
    stub = lobby_pb2_grpc.LobbyStub(channel)
    return channel, stub


def _play_through_both_gateways(stack) -> str:
    """A person on seat 0 against a bot, every request to the next gateway in turn."""
    gateways = [httpx.Client(base_url=f"http://{a}", timeout=30) for a in stack.gateway_addresses]
    calls = 0

    def call(method: str, path: str, **kwargs):
        nonlocal calls
        answer = gateways[calls % 2].request(method, path, **kwargs)
        calls += 1
        assert answer.is_success, (path, answer.status_code, answer.text)
        return answer.json()

    try:
        person = {"username": "replica-person", "password": "correct horse battery"}
        call("POST", "/api/accounts", json=person)
        token = call("POST", "/api/tokens", json={**person, "scopes": ["play", "tables:write"]})
        auth = {"Authorization": f"Bearer {token['token']}"}
        table = call("POST", "/api/tables", json={"title": TITLE, "num_players": 2}, headers=auth)
        tid = table["table_id"]
        call("POST", f"/api/tables/{tid}/seats/0/join", headers=auth)
        call("POST", f"/api/tables/{tid}/seats/1/bot", json={"policy": "greedy"}, headers=auth)
        call("POST", f"/api/tables/{tid}/start", headers=auth)
        for _ in range(2000):
            if call("GET", f"/api/tables/{tid}", headers=auth)["status"] == "finished":
                break
            moves = call("GET", f"/api/tables/{tid}/moves", headers=auth)
            if not moves["moves"]:
                time.sleep(0.05)  # the bot's turn
                continue
            body = {
                "action": moves["moves"][0]["action"],
                "expected_version": moves["version"],
                "idempotency_key": f"replica-{moves['version']}",
            }
            answer = gateways[calls % 2].post(f"/api/tables/{tid}/moves", json=body, headers=auth)
            calls += 1
            # the bot may have moved since the read: a stale version is refused, nothing else
            assert answer.status_code == 200 or answer.json()["code"] == "stale_version", (
                answer.text
            )
        assert calls > 20
        return tid
    finally:
        for g in gateways:
            g.close()


def _tournament(stack, accounts_channel) -> tournaments_pb2.Tournament:
    from roundhouse.v1 import accounts_pb2_grpc

    accounts = accounts_pb2_grpc.AccountsStub(accounts_channel)
    organiser = sign_up_organiser(accounts, {}, "replica-organiser")
    bots = create_tournament_bots(accounts, organiser, prefix="rep-")[:8]
    md = organiser.md
    first, second = (
        grpc.insecure_channel(f"127.0.0.1:{port}") for port in stack.ports["tournaments"]
    )
    with first, second:
        one = tournaments_pb2_grpc.TournamentsStub(first)
        two = tournaments_pb2_grpc.TournamentsStub(second)
        t = one.CreateTournament(
            tournaments_pb2.CreateTournamentRequest(
                settings=tournaments_pb2.TournamentSettings(
                    name="Replica Cup",
                    title=TITLE,
                    table_size=4,
                    rounds=2,
                    rated=True,
                    bots_allowed=True,
                    seed=5,
                )
            ),
            metadata=md,
        )
        for i, name in enumerate(bots):
            stub = (one, two)[i % 2]
            stub.Register(
                tournaments_pb2.RegisterRequest(tournament_id=t.tournament_id, account=name),
                metadata=md,
            )
        two.StartTournament(
            tournaments_pb2.TournamentRequest(tournament_id=t.tournament_id), metadata=md
        )

        def finished():
            got = (one, two)[int(time.monotonic()) % 2].GetTournament(
                tournaments_pb2.GetTournamentRequest(tournament_id=t.tournament_id)
            )
            return got.status == tournaments_pb2.TOURNAMENT_STATUS_FINISHED and got

        return _wait(finished, 300, "the tournament's end")


def _groups(r: redis.Redis, prefix: str) -> dict[str, set[str]]:
    """Consumer group -> its consumers (a consumer exists once it has read from the
    group), over this stack's streams."""
    out: dict[str, set[str]] = {}
    for key in r.scan_iter(f"{prefix}:*", _type="stream"):
        for group in r.xinfo_groups(key):
            name = group["name"]
            consumers = {c["name"] for c in r.xinfo_consumers(key, name)}
            out.setdefault(name, set()).update(consumers)
    return out


def test_every_service_kind_runs_as_two_replicas_without_double_or_lost_work(replicated):
    stack = replicated
    names = [p.name for p in stack.procs]
    for kind in KINDS:
        assert kind in names and f"{kind}-1" in names, (kind, names)
    r = redis.Redis.from_url(stack.redis_url, decode_responses=True)
    with signed_in_lobby(stack) as (people, lobby):
        md = people.organiser.md
        # lobby, accounts, rules: made on one lobby replica, seated and started on the other
        tables = []
        (c0, lobby0), (c1, lobby1) = (_replica_stub(stack, "lobby", i, md) for i in (0, 1))
        with c0, c1:
            for seed in range(2):
                table = lobby0.CreateTable(
                    lobby_pb2.CreateTableRequest(title=TITLE, num_players=3, seed=seed), metadata=md
                )
                for seat in range(3):
                    lobby1.AddBot(
                        lobby_pb2.AddBotRequest(
                            table_id=table.table_id, seat=seat, policy="random"
                        ),
                        metadata=md,
                    )
                lobby1.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id), metadata=md)
                tables.append(table.table_id)
            # clock keeper: seat 0 is a person who never moves (2 s a move), the rest bots
            clocked = lobby1.CreateTable(
                lobby_pb2.CreateTableRequest(
                    title=TITLE,
                    num_players=3,
                    time_control=lobby_pb2.TimeControl(kind="live", base_s=0, increment_s=2),
                    timeout_policy="takeover",
                ),
                metadata=md,
            )
            lobby0.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=clocked.table_id, seat=0), metadata=md
            )
            for seat in (1, 2):
                lobby0.AddBot(
                    lobby_pb2.AddBotRequest(table_id=clocked.table_id, seat=seat, policy="random"),
                    metadata=md,
                )
            lobby0.StartTable(lobby_pb2.StartTableRequest(table_id=clocked.table_id), metadata=md)
        # gateway: a person plays a whole game through both gateways
        person_table = _play_through_both_gateways(stack)
        # tournament service
        with grpc.insecure_channel(stack.accounts_address) as accounts_channel:
            t = _tournament(stack, accounts_channel)
        assert [len(rnd.tables) for rnd in t.rounds] == [2, 2]  # each round paired once
        cup = [x.table_id for rnd in t.rounds for x in rnd.tables]
        assert len(set(cup)) == 4 and all(s.games == 2 for s in t.standings)
        for table_id in [*tables, person_table, *cup]:
            finish_and_verify(lobby, r, stack.prefix, table_id, timeout=300)
        # the clocked seat timed out exactly once, and the bots finished the game
        # (its log holds the timeout entry, which the plain engine's replay does not take)
        _wait(
            lambda: (
                lobby.GetTable(lobby_pb2.GetTableRequest(table_id=clocked.table_id)).status
                == lobby_pb2.TABLE_STATUS_FINISHED
            ),
            300,
            "the clocked game's end",
        )
        game_id = lobby.GetTable(lobby_pb2.GetTableRequest(table_id=clocked.table_id)).game_id
        log = r.xrange(KeySpace(stack.prefix).log(game_id))
        assert [int(sid.split("-")[0]) for sid, _ in log] == list(range(1, len(log) + 1))
        timeouts = [f for _, f in log if json.loads(f["action"]) == {"type": "timeout"}]
        assert len(timeouts) == 1 and int(timeouts[0]["seat"]) == 0
        everything = [*tables, clocked.table_id, person_table, *cup]
        game_ids = [
            lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid)).game_id for tid in everything
        ]
        lengths = {g: r.xlen(KeySpace(stack.prefix).log(g)) for g in game_ids}
    # archiver: each finished game archived once, whole (both archivers consume the lifecycle)
    archived = asyncio.run(_archived(stack.database_url, game_ids))
    assert archived == {g: list(range(1, lengths[g] + 1)) for g in game_ids}
    # both replicas of every consumer kind are members of their groups
    groups = _groups(r, stack.prefix)
    for group, consumers in groups.items():
        assert len(consumers) >= 2, (group, consumers)
    for p in stack.procs:
        assert p.popen.poll() is None, f"{p.name} exited"


async def _archived(database_url: str, game_ids: list[str]) -> dict[str, list[int]]:
    """Each game's archived versions, in order (waits for the archivers)."""
    engine = create_engine(database_url, StoreSettings())
    store = ArchiveStore(engine)
    try:
        deadline = time.monotonic() + 60
        while True:
            games = {g: await store.load(g) for g in game_ids}
            if all(games.values()) or time.monotonic() > deadline:
                return {
                    g: [e.version for e in stored.entries] if stored else []
                    for g, stored in games.items()
                }
            await asyncio.sleep(0.5)
    finally:
        await engine.dispose()
