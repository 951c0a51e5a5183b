"""The tournament director: registrations, the start, rounds that run by themselves,
results, the abort/stall rule and standings (``docs/tournaments.md``).

Rounds. Round ``r`` is paired once, inside one locked transaction that also checks the
tournament is at round ``r - 1`` with every table of it closed (:meth:`pair_next`); the
primary key ``(tournament, round)`` refuses a second insert. Its tables are then made in
the lobby (:meth:`run_round`), each step written down as it is done (the lobby table id,
then the game id), so a restarted process goes on from the last step. A table's result
(the lifecycle stream's ``game_finished``, the lobby's table, or the organiser's
``RecordResult``) closes it once (:meth:`close_table`); when the last table of the round
closes, the next round is paired (``auto_advance``) or the tournament ends after its last
round. :meth:`reconcile` (run every few seconds) repeats whatever a crash or a lost event
left undone.

Abort/stall rule. A table is **void** when its lobby table was aborted (``aborted``), the
lobby refused to make or start it (``start_failed``), it has not finished
``table_timeout_s`` after its start (``stalled``), or the organiser paired the next round
before it finished (``advanced``). A void table counts as played for pairing (its players
met; their seats were sat) but scores each of its seats ``bye_points`` as a bye does: no
game, no win, no normalised score, no rating change.

Dropouts. A player who withdraws after the start keeps his results (they count for his
opponents' tiebreaks); a table he sits at plays on; he is never paired again. A late entry
(Swiss, before round 2 is paired) starts at 0 points with no history.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import sqlalchemy.exc

from services.accounts.models import BOT, SYSTEM, Account
from services.match.controls import FORFEIT, ClockSettings
from services.platform.db import utcnow
from services.platform.logging import get_logger
from services.tournaments.config import ROUND_ROBIN, TournamentConfig, check_config
from services.tournaments.config import order_standings as _order
from services.tournaments.designs import round_robin
from services.tournaments.errors import TournamentError
from services.tournaments.pairing import pair_round
from services.tournaments.pairing_cost import Entrant, History, RoundPairing, Table
from services.tournaments.ratings import Rating
from services.tournaments.scoring import SeatResult, Standing, TableResult, standings
from services.tournaments.seeding import seed_first_round
from services.tournaments.service.events import EventPublisher, NullPublisher
from services.tournaments.service.models import (
    CREATED,
    FINISHED,
    PAUSED,
    PENDING,
    REGISTRATION,
    ROUND_FINISHED,
    RUNNING,
    TABLE_RUNNING,
)
from services.tournaments.service.store import (
    PlayerRecord,
    TableRecord,
    TournamentNotFound,
    TournamentRecord,
    TournamentStore,
)
from services.tournaments.service.tables import SimulatedTables, StartFailed, TableRunner

log = get_logger("tournaments")

RatingsLookup = Callable[[str, list[str]], Any]
"""``(title, account ids) -> awaitable {account_id: Rating}`` (the rating store)."""


class Refused(TournamentError):
    """A refusal that is a state problem (FAILED_PRECONDITION), not bad input."""


class NotAllowed(TournamentError):
    """The caller may not do this (PERMISSION_DENIED)."""


class NotFound(TournamentError):
    """No such tournament, account or table (NOT_FOUND)."""


# ---------------------------------------------------------------------- pure parts


def pairing_history(t: TournamentRecord, before_round: int) -> History:
    """Who met whom and who sat where in the rounds before ``before_round`` (void tables
    included: their players sat together)."""
    return History.from_rounds(
        RoundPairing(
            r.round,
            tuple(Table(x.number, tuple(x.seats)) for x in r.tables),
            tuple(r.byes),
        )
        for r in t.rounds
        if r.round < before_round
    )


def results_of(
    t: TournamentRecord, through_round: int | None = None
) -> tuple[list[TableResult], dict[int, list[str]]]:
    """The finished tables as the scoring core's results, and the byes per round (void
    tables' seats included: they score as byes)."""
    results: list[TableResult] = []
    byes: dict[int, list[str]] = {}
    for r in t.rounds:
        if through_round is not None and r.round > through_round:
            continue
        byes[r.round] = list(r.byes)
        for table in r.tables:
            if table.status == "finished" and table.result:
                scores = table.result.get("scores") or [None] * len(table.seats)
                results.append(
                    TableResult(
                        r.round,
                        table.number,
                        tuple(
                            SeatResult(p, int(rank), None if s is None else float(s))
                            for p, rank, s in zip(
                                table.seats, table.result["ranks"], scores, strict=True
                            )
                        ),
                    )
                )
            elif table.status == "void":
                byes[r.round].extend(table.seats)
    return results, byes


