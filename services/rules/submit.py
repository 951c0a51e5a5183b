"""``SubmitAction``: a move validated on a clone of the cached state and appended with the
compare-and-set script; idempotency keys answer a repeated request, a stale version is ABORTED."""

from __future__ import annotations

import json
import time

import grpc
from google.protobuf import json_format

from services.kernel.engine import (
    IllegalAction,
    MalformedAction,
    State,
    canonical_json,
)
from services.platform.auth import current_principal
from services.platform.gamelog import LogEntry
from services.platform.grpc_errors import abort
from services.rules import protomap
from services.rules.messages import (
    MAX_IDEMPOTENCY_KEY,
    answer_proto,
    fingerprint,
    stored_moves,
)
from services.rules.metrics import ACTIONS, SUBMIT_SECONDS


class Submit:
    """The moves of :class:`services.rules.servicer.GameRulesServicer`."""

    async def SubmitAction(self, request, context):
        started = time.perf_counter()
        try:
            return await self._submit(request, context)
        finally:
            SUBMIT_SECONDS.labels(self.title).observe(time.perf_counter() - started)

    async def _submit(self, request, context):
        game_id = request.game_id
        live = await self.find_live(game_id, context)
        if live is None:
            stored = await self.archived(game_id, context)  # NOT_FOUND without archive
            self.archive.refuse_action(stored, request.seat)
        seat = await self._seat(request.seat, live, context)
        try:
            which = request.WhichOneof("move")
            if which == "action":
                action_json = protomap.action_from_proto(request.action, self.title)
            elif which == "action_json":
                action_json = request.action_json
            else:
                raise MalformedAction("missing_action", "the request carries no action")
            action = self.game.parse_action(action_json)
        except (MalformedAction, json_format.ParseError) as exc:
            ACTIONS.labels(self.title, "malformed").inc()
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                getattr(exc, "code", "bad_action"),
                str(exc),
            )
        if len(request.idempotency_key) > MAX_IDEMPOTENCY_KEY:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_idempotency_key",
                f"idempotency_key is at most {MAX_IDEMPOTENCY_KEY} characters, "
                f"got {len(request.idempotency_key)}",
                max_length=MAX_IDEMPOTENCY_KEY,
                length=len(request.idempotency_key),
            )
        key = f"{seat}:{request.idempotency_key}" if request.idempotency_key else ""
        print_ = fingerprint(seat, request.expected_version, action)
        # No look-up of the key's stored answer before the lock: a retry of an applied move
        # is at an older version (found below, on the stale path), and any other reuse of
        # the key is answered by the append script, which checks the key atomically; a read
        # here would cost every move one more Redis round trip.
        async with live.lock:
            if request.expected_version != live.state.version:
                await self.catch_up(game_id, live)  # also notices a stream that lost entries
            if request.expected_version != live.state.version:
                if key:  # a concurrent twin of this request may have just won
                    prior = await self.gamelog.answer(game_id, key)
                    if prior is not None:
                        return await self._repeat(prior, print_, context)
                await self._stale(context, request.expected_version, live.state.version)
            if live.state.taken_over(seat) and _caller_service() == "lobby":
                await abort(
                    context,
                    grpc.StatusCode.PERMISSION_DENIED,
                    "seat_taken_over",
                    f"seat {seat} is played by a hosted bot since its timeout or resignation",
                    seat=seat,
                )
            before, now_ms = live.state, self.time.now_ms()

            def move() -> tuple[State, list, LogEntry, dict[str, str]]:
                nxt = before.clone()  # the cache changes only once the log has the move
                events = nxt.apply(seat, action, at_ms=now_ms)
                label = self.label(before, seat, action)
                moves = stored_moves(self.title, nxt, live.meta, self.game)
                return nxt, events, self._entry(nxt, seat, action, events, label), moves

            try:
                nxt, events, entry, moves = await self.cpu(move)
            except MalformedAction as exc:
                ACTIONS.labels(self.title, "malformed").inc()
                await abort(context, grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason)
            except IllegalAction as exc:
                version = live.state.version
                await self.catch_up(game_id, live)  # the refusal may rest on lost moves
                if live.state.version != version:
                    await self._stale(context, request.expected_version, live.state.version)
                ACTIONS.labels(self.title, "illegal").inc()
                await abort(
                    context,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    exc.code,
                    exc.reason,
                    **exc.details,
                )
            answer = canonical_json(
                {
                    "version": entry.version,
                    "events": events,
                    "active": list(entry.active),
                    "finished": entry.finished,
                    "fingerprint": print_,
                }
            )
            outcome = await self.gamelog.append(
                game_id,
                request.expected_version,
                entry,
                key,
                answer,
                self._lifecycle(game_id, nxt, entry.result),
                moves,
            )
            if outcome.status == "ok":
                live.state, live.last = nxt, entry
                self.repetition.observe(game_id, nxt)  # reports a loop, never refuses
            elif outcome.status == "duplicate":
                return await self._repeat(outcome.answer, print_, context)
            else:  # another replica appended first: catch up, then tell the caller
                await self.catch_up(game_id, live)
                await self._stale(context, request.expected_version, outcome.version)
        ACTIONS.labels(self.title, "applied").inc()
        return answer_proto(answer)

    async def _repeat(self, prior: str, print_: str, context):
        """The stored answer for a repeated idempotency key, if it stands for
        the same request; INVALID_ARGUMENT if the key was used for another."""
        if json.loads(prior).get("fingerprint") != print_:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "idempotency_key_reused",
                "this idempotency key was already used for a different request",
            )
        ACTIONS.labels(self.title, "duplicate").inc()
        return answer_proto(prior)

    async def _stale(self, context, expected: int, current: int):
        """ABORTED ``stale_version`` for a version the game has left behind;
        OUT_OF_RANGE ``future_version`` for one it has not reached (a client
        bug, not a race: the version it saw cannot be ahead of the log);
        INVALID_ARGUMENT ``bad_version`` for a negative one (versions count from 0)."""
        if expected < 0:
            label, code, reason = "malformed", grpc.StatusCode.INVALID_ARGUMENT, "bad_version"
            why = f"expected_version {expected} is negative: versions count from 0 (send the "
            why += "version you last saw)"
        elif expected > current:
            label, code, reason = "future", grpc.StatusCode.OUT_OF_RANGE, "future_version"
            why = f"expected_version {expected} is ahead of the game: it is at version "
            why += f"{current} (send the version you last saw)"
        else:
            label, code, reason = "stale", grpc.StatusCode.ABORTED, "stale_version"
            why = f"expected_version {expected} is stale: the game is at version {current}"
        ACTIONS.labels(self.title, label).inc()
        await abort(context, code, reason, why, expected_version=expected, current_version=current)


def _caller_service() -> str:
    """The internal service making this call (``lobby``, ``bots``, ...), or ``""``."""
    principal = current_principal()
    return getattr(principal, "service", "") or "" if principal is not None else ""
