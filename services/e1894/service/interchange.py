"""``roundhouse.v1.e1894.Interchange``: 18xx.games import and export over gRPC.

A thin adapter over :mod:`services.e1894.engine.interchange`:

* ``ImportGame`` replays a recorded game with every check on (routes
  recomputed, never trusted) and stores it as an ordinary game of ours through
  :meth:`GameRulesServicer.store_game`: its stream holds our typed actions, so
  ``GetView``, ``WatchGame``, ``GetResult`` and ``ExportGame`` work on it. A
  divergence is FAILED_PRECONDITION naming the recorded action id (message and
  ``ErrorInfo.metadata["action_id"]``) and the rule (``ErrorInfo.reason``),
  and nothing is stored.
* ``ExportGame`` writes a finished game of ours (its seed is public once it is
  over) in the 18xx.games format.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import grpc

from roundhouse.v1 import e1894_interchange_pb2 as pb
from roundhouse.v1 import e1894_interchange_pb2_grpc as pb_grpc
from services.e1894.engine.interchange.exporter import export_game
from services.e1894.engine.interchange.importer import ImportDivergence, import_game
from services.kernel.engine import IllegalAction, InvalidOptions
from services.platform.grpc_errors import abort, require_game_id
from services.platform.logging import get_logger
from services.rules.results import result_proto
from services.rules.servicer import GameRulesServicer

log = get_logger("e1894-interchange")


class InterchangeServicer(pb_grpc.InterchangeServicer):
    """Import and export beside the e1894 ``GameRules`` servicer ``rules``."""

    def __init__(self, rules: GameRulesServicer) -> None:
        self.rules = rules

    async def ImportGame(self, request, context):
        game_id = await require_game_id(
            context, request.game_id or f"e1894-import-{uuid.uuid4().hex[:12]}"
        )
        try:
            data = json.loads(request.game_json)
            if not isinstance(data, dict) or "actions" not in data or "players" not in data:
                raise ValueError("not an 18xx.games game (no players or actions)")
            if data.get("title", "1894") != "1894":
                raise ValueError(f"an 18xx.games game of {data['title']!r}, not 1894")
        except ValueError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad_game_json", str(exc))
        try:
            imported = await asyncio.to_thread(import_game, data)  # ~0.1 s: off the event loop
        except ImportDivergence as exc:
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                exc.code,
                f"action {exc.action_id}: {exc.reason}",
                action_id=str(exc.action_id or 0),
            )
        except (KeyError, TypeError, ValueError, InvalidOptions) as exc:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_game_json",
                f"not a readable 18xx.games 1894 game: {exc!r}",
            )
        names = recorded_names(data, imported.player_ids)
        extra = {
            "imported_from": "18xx.games",
            "player_ids": imported.player_ids,
            # the archive's seats: the recorded players, as guests (no accounts)
            "seats": [{"name": n, "kind": "guest", "policy": "", "account_id": ""} for n in names],
        }
        if request.owner:
            extra["owner"] = request.owner
        live = await self.rules.store_game(
            game_id,
            imported.num_players,
            imported.seed,
            imported.options,
            imported.log,
            extra_meta=extra,
        )
        if live is None:
            await abort(
                context,
                grpc.StatusCode.ALREADY_EXISTS,
                "game_exists",
                f"game {game_id!r} already exists",
            )
        state = live.state
        log.info(
            "game imported", game_id=game_id, actions=state.version, finished=state.is_terminal()
        )
        response = pb.ImportGameResponse(
            info=self.rules.info(game_id, live.meta),
            version=state.version,
            player_ids=imported.player_ids,
            game_end_reason=imported.game_end_reason,
            player_names=names,
        )
        if state.is_terminal():
            response.scores.update(imported.result())
            response.result.CopyFrom(result_proto(state.result().to_json()))
        return response

    async def ExportGame(self, request, context):
        live = await self.rules.get_live(request.game_id, context)
        async with live.lock:
            await self.rules.catch_up(request.game_id, live)
            if not live.state.is_terminal():
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "game_not_over",
                    "only finished games are exported: the 18xx.games format carries "
                    "the seed, which stays secret while the game runs",
                    current_version=live.state.version,
                )
        meta = live.meta
        entries = await self.rules.gamelog.entries(request.game_id)
        try:
            data = await asyncio.to_thread(
                export_game,
                meta["num_players"],
                meta["seed"],
                meta["options"],
                [(e.seat, json.loads(e.action)) for e in entries],
                player_ids=meta.get("player_ids"),
            )
        except IllegalAction as exc:  # the stored log no longer replays: not the caller's fault
            await abort(
                context,
                grpc.StatusCode.DATA_LOSS,
                "log_does_not_replay",
                f"game {request.game_id!r} cannot be exported: {exc.code}",
            )
        return pb.ExportGameResponse(game_json=json.dumps(data, ensure_ascii=False))


def recorded_names(data: dict, player_ids: list[int]) -> list[str]:
    """The 18xx.games name of each seat (``players[i].name`` by player id; ``"player <id>"``
    where a recording has none), at most 64 characters each."""
    by_id = {
        p.get("id"): str(p.get("name") or "")
        for p in data.get("players", [])
        if isinstance(p, dict)
    }
    return [(by_id.get(pid) or f"player {pid}")[:64] for pid in player_ids]


def add_interchange(rules: GameRulesServicer, server: grpc.aio.Server) -> str:
    """Register the Interchange service beside ``rules``; returns its full name."""
    pb_grpc.add_InterchangeServicer_to_server(InterchangeServicer(rules), server)
    return pb.DESCRIPTOR.services_by_name["Interchange"].full_name
