"""The clocks of one game, pure: a fold over the game log's entries, each
carrying the time it was appended (``at_ms``, milliseconds since the epoch from
the rules service's one injectable clock). No time source is read here.

Rules (``docs/architecture.md``, "Clocks"):

* A seat's clock runs while that seat is active; several active seats' clocks
  run together (auction bids). Who the seat is (a person, a hosted bot) does not
  matter: bots' thinking time is charged like anyone's.
* ``live``: each turn of a seat first spends its grace (``grace_s``), then its
  bank; a move adds ``increment_s`` to the bank (Fischer). A seat still active
  after its own move starts a new turn (fresh grace). A seat that stops being
  active without moving (another seat's move ended its turn) is charged the time
  it ran and gets no increment.
* ``correspondence``: a move adds ``per_move_s`` to what is left, capped at
  ``max_bank_s``; the bank starts at ``per_move_s``.
* Paused: no clock runs; a resume restarts the clocks of the seats that were
  running, with the grace they had left.
* A seat whose time ran out is *flagged*: its clock stops for good (a bot or
  nobody plays it now); a reclaimed seat gets the initial bank again.

Shapes: times are integer milliseconds; :meth:`ClockState.to_json` is what
log entries, views and lifecycle events carry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from services.match.controls import CORRESPONDENCE, LIVE, CorrespondenceControl, LiveControl


@dataclasses.dataclass(frozen=True, slots=True)
class SeatClock:
    """One seat's clock.

    Attributes:
        bank_ms: the bank, as of ``since_ms`` when running.
        grace_ms: grace left in the current turn (live controls).
        running: the seat is active (its clock runs unless the game is paused).
        since_ms: when the running clock was last charged (valid when running
            and not paused).
        flagged: the seat's time ran out; its clock never runs again.
    """

    bank_ms: int
    grace_ms: int = 0
    running: bool = False
    since_ms: int = 0
    flagged: bool = False

    def charged(self, at_ms: int) -> SeatClock:
        """The clock charged for the time it ran up to ``at_ms`` (grace first)."""
        if not self.running or self.flagged:
            return self
        elapsed = max(0, at_ms - self.since_ms)
        from_grace = min(elapsed, self.grace_ms)
        return dataclasses.replace(
            self,
            grace_ms=self.grace_ms - from_grace,
            bank_ms=self.bank_ms - (elapsed - from_grace),
            since_ms=at_ms,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class ClockState:
    """Every seat's clock of one timed game (None-free: an untimed game has no ClockState).

    Attributes:
        control: the table's :class:`LiveControl` or :class:`CorrespondenceControl`.
        seats: one :class:`SeatClock` per seat.
        paused_at_ms: when the game was paused (None: running).
    """

    control: LiveControl | CorrespondenceControl
    seats: tuple[SeatClock, ...]
    paused_at_ms: int | None = None

    # ----------------------------------------------------------------- making

    @classmethod
    def start(
        cls,
        control: LiveControl | CorrespondenceControl,
        num_players: int,
        active: Iterable[int],
        at_ms: int,
    ) -> ClockState:
        """The clocks at the start: every bank full, the active seats running from ``at_ms``."""
        active = set(active)
        first = _initial_bank_ms(control)
        grace = _grace_ms(control)
        return cls(
            control,
            tuple(
                SeatClock(first, grace, s in active, at_ms if s in active else 0)
                for s in range(num_players)
            ),
        )

    # ----------------------------------------------------------------- entries

    def after_entry(
        self, mover: int | None, moved: bool, active_after: Iterable[int], at_ms: int
    ) -> ClockState:
        """The clocks after a log entry appended at ``at_ms``.

        Args:
            mover: the entry's seat (None for an entry of no seat).
            moved: the entry is a move of ``mover`` (it earns the increment and
                starts a new turn if the seat stays active); False for a
                resignation or another non-move entry.
            active_after: the seats active after the entry.
        """
        active = set(active_after)
        seats = []
        for s, clock in enumerate(self.seats):
            if clock.flagged:
                seats.append(clock)
                continue
            if self.paused_at_ms is not None:  # nothing runs; remember who will on resume
                was = clock.running
                stays = s in active
                if moved and s == mover:
                    clock = self._credit(clock)
                if stays and (not was or (moved and s == mover)):
                    clock = dataclasses.replace(clock, grace_ms=_grace_ms(self.control))
                seats.append(dataclasses.replace(clock, running=stays))
                continue
            clock = clock.charged(at_ms)
            if moved and s == mover:
                # a move that beat its timeout to the log (the keeper had not fired yet)
                # may come after the deadline: the bank does not go below zero
                clock = dataclasses.replace(clock, bank_ms=max(0, clock.bank_ms))
                clock = self._credit(clock)
                clock = dataclasses.replace(clock, running=False, grace_ms=0)  # turn over
            if s in active and not clock.running:
                clock = dataclasses.replace(
                    clock, running=True, since_ms=at_ms, grace_ms=_grace_ms(self.control)
                )
            elif s not in active and clock.running:
                clock = dataclasses.replace(clock, running=False, grace_ms=0)
            seats.append(clock)
        return dataclasses.replace(self, seats=tuple(seats))

    def _credit(self, clock: SeatClock) -> SeatClock:
        c = self.control
        if c.kind == LIVE:
            return dataclasses.replace(clock, bank_ms=clock.bank_ms + c.increment_s * 1000)
        return dataclasses.replace(
            clock, bank_ms=min(clock.bank_ms + c.per_move_s * 1000, c.max_bank_s * 1000)
        )

    def flag(self, seat: int, at_ms: int) -> ClockState:
        """The seat's time ran out (a timeout entry at ``at_ms``): its clock stops for good."""
        seats = list(self.seats)
        seats[seat] = dataclasses.replace(
            seats[seat], bank_ms=0, grace_ms=0, running=False, flagged=True, since_ms=at_ms
        )
        return dataclasses.replace(self, seats=tuple(seats))

    def unflag(self, seat: int, active: bool, at_ms: int) -> ClockState:
        """A reclaimed seat: a full initial bank again, running if it is active."""
        seats = list(self.seats)
        seats[seat] = SeatClock(
            _initial_bank_ms(self.control),
            _grace_ms(self.control),
            active,
            at_ms,
        )
        return dataclasses.replace(self, seats=tuple(seats))

    def pause(self, at_ms: int) -> ClockState:
        """Every running clock charged up to ``at_ms`` and frozen."""
        if self.paused_at_ms is not None:
            return self
        return dataclasses.replace(
            self, seats=tuple(c.charged(at_ms) for c in self.seats), paused_at_ms=at_ms
        )

    def resume(self, at_ms: int) -> ClockState:
        """The frozen clocks run again from ``at_ms``."""
        if self.paused_at_ms is None:
            return self
        return dataclasses.replace(
            self,
            seats=tuple(dataclasses.replace(c, since_ms=at_ms) for c in self.seats),
            paused_at_ms=None,
        )

    # ----------------------------------------------------------------- reading

    def ticking(self, seat: int) -> bool:
        c = self.seats[seat]
        return c.running and not c.flagged and self.paused_at_ms is None

    def remaining_ms(self, seat: int, now_ms: int) -> int:
        """Time the seat has left at ``now_ms`` (grace plus bank; never below 0)."""
        c = self.seats[seat]
        if self.ticking(seat):
            c = c.charged(now_ms)
        return max(0, c.grace_ms + c.bank_ms)

    def deadline_ms(self, seat: int) -> int | None:
        """When the seat's time runs out, if its clock runs (else None)."""
        c = self.seats[seat]
        if not self.ticking(seat):
            return None
        return c.since_ms + c.grace_ms + c.bank_ms

    def deadlines(self) -> dict[int, int]:
        """Seat -> deadline (ms) of every running clock."""
        out = {}
        for s in range(len(self.seats)):
            d = self.deadline_ms(s)
            if d is not None:
                out[s] = d
        return out

    def expired(self, seat: int, now_ms: int) -> bool:
        d = self.deadline_ms(seat)
        return d is not None and now_ms >= d

    def to_json(self) -> dict[str, Any]:
        """``{"paused": bool, "seats": [{"bank_ms", "grace_ms", "running",
        "deadline_ms" (or null), "flagged"}]}``: the bank and grace as of the
        last entry (a client subtracts the time since its ``at_ms`` for a
        running clock, or reads ``deadline_ms``)."""
        return {
            "paused": self.paused_at_ms is not None,
            "seats": [
                {
                    "bank_ms": c.bank_ms,
                    "grace_ms": c.grace_ms,
                    "running": self.ticking(s),
                    "deadline_ms": self.deadline_ms(s),
                    "flagged": c.flagged,
                }
                for s, c in enumerate(self.seats)
            ],
        }


def _initial_bank_ms(control: LiveControl | CorrespondenceControl) -> int:
    if control.kind == CORRESPONDENCE:
        return control.per_move_s * 1000
    return control.initial_bank_s * 1000


def _grace_ms(control: LiveControl | CorrespondenceControl) -> int:
    return control.grace_s * 1000 if control.kind == LIVE else 0
