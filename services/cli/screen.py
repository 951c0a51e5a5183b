"""``roundhouse play TABLE``: a table on a terminal screen (textual), over the public API.

The screen shows, for the signed-in seat (or as a spectator when the account holds no
seat there):

* the seat's own summary line and whose turn it is;
* the other seats' summary lines (``GetViewResponse.seat_summaries``: what this seat may see);
* the last moves, each with its label (``GameUpdate.label``), live from ``WatchTable``;
* the numbered legal moves with their labels (``ListMoves``) while it is the seat's turn.

A move is typed as its number (``3``), as a number and a value for a ranged move
(``5 120``: the range's field takes 120), or as the action's JSON (for scripts). The
input is checked first (a number in the list, a value inside the range and on its
steps); the lobby and the rules service judge the rest. A refusal shows its reason and
changes nothing: the list stays as it was.

Everything goes through the lobby (gRPC, ``authorization: Bearer``): the screen is a
client of the same public API as any outside program.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections import deque

import grpc
from rich.markup import escape
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, Input, Static

from roundhouse.v1 import game_pb2, lobby_pb2, lobby_pb2_grpc
from services.cli.client import refusal, seat_text
from services.cli.session import Session

HISTORY = 12
"""How many of the last moves the screen shows."""

WATCH_RETRIES = 5
"""Reconnections of the live stream in a row (1 s, 2 s, ... apart) before giving up."""


class BadInput(ValueError):
    """What was typed is not a move of the list (``reason``: a code, message: why)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Move:
    """One entry of the seat's legal moves: its label, the action's JSON and, for a
    ranged move, the field and its ``min..max`` by ``step``."""

    label: str
    action: dict
    field: str = ""
    min: int = 0
    max: int = 0
    step: int = 1

    @property
    def ranged(self) -> bool:
        return bool(self.field)

    def line(self, number: int) -> str:
        """``" 3. Bid $8 on PRR"``; a ranged move says how to give its value."""
        text = f"{number:>3}. {escape(self.label)}"
        if self.ranged:
            text += f"   [dim](type {number} and a {self.field})[/dim]"
        return text


def title_name(title: str) -> str:
    """A title's name (``"railbarons"`` -> ``"Chicago Express"``); the id if unknown here."""
    from services.kernel.registry import UnknownTitle
    from services.rules.titles import get_game

    try:
        return get_game(title).name
    except UnknownTitle:
        return title


def moves_of(answer: game_pb2.ListLegalActionsResponse) -> list[Move]:
    """The entries of a ``ListMoves`` answer, labels beside them (the compact JSON when a
    server sends no labels)."""
    out = []
    for i, text in enumerate(answer.actions_json):
        label = answer.labels[i] if i < len(answer.labels) else text
        r = answer.ranges[i] if i < len(answer.ranges) else None
        action = json.loads(text)
        if r is not None and r.field:
            out.append(Move(label, action, r.field, r.min, r.max, r.step or 1))
        else:
            out.append(Move(label, action))
    return out


def choose(text: str, moves: list[Move]) -> tuple[Move | None, dict]:
    """The move typed as ``text``: ``"N"``, ``"N VALUE"`` (a ranged move) or an action's
    JSON. Returns (the entry or None for JSON, the action to send).

    Raises:
        BadInput: ``no_moves`` (not this seat's turn), ``empty``, ``not_a_number``,
            ``no_such_move`` (outside ``1..len(moves)``), ``value_needed`` /
            ``value_not_allowed``, ``value_out_of_range``, ``value_off_step``,
            ``bad_json``.
    """
    text = text.strip()
    if not text:
        raise BadInput("empty", "type the number of a move")
    if text.startswith("{"):
        try:
            action = json.loads(text)
        except ValueError as exc:
            raise BadInput("bad_json", f"not JSON: {exc}") from None
        if not isinstance(action, dict):
            raise BadInput("bad_json", "an action is a JSON object")
        return None, action
    if not moves:
        raise BadInput("no_moves", "it is not your turn: there is no move to make")
    parts = text.split()
    if len(parts) > 2 or not all(p.lstrip("-").isdigit() for p in parts):
        raise BadInput("not_a_number", "type a move's number (and a value for a range)")
    number = int(parts[0])
    if not 1 <= number <= len(moves):
        raise BadInput("no_such_move", f"there is no move {number}: choose 1 to {len(moves)}")
    move = moves[number - 1]
    if not move.ranged:
        if len(parts) == 2:
            raise BadInput("value_not_allowed", f"move {number} takes no value")
        return move, move.action
    if len(parts) == 1:
        raise BadInput(
            "value_needed", f"move {number} needs a {move.field}: {move.min} to {move.max}"
        )
    value = int(parts[1])
    if not move.min <= value <= move.max:
        raise BadInput(
            "value_out_of_range",
            f"{move.field} {value} is outside {move.min} to {move.max}",
        )
    if (value - move.min) % move.step:
        raise BadInput(
            "value_off_step",
            f"{move.field} {value} is not {move.min} plus a multiple of {move.step}",
        )
    return move, {**move.action, move.field: value}


