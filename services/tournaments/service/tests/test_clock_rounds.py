"""A timed tournament through the real lobby, rules service and clock keeper, with the
injectable clock (no test sleeps to make time pass): the round tables carry the
tournament's time control, timeout policy and id; pausing the tournament stops their
clocks and starting it again restarts them; a seat whose time runs out forfeits, and the
standings, the export and the account's rows show the forfeit and the timeout. Nonsense
clock settings are refused and write nothing."""

from __future__ import annotations

import asyncio
import json

import grpc

from roundhouse.v1 import lobby_pb2
from roundhouse.v1 import tournaments_pb2 as pb
from services.clocks.keeper import ClockKeeper, grpc_firer
from services.lobby.tests.harness import INTERNAL_SECRET, running_lobby
from services.match.timesource import FakeTime
from services.platform.auth import internal
from services.platform.gamelog import GameLog
from services.tournaments.service.tables import LobbyTables
from services.tournaments.service.tests.harness import reason, running_tournaments
from services.tournaments.service.tests.test_lobby_rounds import _wait, consumers

LIVE = lobby_pb2.TimeControl(kind="live", base_s=60, increment_s=5)


async def _view(lobby, table_id):
    return await lobby.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table_id))


def test_a_seat_that_times_out_forfeits_and_the_standings_show_it(
    sqlite_database_url, redis_url, key_prefix
):
    url = sqlite_database_url
    time = FakeTime()

    async def main():
        async with running_lobby(url, redis_url, key_prefix, time=time) as lobby:
            runner = LobbyTables(lobby.lobby_address, INTERNAL_SECRET, lobby.accounts)
            async with running_tournaments(url, tables=runner) as env:
                organiser = await env.person("org")
                people = [await env.person(f"p{i}", ("play",)) for i in range(4)]
                # nonsense clocks: refused, nothing written
                before = await env.rows()
                for settings, why in (
                    (dict(time_control=lobby_pb2.TimeControl(kind="live")), "bad_time_control"),
                    (
                        dict(time_control=lobby_pb2.TimeControl(kind="live", base_s=-5)),
                        "bad_time_control",
                    ),
                    (dict(time_control=LIVE, timeout_policy="sulk"), "bad_timeout_policy"),
                    (dict(time_control=LIVE, timeout_policy="reclaim"), "reclaim_not_casual"),
                    (dict(time_control=LIVE, takeover_policy="oracle"), "unknown_policy"),
                ):
                    try:
                        await env.create(organiser, **settings)
                    except grpc.aio.AioRpcError as err:
                        assert reason(err) == (grpc.StatusCode.INVALID_ARGUMENT, why)
                    else:
                        raise AssertionError(f"{settings} was accepted")
                assert await env.rows() == before

                t = await env.create(organiser, rounds=1, time_control=LIVE)
                assert t.settings.time_control == LIVE
                assert t.settings.timeout_policy == "forfeit"
                t = await env.enter(t, people)
                tid = t.tournament_id
                t = await env.stub.StartTournament(
                    pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
                )
                x = t.rounds[0].tables[0]
                table = await lobby.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=x.table_id))
                assert table.time_control == LIVE
                assert (table.timeout_policy, table.tournament_id) == ("forfeit", tid)
                view = await _view(lobby, x.table_id)
                (seat,) = view.active_seats
                assert view.clocks[seat].running and view.clocks[seat].remaining_ms == 60_000

                # the organiser pauses the tournament: the table's clocks stop
                paused = await env.stub.PauseTournament(
                    pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
                )
                assert paused.status == pb.TOURNAMENT_STATUS_PAUSED
                view = await _view(lobby, x.table_id)
                assert view.paused and not any(c.running for c in view.clocks)
                table = await lobby.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=x.table_id))
                assert table.paused
                await time.advance(10**6)  # a long pause costs nobody time
                view = await _view(lobby, x.table_id)
                assert view.clocks[seat].remaining_ms == 60_000
                resumed = await env.stub.StartTournament(
                    pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
                )
                assert resumed.status == pb.TOURNAMENT_STATUS_RUNNING
                view = await _view(lobby, x.table_id)
                assert not view.paused and view.clocks[seat].running
                table = await lobby.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=x.table_id))
                assert not table.paused

                # the keeper tracks the table's deadlines and fires the timeout
                keeper = ClockKeeper(
                    lobby.redis,
                    key_prefix,
                    grpc_firer(lobby.settings.rules_addresses, internal(INTERNAL_SECRET, "clocks")),
                    time=time,
                )
                for _, fields in await GameLog(lobby.redis, key_prefix).lifecycle_entries():
                    await keeper.handle(fields)
                await time.advance(59_999)
                assert await keeper.fire_due() == 0  # one ms left
                async with consumers(lobby, env.director, url, "clock"):
                    await time.advance(1)
                    assert await keeper.fire_due() == 1

                    async def over():
                        got = await env.get(tid)
                        return got.status == pb.TOURNAMENT_STATUS_FINISHED and got

                    t = await _wait(over)
                late = t.rounds[0].tables[0].seats[seat]
                assert late.rank == 4  # ranked last
                rows = {r.username: r for r in t.standings}
                assert (rows[late.username].forfeits, rows[late.username].timeouts) == (1, 1)
                assert all(
                    (r.forfeits, r.timeouts) == (0, 0)
                    for name, r in rows.items()
                    if name != late.username
                )
                assert rows[late.username].rank == 4
                standings = await env.stub.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
                assert {r.username: r.timeouts for r in standings.standings} == {
                    r.username: r.timeouts for r in t.standings
                }
                exported = await env.stub.ExportTournament(pb.ExportRequest(tournament_id=tid))
                data = json.loads(exported.content)
                line = next(s for s in data["standings"] if s["player"] == late.username)
                assert (line["forfeits"], line["timeouts"]) == (1, 1)
                assert data["rounds"][0]["tables"][0]["timed_out_seats"] == [seat]
                csv = await env.stub.ExportTournament(
                    pb.ExportRequest(tournament_id=tid, format="csv")
                )
                header = next(r for r in csv.content.splitlines() if r.startswith("standing,rank"))
                assert header.endswith(",forfeits,timeouts")
            await runner.close()

    asyncio.run(asyncio.wait_for(main(), 60))
