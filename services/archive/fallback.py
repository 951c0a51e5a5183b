"""Finished games that Redis no longer holds, answered from the archive.

The rules service (:class:`services.rules.servicer.GameRulesServicer`)
asks :class:`ArchiveFallback` when a game id is not in Redis:

* ``GetView``: the final state, rebuilt by replaying the archived entries
  with the engine through the rules service's wrapper (resignations,
  timeouts, takeovers, reclaims and pauses, with the archived clock settings
  and entry times; cached, LRU), seen by the asked seat or a spectator;
* ``WatchGame``: the stored updates after ``from_version``, then the stream
  ends (the game is over);
* ``GetResult``: the stored result and the seed (revealed: the game is over);
* ``ListLegalActions``: no actions, at the final version; ``SubmitAction``:
  FAILED_PRECONDITION ``game_over``.

Errors are raised as :class:`services.platform.grpc_errors.ServiceError`:
INVALID_ARGUMENT ``bad_seat`` / ``bad_version``, OUT_OF_RANGE ``bad_version``
(a watch from beyond the final version), FAILED_PRECONDITION
``rules_version_mismatch`` (the game was stored under other rules: its view
is not rebuilt under new rules; the watch and the result need no replay and
are still answered) and DATA_LOSS ``log_does_not_replay``. A database outage
raises the driver's error, which the error interceptor answers UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import OrderedDict

import grpc

from roundhouse.v1 import game_pb2
from services.archive.server import game_info
from services.archive.store import ArchiveStore, StoredGame
from services.kernel.engine import IllegalAction, State
from services.match.resignation import entry_action, entry_label, policy_of_meta, replay_state
from services.platform.grpc_errors import ServiceError
from services.rules.messages import update_proto, view_response
from services.rules.results import result_proto
from services.rules.titles import get_game


class ArchiveFallback:
    """The archive as seen by the rules service of ``title``: the rules layer's
    :class:`services.rules.ports.ArchivePort`.

    Args:
        title: the server's title (games of other titles are "not found").
        store: the archive.
        max_cached: archived games (records, entries, final states) kept in
            memory, least recently used dropped; an archived game never
            changes, so a cached one is never stale.
    """

    def __init__(self, title: str, store: ArchiveStore, max_cached: int = 200) -> None:
        self.title = title
        self.game = get_game(title)
        self.store = store
        self.max_cached = max_cached
        self._states: OrderedDict[str, State] = OrderedDict()
        self._labels: dict[str, list[str]] = {}  # game id -> label of each entry (as _states)
        self._games: OrderedDict[str, StoredGame] = OrderedDict()

    async def load(self, game_id: str) -> StoredGame | None:
        """The archived game of this title, or None (not cached: it may be
        archived later)."""
        stored = self._games.get(game_id)
        if stored is not None:
            self._games.move_to_end(game_id)
            return stored
        stored = await self.store.load(game_id)
        if stored is None or stored.record.title != self.title:
            return None
        self._games[game_id] = stored
        while len(self._games) > self.max_cached:
            self._games.popitem(last=False)
        return stored

    async def has(self, game_id: str) -> bool:
        """Whether ``game_id`` is taken by an archived game (of any title)."""
        return await self.store.has(game_id)

    def info(self, stored: StoredGame) -> game_pb2.GameInfo:
        return game_info(stored.record)

    def check_seat(self, stored: StoredGame, seat: int) -> int:
        n = stored.record.num_players
        if not 0 <= seat < n:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT, "bad_seat", f"seat must be 0..{n - 1}, got {seat}"
            )
        return seat

    async def final_state(self, stored: StoredGame) -> State:
        """The game's final state, replayed with the engine (cached)."""
        game_id = stored.record.game_id
        state = self._states.get(game_id)
        if state is not None:
            self._states.move_to_end(game_id)
            return state
        if stored.record.rules_version != self.game.rules_version:
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "rules_version_mismatch",
                f"game {game_id!r} was played under {self.title} rules "
                f"{stored.record.rules_version}; this server plays {self.game.rules_version}",
            )
        state, labels = await asyncio.to_thread(self._replay, stored)
        self._states[game_id] = state
        self._labels[game_id] = labels
        while len(self._states) > self.max_cached:
            old, _ = self._states.popitem(last=False)
            self._labels.pop(old, None)
        return state

    async def labels(self, stored: StoredGame) -> list[str]:
        """The label of each archived entry (``Game.describe`` on the state before it; the
        archive does not store them, so they come from the replay of :meth:`final_state`).
        A game of other rules is not replayed: its labels are empty."""
        if stored.record.rules_version != self.game.rules_version:
            return [""] * len(stored.entries)
        await self.final_state(stored)
        return self._labels[stored.record.game_id]

    def _replay(self, stored: StoredGame) -> tuple[State, list[str]]:
        """The final state as the rules service played it: resignations, timeouts,
        takeovers, reclaims and pauses included (the game's clock settings, clock
        start and resignation rule, and each entry's time, are archived with it)."""
        r = stored.record
        meta = r.meta()
        state = replay_state(self.game, meta, policy_of_meta(self.title, meta))
        labels = []
        for entry in stored.entries:
            try:
                action = entry_action(self.game, json.loads(entry.action))
                labels.append(entry_label(self.game, state, entry.seat, action))
                state.apply(entry.seat, action, at_ms=entry.at_ms or None)
            except (IllegalAction, ValueError):  # refused, or a stored action that is not JSON
                raise ServiceError(
                    grpc.StatusCode.DATA_LOSS,
                    "log_does_not_replay",
                    f"archived game {r.game_id!r} cannot be rebuilt: "
                    f"its entry {entry.version} is refused",
                ) from None
        return state, labels

    # ------------------------------------------------------------------ answers

    async def view(self, stored: StoredGame, seat: int | None) -> game_pb2.GetViewResponse:
        if seat is not None:
            self.check_seat(stored, seat)
        state = await self.final_state(stored)
        # the clocks as of the last entry: none runs once the game is over
        response = view_response(self.title, self.info(stored), state, seat, state.at_ms)
        response.result.CopyFrom(result_proto(stored.record.result))
        return response

    async def updates(self, stored: StoredGame, from_version: int) -> list[game_pb2.GameUpdate]:
        """The stored updates with version > ``from_version``, each with its label.

        Raises ServiceError (INVALID_ARGUMENT / OUT_OF_RANGE ``bad_version``)
        before the first update."""
        last = stored.record.num_actions
        if from_version < 0:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT, "bad_version", "from_version must be 0 or more"
            )
        if from_version > last:
            raise ServiceError(
                grpc.StatusCode.OUT_OF_RANGE,
                "bad_version",
                f"from_version must be at most {last} (the game's final version)",
            )
        labels = await self.labels(stored)
        return [
            update_proto(self.title, dataclasses.replace(e, label=labels[e.version - 1]))
            for e in stored.entries[from_version:]
        ]

    def result(self, stored: StoredGame) -> game_pb2.GetResultResponse:
        return game_pb2.GetResultResponse(
            info=self.info(stored),
            result=result_proto(stored.record.result),
            seed=str(stored.record.seed),
        )

    def legal_actions(self, stored: StoredGame, seat: int) -> game_pb2.ListLegalActionsResponse:
        self.check_seat(stored, seat)
        return game_pb2.ListLegalActionsResponse(version=stored.record.num_actions)

    def refuse_action(self, stored: StoredGame, seat: int) -> None:
        """SubmitAction on an archived game: always FAILED_PRECONDITION ``game_over``."""
        self.check_seat(stored, seat)
        raise ServiceError(
            grpc.StatusCode.FAILED_PRECONDITION,
            "game_over",
            "the game is over; no more actions are accepted",
        )
