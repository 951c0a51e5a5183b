"""The tournament service over gRPC on PostgreSQL and SQLite, tables simulated (results
recorded by the organiser): a Swiss from registration to the final standings, late
entries, dropouts, export, and the issue's bad input (each refused with a reason,
nothing changed)."""

from __future__ import annotations

import asyncio
import csv
import io
import json

import grpc
import pytest

from roundhouse.v1 import lobby_pb2
from roundhouse.v1 import tournaments_pb2 as pb
from services.tournaments.service.tests.harness import reason, running_tournaments

INVALID = grpc.StatusCode.INVALID_ARGUMENT
REFUSED = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED


@pytest.fixture
def env_run(store_url):
    def run(body, **kw):
        async def main():
            async with running_tournaments(store_url, **kw) as env:
                return await body(env)

        return asyncio.run(main())

    return run


async def _field(env, n: int, prefix: str = "p"):
    organiser = await env.person("org")
    players = [await env.person(f"{prefix}{i:02d}", ("play",)) for i in range(n)]
    return organiser, players


async def _finish_round(env, organiser, t, round_number: int) -> pb.Tournament:
    """Record every open table of the round: seat order is finishing order."""
    t = await env.get(t.tournament_id)
    for table in t.rounds[round_number - 1].tables:
        if table.status in ("finished", "void"):
            continue
        await env.stub.RecordResult(
            pb.RecordResultRequest(
                tournament_id=t.tournament_id,
                round=round_number,
                table=table.number,
                ranks=list(range(1, len(table.seats) + 1)),
            ),
            metadata=organiser.md,
        )
    return await env.get(t.tournament_id)


def test_a_swiss_runs_from_registration_to_the_final_standings(env_run):
    async def body(env):
        organiser, players = await _field(env, 8)
        t = await env.create(organiser, rounds=3)
        t = await env.enter(t, players)
        assert len(t.players) == 8 and t.status == pb.TOURNAMENT_STATUS_REGISTRATION
        t = await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=t.tournament_id), metadata=organiser.md
        )
        assert t.status == pb.TOURNAMENT_STATUS_RUNNING and t.current_round == 1
        assert [len(x.seats) for x in t.rounds[0].tables] == [4, 4]
        assert all(x.status == "running" and x.game_id for x in t.rounds[0].tables)
        t = await _finish_round(env, organiser, t, 1)
        assert t.current_round == 2 and t.rounds[0].status == "finished"
        # no repeat opponents in round 2 of 8 players at two tables of 4 is impossible
        # (pigeonhole), but seats: nobody sits in the same position twice
        seat_of = {s.username: i for x in t.rounds[0].tables for i, s in enumerate(x.seats)}
        for x in t.rounds[1].tables:
            for i, s in enumerate(x.seats):
                assert seat_of[s.username] != i
        t = await _finish_round(env, organiser, t, 2)
        t = await _finish_round(env, organiser, t, 3)
        assert t.status == pb.TOURNAMENT_STATUS_FINISHED and len(t.rounds) == 3
        total = sum(s.points for s in t.standings)
        assert total == pytest.approx(3 * 2 * (6 + 4 + 2 + 0))
        assert [s.rank for s in t.standings] == sorted(s.rank for s in t.standings)
        assert all(s.games == 3 for s in t.standings)
        winner = t.standings[0]
        assert winner.points >= t.standings[1].points
        # events: round_started for each player each round, table_finished per seat
        kinds = [e["type"] for _, e in env.events.sent]
        assert kinds.count("round_started") == 3 * 8
        assert kinds.count("table_finished") == 3 * 8
        assert kinds.count("standings_changed") == 3 * 8  # after each round, to everyone
        # export
        js = await env.stub.ExportTournament(
            pb.ExportRequest(tournament_id=t.tournament_id, format="json")
        )
        data = json.loads(js.content)
        games = [x["game_id"] for r in data["rounds"] for x in r["tables"]]
        assert len(games) == 6 and all(games)
        assert data["standings"][0]["player"] == winner.username
        text = await env.stub.ExportTournament(
            pb.ExportRequest(tournament_id=t.tournament_id, format="csv")
        )
        rows = list(csv.reader(io.StringIO(text.content)))
        assert sum(1 for r in rows if r and r[0] == "game") == 3 * 8
        assert sum(1 for r in rows if r and r[0] == "standing") == 1 + 8
        st = await env.stub.GetStandings(
            pb.GetStandingsRequest(tournament_id=t.tournament_id, round=1)
        )
        assert st.round == 1 and all(s.games == 1 for s in st.standings)
        listed = await env.stub.ListTournaments(
            pb.ListTournamentsRequest(status=[pb.TOURNAMENT_STATUS_FINISHED])
        )
        assert [x.tournament_id for x in listed.tournaments] == [t.tournament_id]

    env_run(body)


