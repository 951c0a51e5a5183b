"""The demo's tournament on the real processes, made smaller (8 hosted bot accounts,
tables of 4, 2 rounds of Chicago Express: 4 games instead of the demo's 9; the same
code paths) through the tournament service and the lobby, the bots playing on the
Celery worker. The tournament process is killed (SIGKILL) while round 1
plays and started again: nothing is lost, nothing is paired or created twice, and every
game is rated."""

from __future__ import annotations

import io
import os
import signal
import sys
import time

import grpc
import pytest
from rich.console import Console

from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc, tournaments_pb2, tournaments_pb2_grpc
from services.cli.demo import (
    DemoTournament,
    create_tournament_bots,
    run_tournament,
    sign_up_organiser,
)
from services.rules.titles import available_titles

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif("railbarons" not in available_titles(), reason="needs Chicago Express"),
]


SMALL = DemoTournament(players=8, rounds=2)
"""Two tables a round, and a second round paired from the first one's results."""


def _wait(predicate, timeout_s: float = 300, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout_s:.0f} s")
        time.sleep(0.3)


def _restart_tournaments(stack) -> None:
    proc = next(p for p in stack.procs if p.name == "tournaments")
    os.killpg(proc.popen.pid, signal.SIGKILL)
    proc.popen.wait(10)
    stack.procs.remove(proc)
    stack.spawn("tournaments", [sys.executable, "-m", "services.tournaments.service.server"])
    stack.wait_healthy(stack.tournaments_address)


def test_a_tournament_survives_its_process_killed_mid_round(stack, accounts):
    organiser = sign_up_organiser(accounts, {}, "cup-organiser")
    bots = create_tournament_bots(accounts, organiser, SMALL, prefix="kill-")
    md = organiser.md
    with (
        grpc.insecure_channel(stack.tournaments_address) as channel,
        grpc.insecure_channel(stack.lobby_address) as lobby_channel,
    ):
        stub = tournaments_pb2_grpc.TournamentsStub(channel)
        lobby = lobby_pb2_grpc.LobbyStub(lobby_channel)
        t = stub.CreateTournament(
            tournaments_pb2.CreateTournamentRequest(
                settings=tournaments_pb2.TournamentSettings(
                    name="Kill Cup",
                    title="railbarons",
                    table_size=4,
                    rounds=SMALL.rounds,
                    rated=True,
                    bots_allowed=True,
                    seed=11,
                )
            ),
            metadata=md,
        )
        tid = t.tournament_id
        for name in bots:
            stub.Register(
                tournaments_pb2.RegisterRequest(tournament_id=tid, account=name), metadata=md
            )
        t = stub.StartTournament(tournaments_pb2.TournamentRequest(tournament_id=tid), metadata=md)
        assert [x.status for x in t.rounds[0].tables] == ["running"] * 2
        _restart_tournaments(stack)  # killed while round 1 plays

        def finished():
            got = stub.GetTournament(tournaments_pb2.GetTournamentRequest(tournament_id=tid))
            return got.status == tournaments_pb2.TOURNAMENT_STATUS_FINISHED and got

        t = _wait(finished, what="the tournament's end")
        assert [r.round for r in t.rounds] == [1, 2]
        assert [x.status for r in t.rounds for x in r.tables] == ["finished"] * 4
        ids = [x.table_id for r in t.rounds for x in r.tables]
        assert len(set(ids)) == 4
        for table_id in ids:
            table = lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))
            assert table.status == lobby_pb2.TABLE_STATUS_FINISHED
            assert table.owner == "cup-organiser"
        assert all(s.games == 2 for s in t.standings)

        def rated():
            board = stub.GetLeaderboard(tournaments_pb2.LeaderboardRequest(title="railbarons"))
            games = {r.rating.username: r.rating.games for r in board.rows}
            return all(games.get(b) == 2 for b in bots)

        _wait(rated, 60, "every game rated")


def test_the_demo_tournament_prints_pairings_standings_and_the_leaderboard(stack, accounts):
    organiser = sign_up_organiser(accounts, {}, "demo-cup-org")
    out = io.StringIO()
    with grpc.insecure_channel(stack.tournaments_address) as channel:
        t = run_tournament(
            tournaments_pb2_grpc.TournamentsStub(channel),
            accounts,
            organiser,
            Console(file=out, width=120),
            stack,
            demo=SMALL,
            prefix="demo-",
        )
    text = out.getvalue()
    assert t.status == tournaments_pb2.TOURNAMENT_STATUS_FINISHED
    assert len(t.standings) == SMALL.players
    assert all(s.games == SMALL.rounds for s in t.standings)
    for heading in ("round 1 pairings", "round 2 pairings", "final standings", "leaderboard"):
        assert heading in text
