"""Where a tournament's tables are played: :class:`LobbyTables` creates each table through
the lobby (``roundhouse.v1.Lobby``, with the internal-service credentials), binds every
seat to its player's account and starts the game; :class:`SimulatedTables` plays nothing
(benchmarks and tests record results with ``RecordResult``).

The lobby calls are idempotent where a restart can repeat them: :meth:`LobbyTables.start`
reads the lobby's table first and only fills seats still empty and only starts a table
still open, so a tournament process that died between two calls carries on where it was.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from typing import Any, Protocol

import grpc

from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.accounts.models import BOT, SYSTEM
from services.accounts.store import AccountStore
from services.match.controls import ClockSettings
from services.platform.auth import internal
from services.platform.channels import aio_channel
from services.platform.grpc_errors import error_info

PERMANENT = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
}
"""Lobby refusals a retry cannot cure: the table is void (``start_failed``)."""


LEFT_AS_IS = {"already_paused", "not_paused", "no_clock", "not_running"}
"""Pause/resume refusals that leave nothing to do."""


class StartFailed(Exception):
    """The lobby refused a table for good (``permanent``) or could not be reached."""

    def __init__(self, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


@dataclasses.dataclass(frozen=True)
class LobbyState:
    """A lobby table as the tournament sees it: ``status`` (open, starting, running,
    finished, aborted), ``game_id``, ``result`` once finished."""

    status: str
    game_id: str = ""
    result: dict[str, Any] | None = None


class TableRunner(Protocol):
    async def create(
        self,
        title: str,
        options_json: str,
        players: int,
        owner: str,
        tournament_id: str = "",
        clock: ClockSettings | None = None,
    ) -> str:
        """A new table for ``owner`` (username) of tournament ``tournament_id`` with the
        tournament's ``clock`` (None: no clock, forfeit); its id."""

    async def pause(self, table_id: str, paused: bool) -> None:
        """Stop (``paused``) or start again a running table's clocks."""

    async def start(self, table_id: str, accounts: list[str]) -> str:
        """Seat ``accounts`` (ids, seat order), start; the game id."""

    async def state(self, table_id: str) -> LobbyState | None:
        """The table's state, None if unknown to the runner."""

    async def request_review(self, table_id: str) -> str:
        """Ask for a game review of the finished table (idempotent: the lobby keeps one per
        table); the review's state (``queued``, ``running``, ``done``, ``failed``)."""


class SimulatedTables:
    """No games: ids are made up, results come by ``RecordResult``."""

    async def create(
        self,
        title: str,
        options_json: str,
        players: int,
        owner: str,
        tournament_id: str = "",
        clock: ClockSettings | None = None,
    ) -> str:
        return uuid.uuid4().hex[:12]

    async def pause(self, table_id: str, paused: bool) -> None:
        return None

    async def start(self, table_id: str, accounts: list[str]) -> str:
        return f"sim-{table_id}"

    async def state(self, table_id: str) -> LobbyState | None:
        return None

    async def request_review(self, table_id: str) -> str:
        return ""  # no game, nothing to review


_STATUS = {
    lobby_pb2.TABLE_STATUS_OPEN: "open",
    lobby_pb2.TABLE_STATUS_STARTING: "starting",
    lobby_pb2.TABLE_STATUS_RUNNING: "running",
    lobby_pb2.TABLE_STATUS_FINISHED: "finished",
    lobby_pb2.TABLE_STATUS_ABORTED: "aborted",
}