def test_late_entry_before_round_2_and_a_dropout_mid_round(env_run):
    async def body(env):
        organiser, players = await _field(env, 8)
        late = await env.person("late", ("play",))
        t = await env.create(organiser, rounds=3, min_table_size=3)
        t = await env.enter(t, players)
        t = await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=t.tournament_id), metadata=organiser.md
        )
        t = await env.enter(t, [late])  # round 1 is running: a late entry for round 2
        entry = next(p for p in t.players if p.username == "late")
        assert entry.entered_round == 2
        # a dropout in the middle of round 1: his table plays on
        leaver = players[0]
        t = await env.stub.Withdraw(
            pb.RegisterRequest(tournament_id=t.tournament_id), metadata=leaver.md
        )
        (gone,) = t.players
        assert gone.withdrawn and gone.withdrew_after_round == 1
        t = await env.get(t.tournament_id)
        his = next(x for x in t.rounds[0].tables if any(s.username == leaver.name for s in x.seats))
        assert his.status == "running"
        t = await _finish_round(env, organiser, t, 1)
        round2 = [s.username for x in t.rounds[1].tables for s in x.seats]
        assert leaver.name not in round2 and "late" in round2
        assert sorted(len(x.seats) for x in t.rounds[1].tables) == [4, 4]  # 7 + late
        standing = next(s for s in t.standings if s.username == leaver.name)
        assert standing.withdrawn and standing.games == 1
        # round 2 is paired: late entries are closed now
        newcomer = await env.person("tooLate", ("play",))
        with pytest.raises(grpc.RpcError) as err:
            await env.enter(t, [newcomer])
        assert reason(err.value) == (REFUSED, "late_entry_closed")

    env_run(body)


def test_the_organiser_enters_his_bot_accounts_and_system_bots(env_run):
    async def body(env):
        organiser = await env.person("org")
        other = await env.person("other")
        mine = await env.bot(organiser, "mybot")
        theirs = await env.bot(other, "theirbot")
        t = await env.create(organiser, bots_allowed=True)
        for name in ("mybot", "greedy-bot"):
            t = await env.stub.Register(
                pb.RegisterRequest(tournament_id=t.tournament_id, account=name),
                metadata=organiser.md,
            )
        t = await env.get(t.tournament_id)
        assert sorted((p.username, p.bot) for p in t.players) == [
            ("greedy-bot", True),
            ("mybot", True),
        ]
        before = await env.rows()
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.Register(
                pb.RegisterRequest(tournament_id=t.tournament_id, account="theirbot"),
                metadata=organiser.md,
            )
        assert reason(err.value) == (DENIED, "not_bot_owner")
        with pytest.raises(grpc.RpcError) as err:  # the bot itself, twice
            await env.stub.Register(
                pb.RegisterRequest(tournament_id=t.tournament_id), metadata=mine.md
            )
        assert reason(err.value) == (REFUSED, "already_registered")
        no_bots = await env.create(organiser, bots_allowed=False)
        before = await env.rows()
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.Register(
                pb.RegisterRequest(tournament_id=no_bots.tournament_id), metadata=theirs.md
            )
        assert reason(err.value) == (REFUSED, "bots_not_allowed")
        assert await env.rows() == before

    env_run(body)


