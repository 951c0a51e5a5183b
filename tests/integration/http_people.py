"""Scripted people playing through the HTTP gateways, for the load and fault benchmark
(``benchmarks/bench_load_faults.py``) and the fault suite (``test_faults.py``).

* :class:`Front`: the gateways as a client behind a load balancer sees them: each request
  goes to the next gateway, and one that finds its gateway gone (refused, reset, 502/503/504)
  or is answered 429 is sent again (after ``Retry-After``), with the same idempotency key
  for a move.
* :class:`Players`: makes the tables over HTTP (bots on every seat but the person's) and
  plays the people: each person holds its account's event stream open
  (``/api/stream/events``, resumed after the last event id when it breaks, on another
  gateway) and, on each ``yourTurn``, reads its moves (``GET .../moves``), draws one as the
  ``random`` bot does (:func:`pick`) and posts it (``POST .../moves``, timed) with the key
  ``p:<table>:<version>`` (:func:`tests.integration.invariants.person_key`). A person with
  no event for :data:`POLL_S` reads its moves anyway (a client's safety net).
* :func:`person_through_a_kill`: one person's game with a process killed mid-game, checked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from collections.abc import Mapping
from typing import Any

import aiohttp
import grpc
import redis.asyncio as aioredis

from roundhouse.v1 import lobby_pb2_grpc
from services.accounts.models import HUMAN
from services.accounts.store import AccountStore
from services.archive.store import ArchiveStore
from services.cli.launcher import Stack
from services.platform.auth import bearer
from services.platform.db import create_engine, session_factory
from services.platform.settings import StoreSettings
from tests.integration import faults
from tests.integration.invariants import (
    Violation,
    check_games,
    person_key,
    stack_game_log,
    wait_finished,
)

POLL_S = 10.0
"""A person who has had no event for this long reads its moves anyway (counted:
:attr:`Players.polls_found_turn`)."""


@dataclasses.dataclass
class Person:
    """A scripted person: an account, its token's header and its turn signal."""

    name: str
    headers: dict[str, str]
    turn: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    finished: bool = False
    last_event: str = ""


@dataclasses.dataclass
class Game:
    """One planned game; ``table_id``/``game_id`` once made, ``version``/``done`` as seen."""

    index: int
    title: str
    players: int
    person_seat: int | None
    seed: int
    table_id: str = ""
    game_id: str = ""
    person: Person | None = None
    version: int = 0
    done: bool = False