def tournament_standings(t: TournamentRecord, through_round: int | None = None) -> list[Standing]:
    """Standings (every registered player, withdrawn ones too) after ``through_round``
    (default: every result so far), in the organiser's tiebreak order."""
    results, byes = results_of(t, through_round)
    rows = standings(results, byes, t.config.scoring(), players=[p.account_id for p in t.players])
    return _order(rows, t.config.tiebreaks)


def pair(t: TournamentRecord, round_number: int, ratings: dict[str, Rating]) -> RoundPairing:
    """Round ``round_number`` of ``t`` (players: those still in who entered by then).
    Raises :class:`TournamentError` (``too_few_players``...)."""
    c = t.config
    active = [p.account_id for p in t.players if p.active and p.entered_round <= round_number]
    if c.format == ROUND_ROBIN:
        return _round_robin_round(t, round_number, set(active))
    if round_number == 1:
        return seed_first_round(active, ratings, c.seeding, c.pairing(), t.seed)  # type: ignore[arg-type]
    points = {s.player: s.points for s in tournament_standings(t, round_number - 1)}
    field = [Entrant(p, points.get(p, 0.0)) for p in active]
    return pair_round(round_number, field, pairing_history(t, round_number), c.pairing(), t.seed)


def _round_robin_round(t: TournamentRecord, round_number: int, active: set[str]) -> RoundPairing:
    """Round ``round_number`` of the round robin of the players who started (planned at
    once from them and the seed); a withdrawn player's seat is left out, and a table
    that falls below the smallest size gives its players byes."""
    c = t.config
    starters = sorted(p.account_id for p in t.players if p.entered_round == 1)
    plan = round_robin(starters, c.table_size, c.rounds, c.pairing(), t.seed)[round_number - 1]
    tables, byes = [], [b for b in plan.byes if b in active]
    for table in plan.tables:
        seats = tuple(p for p in table.seats if p in active)
        if len(seats) >= c.smallest:
            tables.append(Table(len(tables) + 1, seats))
        else:
            byes.extend(seats)
    if not tables:
        raise TournamentError("too_few_players", "no table of the round robin can still be formed")
    return RoundPairing(round_number, tuple(tables), tuple(sorted(byes)))


def normal_result(result: dict[str, Any], seats: int) -> dict[str, Any]:
    """``{"ranks", "scores", "end_reason"}`` checked against the table's seats.
    Raises :class:`TournamentError` ``bad_rank``."""
    ranks = [int(r) for r in result.get("ranks", [])]
    if len(ranks) != seats or not all(1 <= r <= seats for r in ranks):
        raise TournamentError(
            "bad_rank", f"a table of {seats} needs {seats} ranks of 1-{seats}", seats=seats
        )
    scores = result.get("scores") or []
    if scores and len(scores) != seats:
        raise TournamentError("bad_rank", f"a table of {seats} needs {seats} scores or none")
    out: dict[str, Any] = {
        "ranks": ranks,
        "scores": [float(s) for s in scores] or None,
        "end_reason": str(result.get("end_reason", "")),
    }
    for key in ("forfeited_seats", "timed_out_seats"):  # the rules service's, when any
        found = sorted({int(x) for x in result.get(key) or [] if 0 <= int(x) < seats})
        if found:
            out[key] = found
    return out


