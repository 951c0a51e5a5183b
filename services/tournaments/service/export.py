"""A tournament exported: JSON (settings, standings with each player's forfeits and
timeouts, every round's pairings with each table's lobby table id, game id and result)
or CSV (one line per seat of every table,
then the final standings), for ``ExportTournament`` and the HTTP export."""

from __future__ import annotations

import csv
import io
import json

from services.tournaments.service.director import forfeits_of, tournament_standings
from services.tournaments.service.messages import table_points
from services.tournaments.service.store import TournamentRecord


def as_dict(t: TournamentRecord) -> dict:
    names = t.names()
    rules = t.config.scoring()
    lost = forfeits_of(t)
    return {
        "tournament_id": t.tournament_id,
        "name": t.config.name,
        "title": t.config.title,
        "format": t.config.format,
        "status": t.status,
        "organiser": t.organiser,
        "rounds_planned": t.config.rounds,
        "standings": [
            {
                "rank": s.rank,
                "player": names.get(s.player, s.player),
                "points": s.points,
                "opponents_points": s.opponents_points,
                "normalised_sum": s.normalised_sum,
                "wins": s.wins,
                "games": s.games,
                "byes": s.byes,
                "withdrawn": t.player(s.player) is not None and not t.player(s.player).active,
                "forfeits": lost.get(s.player, [0, 0])[0],
                "timeouts": lost.get(s.player, [0, 0])[1],
            }
            for s in tournament_standings(t)
        ],
        "rounds": [
            {
                "round": r.round,
                "status": r.status,
                "byes": [names.get(b, b) for b in r.byes],
                "tables": [
                    {
                        "table": x.number,
                        "table_id": x.lobby_table_id,
                        "game_id": x.game_id,
                        "status": x.status,
                        "void_reason": x.void_reason,
                        "seats": [names.get(a, a) for a in x.seats],
                        "ranks": (x.result or {}).get("ranks"),
                        "scores": (x.result or {}).get("scores"),
                        "points": table_points(x, rules),
                        "forfeited_seats": (x.result or {}).get("forfeited_seats", []),
                        "timed_out_seats": (x.result or {}).get("timed_out_seats", []),
                    }
                    for x in r.tables
                ],
            }
            for r in t.rounds
        ],
    }


def as_json(t: TournamentRecord) -> str:
    return json.dumps(as_dict(t), indent=2, sort_keys=False)


def as_csv(t: TournamentRecord) -> str:
    data = as_dict(t)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        [
            "section",
            "round",
            "table",
            "table_id",
            "game_id",
            "status",
            "seat",
            "player",
            "rank",
            "score",
            "points",
        ]
    )
    for r in data["rounds"]:
        for x in r["tables"]:
            for seat, player in enumerate(x["seats"]):
                w.writerow(
                    [
                        "game",
                        r["round"],
                        x["table"],
                        x["table_id"],
                        x["game_id"],
                        x["status"],
                        seat,
                        player,
                        (x["ranks"] or [""] * len(x["seats"]))[seat],
                        (x["scores"] or [""] * len(x["seats"]))[seat],
                        x["points"][seat],
                    ]
                )
        for b in r["byes"]:
            w.writerow(["bye", r["round"], "", "", "", "bye", "", b, "", "", ""])
    w.writerow([])
    w.writerow(
        [
            "standing",
            "rank",
            "player",
            "points",
            "opponents_points",
            "normalised_sum",
            "wins",
            "games",
            "byes",
            "withdrawn",
            "forfeits",
            "timeouts",
        ]
    )
    for s in data["standings"]:
        w.writerow(
            [
                "standing",
                s["rank"],
                s["player"],
                s["points"],
                s["opponents_points"],
                s["normalised_sum"],
                s["wins"],
                s["games"],
                s["byes"],
                s["withdrawn"],
                s["forfeits"],
                s["timeouts"],
            ]
        )
    return out.getvalue()