def pick(moves: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """A move drawn as the ``random`` bot draws: an entry uniformly, then for a ranged entry
    a value uniformly among ``min, min+step, ..., max``."""
    move = moves[rng.randrange(len(moves))]
    action = dict(move["action"])
    span = move.get("range")
    if span:
        steps = (span["max"] - span["min"]) // span["step"]
        action[span["field"]] = span["min"] + span["step"] * rng.randint(0, steps)
    return action


class HttpRefused(Exception):
    """The gateway answered a status that retrying will not change (4xx but 429)."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {str(body)[:200]}")
        self.status, self.body = status, body


RETRIED = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, asyncio.TimeoutError)


class Front:
    """The gateways behind a round-robin load balancer that skips a gateway that is down.

    Args:
        session: the aiohttp session.
        addresses: ``host:port`` of every gateway replica.
        deadline_s: how long one request is retried before it fails.
    """

    def __init__(
        self, session: aiohttp.ClientSession, addresses: list[str], deadline_s: float = 180.0
    ) -> None:
        self.session = session
        self.bases = [f"http://{a}" for a in addresses]
        self.deadline_s = deadline_s
        self.turn = 0
        self.retries = 0

    def base(self, i: int | None = None) -> str:
        if i is None:
            self.turn += 1
            i = self.turn
        return self.bases[i % len(self.bases)]

    async def call(
        self, method: str, path: str, headers: dict[str, str], body: dict | None = None
    ) -> Any:
        """Send a request (to the next gateway), again after a gone gateway, a 5xx or a 429
        (after its ``Retry-After``); the answer's JSON.

        Raises:
            HttpRefused: a 4xx answer other than 429.
            TimeoutError: still failing after ``deadline_s``.
        """
        started = time.monotonic()
        attempt = 0
        while True:
            wait = min(0.1 * 2**attempt, 2.0)
            try:
                async with self.session.request(
                    method, self.base() + path, headers=headers, json=body
                ) as answer:
                    data = await answer.json(content_type=None)
                    if answer.status < 400:
                        return data
                    if answer.status == 429:
                        wait = float(answer.headers.get("Retry-After", wait))
                    elif answer.status < 500:
                        raise HttpRefused(answer.status, data)
            except RETRIED:
                pass
            self.retries += 1
            attempt += 1
            if time.monotonic() - started > self.deadline_s:
                raise TimeoutError(f"{method} {path} failed for {self.deadline_s:.0f} s")
            await asyncio.sleep(wait)


@dataclasses.dataclass
class Post:
    """One acknowledged move of a person: when it was sent and how long until its answer
    (ms, retries included)."""

    sent: float
    ms: float


class Players:
    """Sets the games up over HTTP and plays the people's seats.

    Args:
        front: the gateways.
        accounts: the account store (accounts and tokens are made there directly: signing
            up over the API hashes a password, which is not what is measured).
        policies: title -> the hosted bot policy of the other seats.
        think_s: a person's pause before each move.
    """

    def __init__(
        self,
        front: Front,
        accounts: AccountStore,
        policies: Mapping[str, str],
        think_s: float = 0.0,
    ) -> None:
        self.front, self.accounts, self.think_s = front, accounts, think_s
        self.policies = dict(policies)
        self.posts: list[Post] = []
        self.acknowledged: dict[str, dict[str, tuple[int, dict]]] = {}
        self.errors: list[str] = []
        self.stale = 0
        self.polls_found_turn = 0
        self.stream_breaks = 0
        self.tasks: list[asyncio.Task] = []
        self.stopping = False
        """Set by :meth:`stop`: every person's loop ends at its next turn."""
        self._host: dict[str, str] | None = None
        self._games: list[Game] = []

    async def _account(self, name: str) -> dict[str, str]:
        account = await self.accounts.create_account(name, None, HUMAN)
        secret, _ = await self.accounts.create_token(account, ["play", "tables:write"], 0, "load")
        return {"Authorization": f"Bearer {secret}"}

    async def host(self, run: str) -> None:
        """Make the account that owns the bots-only tables of run ``run`` (once, first)."""
        self._host = await self._account(f"{run}-host")

    async def make(self, game: Game, run: str) -> None:
        """Make the game's table: its owner (the person, or the run's host account) creates
        it (bots-only tables with their seed), the person joins, bots take the other seats."""
        if game.person_seat is not None:
            name = f"{run}-p{game.index}"
            game.person = Person(name, await self._account(name))
            owner = game.person.headers
        else:
            assert self._host is not None, "host() first"
            owner = self._host
        new: dict[str, Any] = {"title": game.title, "num_players": game.players}
        if game.person is None:
            new["seed"] = game.seed
        table = await self.front.call("POST", "/api/tables", owner, new)
        game.table_id = table["table_id"]
        for seat in range(game.players):
            if seat == game.person_seat:
                await self.front.call(
                    "POST", f"/api/tables/{game.table_id}/seats/{seat}/join", owner
                )
            else:
                path = f"/api/tables/{game.table_id}/seats/{seat}/bot"
                await self.front.call("POST", path, owner, {"policy": self.policies[game.title]})

    async def start(self, game: Game) -> None:
        """Start the table, and the person's play. A start retried (its first answer lost to
        a timeout or a 5xx on a loaded machine) may find the table already starting or
        running (``not_open``): the table is then read until it names its game."""
        headers = game.person.headers if game.person else self._host
        assert headers is not None
        tid = game.table_id
        try:
            table = await self.front.call("POST", f"/api/tables/{tid}/start", headers)
        except HttpRefused as exc:
            if not (isinstance(exc.body, dict) and exc.body.get("code") == "not_open"):
                raise
            table = await self.front.call("GET", f"/api/tables/{tid}", headers)
            while not table.get("game_id") and table.get("status") == "starting":
                await asyncio.sleep(0.2)
                table = await self.front.call("GET", f"/api/tables/{tid}", headers)
            if not table.get("game_id"):
                raise
        game.game_id = table["game_id"]
        self._games.append(game)
        if game.person is not None:
            self.tasks.append(asyncio.create_task(self._play(game), name=f"person-{game.index}"))

    def some_headers(self) -> dict[str, str]:
        """A token's header of this run (the host's, else a person's)."""
        if self._host is not None:
            return self._host
        return next(task_game.person.headers for task_game in self._games if task_game.person)

    async def stop(self) -> None:
        """Stop every person's play, even one whose cancellation was lost: Python 3.11's
        ``asyncio.wait_for`` swallows a cancel that arrives as its awaitable completes
        (CPython gh-86296, fixed in 3.12), and that person would then play on to the end of
        its game. So the loops also see :attr:`stopping`, and the cancel is repeated until
        every task has ended."""
        self.stopping = True
        pending = {task for task in self.tasks if not task.done()}
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=1.0)
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _play(self, game: Game) -> None:
        person = game.person
        assert person is not None
        listener = asyncio.create_task(self._listen(game))
        rng = random.Random(game.seed)
        tid = game.table_id
        try:
            while not person.finished and not self.stopping:
                try:
                    await asyncio.wait_for(person.turn.wait(), POLL_S)
                    by_poll = False
                except TimeoutError:
                    by_poll = True
                person.turn.clear()
                if self.think_s:
                    await asyncio.sleep(self.think_s)
                moves = await self.front.call("GET", f"/api/tables/{tid}/moves", person.headers)
                if not moves["moves"]:
                    table = await self.front.call("GET", f"/api/tables/{tid}", person.headers)
                    person.finished = person.finished or table["status"] == "finished"
                    continue
                self.polls_found_turn += by_poll
                action = pick(moves["moves"], rng)
                key = person_key(tid, moves["version"])
                body = {
                    "action": action,
                    "expected_version": moves["version"],
                    "idempotency_key": key,
                }
                sent = time.perf_counter()
                try:
                    answer = await self.front.call(
                        "POST", f"/api/tables/{tid}/moves", person.headers, body
                    )
                except HttpRefused as exc:
                    if exc.status != 409:  # stale_version: read the moves again
                        raise
                    self.stale += 1
                    continue
                self.posts.append(Post(sent, (time.perf_counter() - sent) * 1000))
                self.acknowledged.setdefault(tid, {})[f"{game.person_seat}:{key}"] = (
                    answer["version"],
                    action,
                )
                person.finished = person.finished or answer["finished"]
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the person stops; reported with its game
            self.errors.append(f"person of {tid} ({game.title}): {exc!r}"[:300])
        finally:
            listener.cancel()

    async def _listen(self, game: Game) -> None:
        """Follow the person's event stream (resuming after a break on another gateway):
        ``yourTurn`` of its table wakes the person, ``gameFinish`` ends it."""
        person = game.person
        assert person is not None
        gateway = game.index
        while not person.finished and not self.stopping:
            query = f"?after={person.last_event}" if person.last_event else ""
            try:
                async with self.front.session.get(
                    self.front.base(gateway) + "/api/stream/events" + query, headers=person.headers
                ) as stream:
                    if stream.status == 200:
                        async for line in stream.content:
                            if line.strip():
                                self._event(game, json.loads(line))
            except RETRIED:
                pass
            if person.finished:
                return
            self.stream_breaks += 1
            gateway += 1  # the load balancer sends the new connection elsewhere
            await asyncio.sleep(0.2)

    @staticmethod
    def _event(game: Game, event: dict[str, Any]) -> None:
        person = game.person
        assert person is not None
        if event.get("id"):
            person.last_event = event["id"]
        if event.get("table_id") != game.table_id:
            return
        if event["type"] == "yourTurn":
            person.turn.set()
        elif event["type"] == "gameFinish":
            person.finished = True
            person.turn.set()