def forfeits_of(t: TournamentRecord, through_round: int | None = None) -> dict[str, list[int]]:
    """Account id -> ``[forfeits, timeouts]`` over the finished tables through
    ``through_round`` (default: all): the games a player lost by forfeit (resigned, or
    ranked last when his time ran out: the result's ``forfeited_seats``) and those in
    which his clock ran out (``timed_out_seats``, whatever the timeout policy)."""
    out: dict[str, list[int]] = {}
    for r in t.rounds:
        if through_round is not None and r.round > through_round:
            continue
        for table in r.tables:
            if table.status != "finished" or not table.result:
                continue
            for i, key in enumerate(("forfeited_seats", "timed_out_seats")):
                for seat in table.result.get(key) or []:
                    out.setdefault(table.seats[seat], [0, 0])[i] += 1
    return out


def table_clock(c: TournamentConfig) -> ClockSettings | None:
    """The clock settings of the tournament's tables (None: no clock and the default
    forfeit rule, as for a table created without clock fields)."""
    if not c.time_control and c.timeout_policy == FORFEIT and not c.takeover_policy:
        return None
    return c.clock()


# ---------------------------------------------------------------------- the director


@dataclasses.dataclass
class Account_:
    """The few facts of an account the director needs."""

    account_id: str
    username: str
    kind: str
    owner_id: str | None = None

    @classmethod
    def of(cls, a: Account) -> Account_:
        return cls(a.id, a.username, a.kind, a.owner_id)

    @property
    def is_bot(self) -> bool:
        return self.kind in (BOT, SYSTEM)