class LobbyTables:
    """Tables through the lobby at ``address`` as the internal service ``tournaments``.

    Seats: a hosted bot account (bound to a policy) is seated with ``AddBot(bot=...)``, a
    system bot account (``greedy-bot``) with ``AddBot(policy=...)``, everyone else (people
    and self-playing bot accounts) with ``JoinSeat(account=...)``.
    """

    def __init__(
        self, address: str, secret: str, accounts: AccountStore, timeout_s: float = 10.0
    ) -> None:
        self.channel = aio_channel(address)
        self.lobby = lobby_pb2_grpc.LobbyStub(self.channel)
        self.md = internal(secret, "tournaments")
        self.accounts = accounts
        self.timeout_s = timeout_s

    async def close(self) -> None:
        await self.channel.close()

    async def _call(self, method: str, request):
        try:
            return await getattr(self.lobby, method)(
                request, metadata=self.md, timeout=self.timeout_s
            )
        except grpc.aio.AioRpcError as err:
            raise StartFailed(
                f"lobby {method}: {err.code().name} {err.details()}", err.code() in PERMANENT
            ) from None

    async def create(
        self,
        title: str,
        options_json: str,
        players: int,
        owner: str,
        tournament_id: str = "",
        clock: ClockSettings | None = None,
    ) -> str:
        request = lobby_pb2.CreateTableRequest(
            title=title,
            num_players=players,
            options_json=options_json,
            owner=owner,
            tournament_id=tournament_id,
        )
        if clock is not None:
            if clock.timed:
                request.time_control.CopyFrom(
                    lobby_pb2.TimeControl(**clock.time_control.model_dump())
                )
            request.timeout_policy = clock.timeout_policy
            request.takeover_policy = clock.takeover_policy
        table = await self._call("CreateTable", request)
        return table.table_id

    async def pause(self, table_id: str, paused: bool) -> None:
        """``PauseTable`` / ``ResumeTable``; a table already so (``already_paused``,
        ``not_paused``), one without a clock (``no_clock``) or no longer running
        (``not_running``) is left as it is. Raises :class:`StartFailed` otherwise."""
        method = "PauseTable" if paused else "ResumeTable"
        try:
            await getattr(self.lobby, method)(
                lobby_pb2.StartTableRequest(table_id=table_id),
                metadata=self.md,
                timeout=self.timeout_s,
            )
        except grpc.aio.AioRpcError as err:
            info = error_info(err)
            if info is not None and info.reason in LEFT_AS_IS:
                return
            raise StartFailed(
                f"lobby {method}: {err.code().name} {err.details()}", err.code() in PERMANENT
            ) from None

    async def start(self, table_id: str, accounts: list[str]) -> str:
        table = await self._call("GetTable", lobby_pb2.GetTableRequest(table_id=table_id))
        if table.status != lobby_pb2.TABLE_STATUS_OPEN:
            return table.game_id
        for seat, account_id in enumerate(accounts):
            if table.seats[seat].kind != lobby_pb2.SEAT_KIND_EMPTY:
                continue
            account = await self.accounts.by_id(account_id)
            if account is None:
                raise StartFailed(f"account {account_id} is gone", True)
            if account.kind == SYSTEM:
                request = lobby_pb2.AddBotRequest(
                    table_id=table_id, seat=seat, policy=account.hosted_policy or ""
                )
                await self._call("AddBot", request)
            elif account.kind == BOT and account.hosted_policy:
                request = lobby_pb2.AddBotRequest(
                    table_id=table_id, seat=seat, bot=account.username
                )
                await self._call("AddBot", request)
            else:
                await self._call(
                    "JoinSeat",
                    lobby_pb2.JoinSeatRequest(
                        table_id=table_id, seat=seat, account=account.username
                    ),
                )
        started = await self._call("StartTable", lobby_pb2.StartTableRequest(table_id=table_id))
        return started.game_id

    async def state(self, table_id: str) -> LobbyState | None:
        try:
            table = await self._call("GetTable", lobby_pb2.GetTableRequest(table_id=table_id))
        except StartFailed:
            return None
        result = None
        if table.HasField("result"):
            result = {
                "scores": list(table.result.scores),
                "ranks": list(table.result.ranks),
                "end_reason": table.result.end_reason,
            }
        return LobbyState(_STATUS.get(table.status, "open"), table.game_id, result)

    async def request_review(self, table_id: str, wait_s: float = 10.0) -> str:
        """``RequestReview`` as the tournament service (an internal caller may ask for any
        finished table); the lobby stores one review per table and sends its task once, so a
        repeated call starts nothing.

        The tournament learns of a finished game from the lifecycle stream, which the lobby
        reads too: the lobby's table may not be marked finished yet. A ``not_finished``
        refusal is asked again (0.05 s, doubling up to 1 s) for up to ``wait_s`` seconds.

        Raises:
            StartFailed: the lobby refused (``permanent``) or could not be reached, or the
                table was still not finished after ``wait_s``.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        pause = 0.05
        request = lobby_pb2.GetTableRequest(table_id=table_id)
        while True:
            try:
                review = await self.lobby.RequestReview(
                    request, metadata=self.md, timeout=self.timeout_s
                )
                return review.state
            except grpc.aio.AioRpcError as err:
                info = error_info(err)
                waiting = info is not None and info.reason == "not_finished"
                if not waiting or loop.time() + pause > deadline:
                    reason = f" ({info.reason})" if info is not None else ""
                    raise StartFailed(
                        f"lobby RequestReview: {err.code().name}{reason} {err.details()}",
                        err.code() in PERMANENT,
                    ) from None
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)


def result_of_fields(fields: dict[str, str]) -> dict[str, Any] | None:
    """The result of a ``game_finished`` lifecycle entry (None if it has none)."""
    try:
        return json.loads(fields["result"])
    except (KeyError, ValueError):
        return None