class PlayApp(App):
    """The screen of one table. ``seat`` None = the seat the signed-in account holds
    (a spectator when it holds none)."""

    TITLE = "Roundhouse"
    CSS = """
    #left { width: 1fr; }
    #right { width: 1fr; }
    .panel { border: round $accent; padding: 0 1; height: auto; }
    #history { height: 1fr; }
    #moves-box { border: round $success; height: 1fr; }
    #status { height: auto; padding: 0 1; }
    """
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def __init__(self, session: Session, table_id: str, seat: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.table_id = table_id
        self.seat = seat
        self.table: lobby_pb2.Table | None = None
        self.view: game_pb2.GetViewResponse | None = None  # the last view shown
        self.result_lines: list[str] = []  # the standings, once the game is over
        self.version = -1  # of the last view shown
        self.moves: list[Move] = []
        self.moves_version = -1
        self.finished = False
        self.history: deque[str] = deque(maxlen=HISTORY)
        self.status_text = ""
        self.error: str = ""  # the reason of the last refusal ("" after a move went through)
        self._lock = asyncio.Lock()
        self._channel: grpc.aio.Channel | None = None
        self.stub: lobby_pb2_grpc.LobbyStub | None = None

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="left"):
                yield Static("", id="you", classes="panel")
                yield Static("", id="seats", classes="panel")
                yield Static("", id="history", classes="panel")
            with Vertical(id="right"):
                with VerticalScroll(id="moves-box"):
                    yield Static("", id="moves")
        yield Static("", id="status")
        yield Input(placeholder="move number (and a value for a range), then Enter", id="command")
        yield Footer()

    async def on_mount(self) -> None:
        self.sub_title = f"table {self.table_id}"
        self.query_one("#you", Static).border_title = "You"
        self.query_one("#seats", Static).border_title = "Other seats"
        self.query_one("#history", Static).border_title = "Last moves"
        self.query_one("#moves-box").border_title = "Your moves"
        self.query_one("#command", Input).focus()
        self._channel = grpc.aio.insecure_channel(self.session.lobby)
        self.stub = lobby_pb2_grpc.LobbyStub(self._channel)
        self.run_worker(self.follow(), exclusive=True, group="watch")

    async def on_unmount(self) -> None:
        if self._channel is not None:
            await self._channel.close(grace=None)

    # ------------------------------------------------------------------ data

    def name_of(self, seat: int) -> str:
        if self.table is None or seat >= len(self.table.seats):
            return f"seat {seat}"
        return seat_text(self.table.seats[seat])

    async def follow(self) -> None:
        """Load the table, then follow its moves live until the game ends."""
        md = self.session.metadata
        try:
            self.table = await self.stub.GetTable(
                lobby_pb2.GetTableRequest(table_id=self.table_id), metadata=md, timeout=10
            )
        except grpc.aio.AioRpcError as err:
            self.show_status(refusal(err), error=True)
            return
        self.title = f"Roundhouse: {title_name(self.table.title)}"
        if self.seat is None:
            mine = [
                s.index
                for s in self.table.seats
                if s.kind == lobby_pb2.SEAT_KIND_PLAYER and s.name == self.session.username
            ]
            self.seat = mine[0] if mine else None
        await self.refresh_game()
        last = max(0, self.version - HISTORY)
        drops = 0
        while True:
            request = lobby_pb2.WatchTableRequest(table_id=self.table_id, from_version=last)
            try:
                async for update in self.stub.WatchTable(request, metadata=md):
                    last, drops = update.version, 0
                    who = self.name_of(update.seat)
                    self.history.append(
                        f"[dim]{update.version:>4}[/dim] {escape(who)}: "
                        + escape(update.label or update.action_json)
                    )
                    if update.version > self.version or update.finished:
                        await self.refresh_game()
                    else:
                        self.render_panels()
                return
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.CANCELLED:
                    return
                if err.code() != grpc.StatusCode.UNAVAILABLE or drops >= WATCH_RETRIES:
                    self.show_status(refusal(err), error=True)
                    return
                drops += 1  # the lobby restarting: resume after the last move seen
                self.show_status(f"connection lost; resuming from move {last}", error=True)
                await asyncio.sleep(drops)

    async def refresh_game(self) -> None:
        """Read the view (and the moves, when the seat is to act) and redraw."""
        md = self.session.metadata
        async with self._lock:
            request = lobby_pb2.SeatRequest(table_id=self.table_id)
            if self.seat is not None:
                request.seat = self.seat
            try:
                view = await self.stub.GetSeatView(request, metadata=md, timeout=10)
                moves: list[Move] = []
                moves_version = view.version
                if self.seat is not None and self.seat in view.active_seats and not view.finished:
                    answer = await self.stub.ListMoves(request, metadata=md, timeout=10)
                    moves, moves_version = moves_of(answer), answer.version
            except grpc.aio.AioRpcError as err:
                self.show_status(refusal(err), error=True)
                return
            self.view = view
            self.version = view.version
            self.moves, self.moves_version = moves, moves_version
            if view.finished and not self.finished:
                self.finished = True
                await self._load_result()
            self.render_panels()

    async def _load_result(self) -> None:
        try:
            result = await self.stub.GetTableResult(
                lobby_pb2.GetTableRequest(table_id=self.table_id),
                metadata=self.session.metadata,
                timeout=10,
            )
        except grpc.aio.AioRpcError as err:
            self.show_status(refusal(err), error=True)
            return
        lines = [
            f"{s.rank}. {s.name or 'seat ' + str(s.seat)} (seat {s.seat}): {s.score}"
            for s in result.standings
        ]
        self.result_lines = lines
        self.show_status(f"Game over ({result.end_reason}): " + "; ".join(lines))

    # ------------------------------------------------------------------ drawing

    def render_panels(self) -> None:
        view = self.view
        if view is None:
            return
        summaries = list(view.seat_summaries)
        active = set(view.active_seats)
        you = self.query_one("#you", Static)
        if self.seat is None:
            head = f"Watching (no seat of yours here) · move {view.version}"
        else:
            mine = summaries[self.seat] if self.seat < len(summaries) else ""
            head = f"[b]Seat {self.seat}[/b] · {escape(self.name_of(self.seat))}\n{escape(mine)}"
        if view.finished:
            head += "\n[b]Game over[/b]\n" + escape("\n".join(self.result_lines))
        elif self.seat in active:
            head += "\n[b reverse] Your turn [/b reverse]"
        else:
            waiting = escape(", ".join(self.name_of(s) for s in sorted(active)))
            head += f"\nWaiting for {waiting}"
        you.update(head)
        others = [
            f"{escape(line)}  [dim]{escape(self.name_of(i))}[/dim]"
            for i, line in enumerate(summaries)
            if i != self.seat
        ]
        self.query_one("#seats", Static).update("\n".join(others) or "-")
        self.query_one("#history", Static).update("\n".join(self.history) or "no moves yet")
        if self.moves:
            text = "\n".join(m.line(i + 1) for i, m in enumerate(self.moves))
        elif view.finished:
            text = "The game is over."
        else:
            text = "Not your turn."
        self.query_one("#moves", Static).update(text)

    def show_status(self, text: str, error: bool = False) -> None:
        self.status_text = text
        self.error = text if error else ""
        shown = escape(text)
        self.query_one("#status", Static).update(f"[red]{shown}[/red]" if error else shown)

    # ------------------------------------------------------------------ input

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one("#command", Input)
        typed, box.value = event.value, ""  # the next entry starts afresh; the status keeps it
        try:
            move, action = choose(typed, self.moves)
        except BadInput as exc:
            self.show_status(f"{typed!r}: {exc} ({exc.reason})", error=True)
            return
        if self.seat is None:
            self.show_status("you hold no seat at this table (spectator)", error=True)
            return
        await self.submit(move, action)

    async def submit(self, move: Move | None, action: dict) -> None:
        """Send ``action`` at the version of the list shown; on refusal show the reason
        and keep everything as it was."""
        request = lobby_pb2.SubmitMoveRequest(
            table_id=self.table_id,
            seat=self.seat,
            action_json=json.dumps(action),
            expected_version=self.moves_version if self.moves_version >= 0 else self.version,
            idempotency_key=uuid.uuid4().hex,
        )
        try:
            await self.stub.SubmitMove(request, metadata=self.session.metadata, timeout=10)
        except grpc.aio.AioRpcError as err:
            self.show_status(refusal(err), error=True)
            return
        label = move.label if move is not None else json.dumps(action)
        if move is not None and move.ranged:
            label += f" ({move.field} {action[move.field]})"
        self.show_status(f"played: {label}")
        self.moves = []  # the next list comes with the next view
        self.render_panels()


def run(session: Session, table_id: str, seat: int | None = None) -> int:
    """Run the screen until the player quits (Ctrl+Q)."""
    PlayApp(session, table_id, seat).run()
    return 0