class Director:
    """Runs tournaments over a :class:`TournamentStore` and a :class:`TableRunner`.

    Args:
        store: the tournaments in the database.
        tables: where the games are played (the lobby, or simulated).
        ratings: looks up ratings for round 1's seeding (None: everyone at the prior).
        events: where tournament events go.
        clock: the current UTC time (tests pass their own).
        concurrency: lobby tables made at once.
        claim_lease_s: a table another process claimed this long ago and did not start
            (it died) may be made by this one.
    """

    def __init__(
        self,
        store: TournamentStore,
        tables: TableRunner | None = None,
        ratings: RatingsLookup | None = None,
        events: EventPublisher | None = None,
        clock: Callable[[], datetime] = utcnow,
        concurrency: int = 8,
        claim_lease_s: float = 60.0,
    ) -> None:
        self.store = store
        self.tables = tables or SimulatedTables()
        self.ratings = ratings
        self.events = events or NullPublisher()
        self.clock = clock
        self.limit = asyncio.Semaphore(concurrency)
        self.claim_lease_s = claim_lease_s
        self.token = uuid.uuid4().hex  # this process, in table claims

    # ------------------------------------------------------------- organiser

    async def create(
        self, config: TournamentConfig, organiser_id: str, seed: int | None = None
    ) -> TournamentRecord:
        check_config(config)
        record = TournamentRecord(
            tournament_id=uuid.uuid4().hex[:12],
            config=config,
            organiser_id=organiser_id,
            status=REGISTRATION,
            seed=seed if seed is not None else secrets.randbits(63),
            created_at=self.clock(),
        )
        await self.store.create(record)
        log.info("tournament created", tournament_id=record.tournament_id, title=config.title)
        return await self.store.get(record.tournament_id)

    async def register(self, tournament_id: str, who: Account_) -> PlayerRecord:
        """Enter ``who``; his entry. Refused: ``bots_not_allowed``, ``already_registered``,
        ``registration_closed`` (outside the window), ``late_entry_closed`` (after the
        start: a late entry is taken in a Swiss until round 2 is paired),
        ``tournament_finished``."""
        async with self.store.locked(tournament_id, full=False) as (s, t):
            c = t.config
            if who.is_bot and not c.bots_allowed:
                raise Refused("bots_not_allowed", "this tournament does not take bots")
            if await self.store._player(s, tournament_id, who.account_id) is not None:
                raise Refused("already_registered", f"{who.username} is registered already")
            now_ms = int(self.clock().timestamp() * 1000)
            entered = 1
            if t.status == FINISHED:
                raise Refused("tournament_finished", "the tournament is over")
            if t.status != REGISTRATION:
                if c.format == ROUND_ROBIN or t.current_round >= 2:
                    raise Refused(
                        "late_entry_closed",
                        "late entries are taken in a Swiss until round 2 is paired",
                    )
                entered = t.current_round + 1
            elif (c.registration_opens_ms and now_ms < c.registration_opens_ms) or (
                c.registration_closes_ms and now_ms >= c.registration_closes_ms
            ):
                raise Refused(
                    "registration_closed",
                    "registration is not open now",
                    opens_ms=c.registration_opens_ms,
                    closes_ms=c.registration_closes_ms,
                )
            entry = PlayerRecord(who.account_id, who.username, who.is_bot, entered)
            await self.store.add_player(s, tournament_id, entry)
        return entry

    async def withdraw(self, tournament_id: str, who: Account_) -> PlayerRecord:
        """Take ``who`` out: before the start his entry is removed; after it he is a
        dropout (``withdrew_after_round`` = the current round). His entry as it is now.
        Refused: ``not_registered``, ``tournament_finished``."""
        async with self.store.locked(tournament_id, full=False) as (s, t):
            p = await self.store._player(s, tournament_id, who.account_id)
            if p is None or not p.active:
                raise Refused("not_registered", f"{who.username} is not in this tournament")
            if t.status == FINISHED:
                raise Refused("tournament_finished", "the tournament is over")
            if t.status == REGISTRATION:
                await self.store.remove_player(s, tournament_id, who.account_id)
            else:
                await self.store.withdraw_player(s, tournament_id, who.account_id, t.current_round)
            p.withdrew_after_round = t.current_round
        log.info("player withdrew", tournament_id=tournament_id, account=who.account_id)
        return p

    async def start(self, tournament_id: str) -> TournamentRecord:
        """Registration -> running with round 1 paired and its tables started; or a
        paused tournament resumed. Refused: ``too_few_players``, ``already_started``,
        ``tournament_finished``, the pairing's errors (``no_design``...)."""
        paired = None
        async with self.store.locked(tournament_id) as (s, t):
            if t.status == FINISHED:
                raise Refused("tournament_finished", "the tournament is over")
            if t.status == RUNNING:
                raise Refused("already_started", "the tournament is running")
            if t.status == PAUSED:
                await self.store.set_status(s, tournament_id, RUNNING)
            else:
                active = [p for p in t.players if p.active]
                if len(active) < t.config.smallest:
                    raise Refused(
                        "too_few_players",
                        f"{len(active)} players cannot fill one table of {t.config.smallest}",
                        players=len(active),
                        min_table=t.config.smallest,
                    )
                ratings = await self._ratings(t)
                paired = pair(t, 1, ratings)
                await self.store.set_status(s, tournament_id, RUNNING)
                await self.store.insert_round(s, tournament_id, paired)
        if paired is not None:
            await self._round_started(tournament_id, paired)
            await self.run_round(tournament_id, 1)
        else:  # resumed: the clocks run again; a round that finished while paused is followed
            t = await self.store.get(tournament_id)
            await self._pause_tables(t, False)
            await self.pair_next(tournament_id, t.current_round)
        return await self.store.get(tournament_id)

    async def pause(self, tournament_id: str) -> TournamentRecord:
        """Running -> paused: no round is paired, and the clocks of the current round's
        running tables stop (the lobby's ``PauseTable``; untimed tables play on).
        Refused: ``not_running``."""
        async with self.store.locked(tournament_id, full=False) as (s, t):
            if t.status != RUNNING:
                raise Refused("not_running", f"the tournament is {t.status}, not running")
            await self.store.set_status(s, tournament_id, PAUSED)
        t = await self.store.get(tournament_id)
        await self._pause_tables(t, True)
        return t

    async def _pause_tables(self, t: TournamentRecord, paused: bool) -> None:
        """Pause or resume the clocks of the current round's running tables (timed
        tournaments only). A lobby that cannot be reached is logged: the status stands,
        and the organiser may pause again after a resume."""
        if not t.config.time_control:
            return
        rnd = t.round(t.current_round)
        for table in rnd.tables if rnd else []:
            if table.status != TABLE_RUNNING or not table.lobby_table_id:
                continue
            try:
                await self.tables.pause(table.lobby_table_id, paused)
            except StartFailed as exc:
                log.warning(
                    "table clock not paused" if paused else "table clock not resumed",
                    tournament_id=t.tournament_id,
                    table=table.number,
                    error=str(exc),
                )

    async def end(self, tournament_id: str) -> TournamentRecord:
        async with self.store.locked(tournament_id, full=False) as (s, t):
            if t.status == FINISHED:
                raise Refused("tournament_finished", "the tournament is over")
            await self.store.set_status(s, tournament_id, FINISHED)
        log.info("tournament ended by its organiser", tournament_id=tournament_id)
        return await self.store.get(tournament_id)

    async def advance(self, tournament_id: str) -> TournamentRecord:
        """The organiser's command: void the current round's open tables (``advanced``)
        and pair the next round (or end after the last). Refused: ``not_running``."""
        t = await self.store.get(tournament_id)
        if t.status != RUNNING:
            raise Refused("not_running", f"the tournament is {t.status}, not running")
        current = t.round(t.current_round)
        for table in current.tables if current else []:
            if not table.done:
                await self.close_table(tournament_id, table, None, "advanced", follow=False)
        await self.pair_next(tournament_id, t.current_round, forced=True)
        return await self.store.get(tournament_id)

    async def record_result(
        self,
        tournament_id: str,
        round_number: int,
        number: int,
        result: dict[str, Any],
        config: TournamentConfig | None = None,
    ) -> TableRecord:
        """The organiser's result for a table. Refused: ``unknown_table`` (not in the
        tournament), ``table_closed`` (it has a result or is void), ``bad_rank``."""
        table = await self.store.get_table(tournament_id, round_number, number)
        if table is None:
            raise NotFound(
                "unknown_table",
                f"the tournament has no table {number} in round {round_number}",
                round=round_number,
                table=number,
            )
        if table.done:
            raise Refused("table_closed", "the table has its result already")
        config = config or (await self.store.get(tournament_id, full=False)).config
        clean = normal_result(result, len(table.seats))
        # the scoring core refuses what it cannot score (negative_score, missing_score)
        from services.tournaments.scoring import seat_points

        seat_points(
            TableResult(
                round_number,
                number,
                tuple(
                    SeatResult(p, r, None if clean["scores"] is None else clean["scores"][i])
                    for i, (p, r) in enumerate(zip(table.seats, clean["ranks"], strict=True))
                ),
            ),
            config.scoring(),
        )
        if not await self.close_table(tournament_id, table, clean):
            raise Refused("table_closed", "the table has its result already")
        return dataclasses.replace(table, status="finished", result=clean)

    # ------------------------------------------------------------- rounds

    async def _ratings(self, t: TournamentRecord) -> dict[str, Rating]:
        if self.ratings is None:
            return {}
        return await self.ratings(t.config.title, [p.account_id for p in t.players])

    async def pair_next(self, tournament_id: str, after_round: int, forced: bool = False) -> int:
        """Pair round ``after_round + 1`` if the tournament is running at
        ``after_round`` with every table closed (the round is marked finished; after the
        last round the tournament finishes). Returns the round paired, 0 if none.
        Idempotent: a second call (or a racing process) finds the round paired."""
        try:
            closed, everyone, paired = await self._close_round_and_pair(
                tournament_id, after_round, forced
            )
        except sqlalchemy.exc.IntegrityError:  # paired by another process meanwhile
            return 0
        if closed:
            await self._publish(
                everyone,
                {"type": "standings_changed", "tournament_id": tournament_id, "round": after_round},
            )
        if paired is None:
            return 0
        await self._round_started(tournament_id, paired)
        await self.run_round(tournament_id, paired.round)
        return paired.round

    async def _close_round_and_pair(
        self, tournament_id: str, after_round: int, forced: bool
    ) -> tuple[bool, list[str], RoundPairing | None]:
        """(whether this call marked the round finished, every player, the round paired)."""
        async with self.store.locked(tournament_id) as (s, t):
            everyone = [p.account_id for p in t.players]
            if t.current_round != after_round or t.status not in (RUNNING, PAUSED):
                return False, everyone, None
            current = t.round(after_round)
            if current is None or any(not x.done for x in current.tables):
                return False, everyone, None
            closed = current.status != ROUND_FINISHED
            if closed:
                await self.store.finish_round(s, tournament_id, after_round)
            if after_round >= t.config.rounds:
                await self.store.set_status(s, tournament_id, FINISHED)
                log.info("tournament finished", tournament_id=tournament_id)
                return closed, everyone, None
            if t.status != RUNNING or not (t.config.auto_advance or forced):
                return closed, everyone, None
            try:
                paired = pair(t, after_round + 1, {})
            except TournamentError as exc:  # dropouts left too few players
                log.warning(
                    "next round cannot be paired; the tournament ends",
                    tournament_id=tournament_id,
                    reason=exc.reason,
                )
                await self.store.set_status(s, tournament_id, FINISHED)
                return closed, everyone, None
            await self.store.insert_round(s, tournament_id, paired)
            return closed, everyone, paired

    async def run_round(self, tournament_id: str, round_number: int) -> None:
        """Make and start every table of the round that is not started yet."""
        t = await self.store.get(tournament_id)
        rnd = t.round(round_number)
        if rnd is None:
            return
        todo = [x for x in rnd.tables if x.status in (PENDING, CREATED)]
        if isinstance(self.tables, SimulatedTables):  # no lobby: one write for the round
            await self.store.start_simulated(tournament_id, round_number, self.clock())
            return
        await asyncio.gather(*(self._run_table(t, x) for x in todo))

    async def _run_table(self, t: TournamentRecord, table: TableRecord) -> None:
        c, tid = t.config, t.tournament_id
        async with self.limit:
            claimed = await self.store.claim_table(
                tid, table.round, table.number, self.token, self.clock(), self.claim_lease_s
            )
            if not claimed:  # another process is making it
                return
            try:
                lobby_id = table.lobby_table_id
                if not lobby_id:
                    lobby_id = await self.tables.create(
                        c.title, c.options_json, len(table.seats), t.organiser, tid, table_clock(c)
                    )
                    await self.store.update_table(
                        tid,
                        table.round,
                        table.number,
                        [PENDING],
                        lobby_table_id=lobby_id,
                        status=CREATED,
                    )
                game_id = await self.tables.start(lobby_id, table.seats)
                await self.store.update_table(
                    tid,
                    table.round,
                    table.number,
                    [CREATED],
                    game_id=game_id,
                    status=TABLE_RUNNING,
                    started_at=self.clock(),
                )
            except StartFailed as exc:
                if exc.permanent:
                    log.warning(
                        "table void: the lobby refused it", tournament_id=tid, error=str(exc)
                    )
                    table.lobby_table_id = table.lobby_table_id or ""
                    await self.close_table(tid, table, None, "start_failed")
                else:  # the lobby is down: reconcile tries again
                    log.warning("table not started yet", tournament_id=tid, error=str(exc))
                    await self.store.release_table(tid, table.round, table.number, self.token)

    async def close_table(
        self,
        tournament_id: str,
        table: TableRecord,
        result: dict[str, Any] | None,
        void_reason: str = "",
        follow: bool = True,
    ) -> bool:
        """Close ``table`` with ``result`` (or void it with ``void_reason``) unless it is
        closed already; publish; pair the next round when it was the round's last open
        table (``follow``). Whether this call closed it."""
        closed, open_left = await self.store.close_table(
            tournament_id, table.round, table.number, result, void_reason
        )
        if not closed:
            return False
        await self._publish(
            table.seats,
            {
                "type": "table_finished",
                "tournament_id": tournament_id,
                "round": table.round,
                "table": table.number,
                "table_id": table.lobby_table_id,
                "ranks": json.dumps(result["ranks"] if result else []),
                "void_reason": void_reason,
            },
        )
        if open_left == 0 and follow:
            await self.pair_next(tournament_id, table.round)
        if result is not None and table.lobby_table_id:
            await self._request_review(tournament_id, table)
        return True

    async def _request_review(self, tournament_id: str, table: TableRecord) -> None:
        """A game review of the table just closed with a result, if the tournament's
        ``review_games`` says so: asked once, by the call that closed the table (and the
        lobby keeps one review per table, so a repeat would start nothing). Best effort: a
        lobby that refuses or cannot be reached is logged and the close stands."""
        try:
            config = (await self.store.get(tournament_id, full=False)).config
            if not config.review_games:
                return
            state = await self.tables.request_review(table.lobby_table_id)
            log.info(
                "review requested",
                tournament_id=tournament_id,
                table_id=table.lobby_table_id,
                state=state,
            )
        except Exception:  # noqa: BLE001 - the table's close and the next round stand
            log.exception("review not requested", tournament_id=tournament_id, table=table.number)

    async def on_game_finished(
        self, game_id: str, result: dict[str, Any] | None, lobby_table_id: str = ""
    ) -> bool:
        """A finished game's result, if it is a tournament table's (found by game id,
        else by the lobby table id). Whether it closed a table."""
        found = await self.store.table_by_game(game_id)
        if found is None and lobby_table_id:
            found = await self.store.table_by_lobby_id(lobby_table_id)
        if found is None or result is None:
            return False
        tid, table = found
        try:
            clean = normal_result(result, len(table.seats))
        except TournamentError:
            log.error("a tournament game's result does not fit its table", game_id=game_id)
            return await self.close_table(tid, table, None, "bad_result")
        return await self.close_table(tid, table, clean)

    async def reconcile(self, tournament_id: str, poll: bool = True) -> None:
        """Repeat what a crash or a lost event left undone: start tables not started,
        read finished or aborted lobby tables (``poll``), void stalled tables, pair the
        next round of a round whose tables are all closed."""
        try:
            t = await self.store.get(tournament_id)
        except TournamentNotFound:
            return
        rnd = t.round(t.current_round)
        if rnd is None or t.status == FINISHED:
            return
        if any(x.status in (PENDING, CREATED) for x in rnd.tables):
            await self.run_round(tournament_id, rnd.round)
        now = self.clock()
        for table in rnd.tables:
            if table.status != TABLE_RUNNING:
                continue
            state = await self.tables.state(table.lobby_table_id) if poll else None
            if state is not None and state.status == "finished" and state.result:
                await self.close_table(
                    tournament_id, table, normal_result(state.result, len(table.seats))
                )
            elif state is not None and state.status == "aborted":
                await self.close_table(tournament_id, table, None, "aborted")
            elif (
                table.started_at is not None
                and (now - table.started_at).total_seconds() > t.config.table_timeout_s
            ):
                log.warning("table void: stalled", tournament_id=tournament_id, table=table.number)
                await self.close_table(tournament_id, table, None, "stalled")
        await self.pair_next(tournament_id, rnd.round)

    async def reconcile_all(self, poll: bool = True) -> None:
        for tid in await self.store.active_ids():
            try:
                await self.reconcile(tid, poll)
            except Exception:  # noqa: BLE001 - one tournament's trouble must not stop the rest
                log.exception("reconcile failed", tournament_id=tid)

    # ------------------------------------------------------------- events

    async def _round_started(self, tournament_id: str, paired: RoundPairing) -> None:
        for table in paired.tables:
            for seat, p in enumerate(table.seats):
                await self._publish(
                    [p],
                    {
                        "type": "round_started",
                        "tournament_id": tournament_id,
                        "round": paired.round,
                        "table": table.number,
                        "seat": seat,
                    },
                )
        if paired.byes:
            await self._publish(
                paired.byes,
                {
                    "type": "round_started",
                    "tournament_id": tournament_id,
                    "round": paired.round,
                    "bye": 1,
                },
            )

    async def _publish(self, accounts, event: dict) -> None:
        try:
            await self.events.publish(list(accounts), {k: str(v) for k, v in event.items()})
        except Exception:  # noqa: BLE001 - events are best effort; the change stands
            log.exception("tournament event not published", event=event.get("type"))
