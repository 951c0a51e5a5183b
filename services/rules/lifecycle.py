"""A game's life beside its moves: ``Resign``, ``Timeout``, ``SetPaused`` and ``Reclaim``
(the match rules of :mod:`services.match.resignation`), appended at the game's current version."""

from __future__ import annotations

from functools import partial

import grpc

from roundhouse.v1 import game_pb2
from services.kernel.engine import (
    Action,
    IllegalAction,
    State,
    canonical_json,
)
from services.match.resignation import (
    NO_SEAT,
    Pause,
    Reclaim,
    Resign,
    Resume,
    Timeout,
)
from services.platform.gamelog import LogEntry
from services.platform.grpc_errors import abort
from services.platform.logging import get_logger
from services.rules import protomap
from services.rules.cache import LiveGame
from services.rules.messages import (
    answer_proto,
    fingerprint,
    stored_moves,
)
from services.rules.metrics import ACTIONS

logger = get_logger("rules")


class Lifecycle:
    """Resign, timeout, pause and reclaim of :class:`services.rules.servicer.GameRulesServicer`."""

    async def Resign(self, request, context):
        """Append the seat's resignation (``{"type": "resign"}``) at the game's
        current version, whoever is to act; the title's policy decides whether
        the game ends (:mod:`services.match.resignation`). FAILED_PRECONDITION
        ``game_over`` / ``seat_resigned``; the log is unchanged then."""
        game_id = request.game_id
        live = await self.get_live(game_id, context)
        seat = await self._seat(request.seat, live, context)
        action = Resign()
        async with live.lock:
            nxt, _, _ = await self._append_at_current(
                game_id,
                live,
                seat,
                action,
                "resigned",
                "the game kept moving while the resignation was recorded; try again",
                context,
            )
        ACTIONS.labels(self.title, "resigned").inc()
        logger.info("seat resigned", game_id=game_id, seat=seat, game_ends=nxt.is_terminal())
        return game_pb2.ResignResponse(
            version=nxt.version,
            finished=nxt.is_terminal(),
            active_seats=list(nxt.active_seats()),
            resigned_seats=list(nxt.resigned),
        )

    async def Timeout(self, request, context):
        """A seat's time ran out at ``expected_version`` (the clock keeper).
        Appended with compare-and-set and the idempotency key
        ``timeout:<version>`` of that seat, so a move and a timeout racing at
        the deadline settle on exactly one, and a repeated timeout is answered
        with the first answer. Errors: ABORTED ``stale_version`` (a move won),
        FAILED_PRECONDITION ``not_timed_out`` (metadata ``deadline_ms``),
        ``game_over``, ``table_paused``, ``no_clock``."""
        game_id = request.game_id
        live = await self.find_live(game_id, context)
        if live is None:  # finished and archived: nothing to time out
            await self.archived(game_id, context)
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "game_over",
                "the game is over; no more actions are accepted",
            )
        seat = await self._seat(request.seat, live, context)
        action = Timeout()
        key = f"{seat}:timeout:{request.expected_version}"
        print_ = fingerprint(seat, request.expected_version, action)
        prior = await self.gamelog.answer(game_id, key)
        if prior is not None:
            return await self._repeat(prior, print_, context)
        async with live.lock:
            await self.catch_up(game_id, live)
            if live.state.is_terminal():
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "game_over",
                    "the game is over; no more actions are accepted",
                    current_version=live.state.version,
                )
            if request.expected_version != live.state.version:
                await self._stale(context, request.expected_version, live.state.version)
            nxt = live.state.clone()
            now = self.time.now_ms()
            try:
                events = nxt.apply(seat, action, at_ms=now)
            except IllegalAction as exc:
                extra = {}
                clocks = live.state.clocks
                if clocks is not None and clocks.deadline_ms(seat) is not None:
                    extra["deadline_ms"] = clocks.deadline_ms(seat)
                await abort(
                    context, grpc.StatusCode.FAILED_PRECONDITION, exc.code, exc.reason, **extra
                )
            entry = self._entry(nxt, seat, action, events, self.label(nxt, seat, action))
            answer = canonical_json(
                {
                    "version": entry.version,
                    "events": events,
                    "active": list(entry.active),
                    "finished": entry.finished,
                    "fingerprint": print_,
                }
            )
            lifecycle = self._lifecycle(game_id, nxt, entry.result)
            lifecycle["timed_out"] = seat
            moves = await self.cpu(lambda: stored_moves(self.title, nxt, live.meta, self.game))
            outcome = await self.gamelog.append(
                game_id, request.expected_version, entry, key, answer, lifecycle, moves
            )
            if outcome.status == "duplicate":
                return await self._repeat(outcome.answer, print_, context)
            if outcome.status != "ok":
                await self.catch_up(game_id, live)
                await self._stale(context, request.expected_version, outcome.version)
            live.state, live.last = nxt, entry
        ACTIONS.labels(self.title, "timeout").inc()
        logger.info("seat timed out", game_id=game_id, seat=seat, version=entry.version)
        return answer_proto(answer)

    async def SetPaused(self, request, context):
        """Pause or resume the game's clocks (an entry of seat -1 at the
        current version). FAILED_PRECONDITION ``already_paused``,
        ``not_paused``, ``no_clock``, ``game_over``."""
        action = Pause() if request.paused else Resume()
        return await self._table_entry(request.game_id, NO_SEAT, action, context)

    async def Reclaim(self, request, context):
        """The seat's player takes the seat back from its takeover bot
        (``reclaim`` tables, within the window). FAILED_PRECONDITION
        ``reclaim_not_allowed``, ``not_taken_over``, ``reclaim_window_closed``."""
        live = await self.get_live(request.game_id, context)
        seat = await self._seat(request.seat, live, context)
        answer = await self._table_entry(request.game_id, seat, Reclaim(), context)
        return answer

    async def _append_at_current(
        self,
        game_id: str,
        live: LiveGame,
        seat: int,
        action: Action,
        lifecycle_key: str,
        stale_reason: str,
        context,
    ) -> tuple[State, LogEntry, list]:
        """Apply ``action`` (a resignation or a table entry) at the game's current version and
        append it, catching up and trying again (5 times) when another replica appends in
        between; the caller holds ``live.lock``. The lifecycle event names the seat under
        ``lifecycle_key``. Returns the new state, its entry and the events.

        Aborts: FAILED_PRECONDITION with the rule's reason if the action is refused; ABORTED
        ``stale_version`` (``stale_reason``) if the game kept moving; the log is unchanged."""
        for _ in range(5):
            await self.catch_up(game_id, live)
            nxt = live.state.clone()
            try:
                events = nxt.apply(seat, action, at_ms=self.time.now_ms())
            except IllegalAction as exc:
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    exc.code,
                    exc.reason,
                    **exc.details,
                )
            entry = self._entry(nxt, seat, action, events, self.label(nxt, seat, action))
            lifecycle = self._lifecycle(game_id, nxt, entry.result)
            lifecycle[lifecycle_key] = seat
            moves = await self.cpu(partial(stored_moves, self.title, nxt, live.meta, self.game))
            outcome = await self.gamelog.append(
                game_id, live.state.version, entry, "", "", lifecycle, moves
            )
            if outcome.status == "ok":
                live.state, live.last = nxt, entry
                return nxt, entry, events
        await abort(
            context,
            grpc.StatusCode.ABORTED,
            "stale_version",
            stale_reason,
            current_version=live.state.version,
        )
        raise AssertionError("abort raises")  # for the type checker: abort never returns

    async def _table_entry(self, game_id: str, seat: int, action: Action, context):
        """Append a non-move entry at the game's current version (retried
        when another replica appends in between)."""
        live = await self.get_live(game_id, context)
        async with live.lock:
            _, entry, events = await self._append_at_current(
                game_id,
                live,
                seat,
                action,
                action.TYPE,
                "the game kept moving meanwhile; try again",
                context,
            )
        logger.info("table entry", game_id=game_id, seat=seat, type=action.TYPE)
        return game_pb2.SubmitActionResponse(
            version=entry.version,
            events=[protomap.struct(e) for e in events],
            active_seats=list(entry.active),
            finished=entry.finished,
        )