async def person_through_a_kill(
    stack: Stack, redis_url: str, kind: str, title: str, moves_before: int = 3
) -> tuple[list[Violation], Players, int, int]:
    """A person (seat 0) against a ``random`` bot over HTTP on a 2-player ``title`` table
    of ``stack`` (whose game log is the Redis at ``redis_url``); ``kill -9`` of the first
    process of ``kind`` (then its restart, :func:`tests.integration.faults.kill9`) after the
    person's ``moves_before``-th move; the game played to its end and checked
    (:func:`tests.integration.invariants.check_games`). Returns the violations found, the
    players (their errors, retries, stream breaks), and the person's moves acknowledged
    before the kill and in all."""
    engine = create_engine(stack.database_url, StoreSettings())
    client = aioredis.from_url(redis_url, decode_responses=True)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=60)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            players = Players(
                Front(session, [stack.gateway_address]),
                AccountStore(session_factory(engine)),
                {title: "random"},
            )
            game = Game(0, title, 2, 0, 0)
            await players.make(game, f"{kind}-kill-{stack.prefix}")
            await players.start(game)
            while len(players.posts) < moves_before and not players.errors:
                await asyncio.sleep(0.05)
            before = len(players.posts)
            await asyncio.to_thread(faults.kill9, stack, kind)
            await asyncio.wait_for(asyncio.gather(*players.tasks), 180)
            assert game.person is not None
            md = bearer(game.person.headers["Authorization"].removeprefix("Bearer "))
            async with grpc.aio.insecure_channel(stack.lobby_address) as channel:
                lobby = lobby_pb2_grpc.LobbyStub(channel)
                await wait_finished([game.table_id], lobby, md, timeout_s=60)
                found = await check_games(
                    [game.table_id],
                    lobby,
                    md,
                    stack_game_log(client, stack),
                    ArchiveStore(engine),
                    players.acknowledged,
                )
            return found, players, before, len(players.posts)
    finally:
        await client.aclose()
        await engine.dispose()