def test_bad_input_is_refused_with_a_reason_and_changes_nothing(env_run):
    async def body(env):
        organiser, players = await _field(env, 5)
        stranger = await env.person("stranger")  # has tournament:write, not the organiser
        # a table size outside the title's range: Chicago Express 2-6, tournaments 3-6;
        # Russian Railroads seats at most 4
        for title, size, low in (("railbarons", 7, 0), ("transsib", 5, 0), ("railbarons", 4, 5)):
            with pytest.raises(grpc.RpcError) as err:
                await env.create(organiser, title=title, table_size=size, min_table_size=low)
            assert reason(err.value) == (INVALID, "table_size_out_of_range")
        for kw, why in (
            (dict(rounds=0 - 1), "bad_rounds"),
            (dict(tiebreaks=["wins", "wins", "normalised_sum"]), "bad_tiebreaks"),
            (dict(seeding="strongest_first"), "bad_seeding_mode"),
            (dict(name=""), "bad_name"),
            (dict(title="chess"), "unknown_title"),
            (
                dict(registration_opens_ms=2000, registration_closes_ms=1000),
                "bad_registration_window",
            ),
        ):
            with pytest.raises(grpc.RpcError) as err:
                await env.create(organiser, **kw)
            assert reason(err.value) == (INVALID, why), kw
        assert await env.rows() == []
        live = lobby_pb2.TimeControl(kind="live", base_s=600, increment_s=10)
        t = await env.create(organiser, table_size=4, min_table_size=3, time_control=live)
        assert t.settings.time_control == live and t.settings.timeout_policy == "forfeit"
        tid = t.tournament_id
        t = await env.enter(t, players[:2])
        before = await env.rows()
        # fewer players than one table needs
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.StartTournament(
                pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
            )
        assert reason(err.value) == (REFUSED, "too_few_players")
        # registering twice
        with pytest.raises(grpc.RpcError) as err:
            await env.enter(t, players[:1])
        assert reason(err.value) == (REFUSED, "already_registered")
        # a non-organiser starting or pausing
        for method in ("StartTournament", "PauseTournament", "EndTournament", "AdvanceRound"):
            with pytest.raises(grpc.RpcError) as err:
                await getattr(env.stub, method)(
                    pb.TournamentRequest(tournament_id=tid), metadata=stranger.md
                )
            assert reason(err.value) == (DENIED, "not_organiser"), method
            with pytest.raises(grpc.RpcError) as err:  # a player's token lacks the scope
                await getattr(env.stub, method)(
                    pb.TournamentRequest(tournament_id=tid), metadata=players[0].md
                )
            assert reason(err.value)[1] == "scope_missing"
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.StartTournament(pb.TournamentRequest(tournament_id=tid))
        assert reason(err.value) == (grpc.StatusCode.UNAUTHENTICATED, "token_missing")
        assert await env.rows() == before
        t = await env.enter(t, players[2:])
        t = await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        before = await env.rows()
        # registering after the start (a round robin takes no late entries)
        rr = await env.create(
            organiser, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN, table_size=3, rounds=1
        )
        rr = await env.enter(rr, players[:3])
        await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=rr.tournament_id), metadata=organiser.md
        )
        before = await env.rows()
        with pytest.raises(grpc.RpcError) as err:
            await env.enter(rr, players[3:4])
        assert reason(err.value) == (REFUSED, "late_entry_closed")
        # results for a table that is not in the tournament
        for rnd, table in ((1, 9), (2, 1), (0, 1)):
            with pytest.raises(grpc.RpcError) as err:
                await env.stub.RecordResult(
                    pb.RecordResultRequest(
                        tournament_id=tid, round=rnd, table=table, ranks=[1, 2, 3, 4]
                    ),
                    metadata=organiser.md,
                )
            assert reason(err.value) == (grpc.StatusCode.NOT_FOUND, "unknown_table")
        with pytest.raises(grpc.RpcError) as err:  # ranks that do not fit the table
            await env.stub.RecordResult(
                pb.RecordResultRequest(tournament_id=tid, round=1, table=1, ranks=[1, 9, 2, 3]),
                metadata=organiser.md,
            )
        assert reason(err.value) == (INVALID, "bad_rank")
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.GetTournament(pb.GetTournamentRequest(tournament_id="nope"))
        assert reason(err.value) == (grpc.StatusCode.NOT_FOUND, "unknown_tournament")
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.ExportTournament(pb.ExportRequest(tournament_id=tid, format="xml"))
        assert reason(err.value) == (INVALID, "bad_export_format")
        assert await env.rows() == before
        # a second result for a closed table
        await env.stub.RecordResult(
            pb.RecordResultRequest(tournament_id=tid, round=1, table=1, ranks=[1, 2, 2, 4]),
            metadata=organiser.md,
        )
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.RecordResult(
                pb.RecordResultRequest(tournament_id=tid, round=1, table=1, ranks=[4, 3, 2, 1]),
                metadata=organiser.md,
            )
        assert reason(err.value) == (REFUSED, "table_closed")

    env_run(body)


def test_pause_holds_the_next_round_and_start_resumes_it(env_run):
    async def body(env):
        organiser, players = await _field(env, 4)
        t = await env.create(organiser, rounds=2)
        t = await env.enter(t, players)
        tid = t.tournament_id
        await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        t = await env.stub.PauseTournament(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        assert t.status == pb.TOURNAMENT_STATUS_PAUSED
        t = await _finish_round(env, organiser, t, 1)  # the table played on
        assert t.current_round == 1 and t.rounds[0].status == "finished"
        t = await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        assert t.status == pb.TOURNAMENT_STATUS_RUNNING and t.current_round == 2
        t = await env.stub.EndTournament(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        assert t.status == pb.TOURNAMENT_STATUS_FINISHED
        with pytest.raises(grpc.RpcError) as err:
            await env.stub.StartTournament(
                pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
            )
        assert reason(err.value) == (REFUSED, "tournament_finished")

    env_run(body)


def test_a_round_robin_of_9_meets_everyone_once(env_run):
    async def body(env):
        organiser, players = await _field(env, 9)
        t = await env.create(
            organiser, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN, table_size=3, rounds=4
        )
        t = await env.enter(t, players)
        await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=t.tournament_id), metadata=organiser.md
        )
        for r in range(1, 5):
            t = await _finish_round(env, organiser, t, r)
        assert t.status == pb.TOURNAMENT_STATUS_FINISHED
        met: dict[frozenset, int] = {}
        for rnd in t.rounds:
            for x in rnd.tables:
                names = [s.username for s in x.seats]
                for i, a in enumerate(names):
                    for b in names[i + 1 :]:
                        met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
        assert len(met) == 36 and set(met.values()) == {1}

    env_run(body)


def test_advance_round_voids_open_tables_and_pairs_the_next(env_run):
    async def body(env):
        organiser, players = await _field(env, 8)
        t = await env.create(organiser, rounds=2, auto_advance=False)
        t = await env.enter(t, players)
        tid = t.tournament_id
        await env.stub.StartTournament(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        t = await _finish_round(env, organiser, t, 1)
        assert t.current_round == 1  # auto_advance off: the organiser's command pairs
        t = await env.stub.AdvanceRound(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        assert t.current_round == 2
        first = t.rounds[1].tables[0]
        await env.stub.RecordResult(
            pb.RecordResultRequest(
                tournament_id=tid, round=2, table=first.number, ranks=[1, 2, 3, 4]
            ),
            metadata=organiser.md,
        )
        t = await env.stub.AdvanceRound(
            pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
        )
        assert t.status == pb.TOURNAMENT_STATUS_FINISHED
        second = t.rounds[1].tables[1]
        assert (second.status, second.void_reason) == ("void", "advanced")
        voided = {s.username for s in second.seats}
        for s in t.standings:  # a void seat scores the bye points, no game
            assert s.games == (1 if s.username in voided else 2)
            assert s.byes == (1 if s.username in voided else 0)

    env_run(body)


def test_registration_window(store_url):
    from datetime import UTC, datetime

    now = [datetime(2026, 12, 1, 10, 0, tzinfo=UTC)]

    async def body():
        async with running_tournaments(store_url, clock=lambda: now[0]) as env:
            organiser, players = await _field(env, 2)
            opens = int(datetime(2026, 12, 1, 11, 0, tzinfo=UTC).timestamp() * 1000)
            t = await env.create(
                organiser, registration_opens_ms=opens, registration_closes_ms=opens + 3_600_000
            )
            with pytest.raises(grpc.RpcError) as err:
                await env.enter(t, players[:1])
            assert reason(err.value) == (REFUSED, "registration_closed")
            now[0] = datetime(2026, 12, 1, 11, 30, tzinfo=UTC)
            t = await env.enter(t, players[:1])
            now[0] = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
            with pytest.raises(grpc.RpcError) as err:
                await env.enter(t, players[1:])
            assert reason(err.value) == (REFUSED, "registration_closed")
            assert [p.username for p in (await env.get(t.tournament_id)).players] == ["p00"]

    asyncio.run(body())
