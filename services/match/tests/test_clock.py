"""The pure clock and the time controls (no Redis, no time source)."""

from __future__ import annotations

import pytest

from services.match.clock import ClockState
from services.match.controls import (
    CorrespondenceControl,
    InvalidClock,
    LiveControl,
    parse_clock_json,
    parse_clock_settings,
)

T0 = 1_000_000


def live(base=60, inc=5, grace=0):
    return LiveControl(base_s=base, increment_s=inc, grace_s=grace)


def test_a_live_clock_runs_only_while_its_seat_is_active_and_earns_the_increment():
    c = ClockState.start(live(), 3, [0], T0)
    assert c.deadline_ms(0) == T0 + 60_000 and c.deadline_ms(1) is None
    c = c.after_entry(0, True, [1], T0 + 10_000)  # seat 0 thought 10 s, moved
    assert c.remaining_ms(0, T0 + 50_000) == 55_000  # 60 - 10 + 5, not running
    assert c.deadline_ms(1) == T0 + 10_000 + 60_000
    assert c.remaining_ms(1, T0 + 30_000) == 40_000


def test_grace_is_spent_before_the_bank_and_renewed_each_turn():
    c = ClockState.start(live(base=30, inc=0, grace=5), 2, [0], T0)
    assert c.deadline_ms(0) == T0 + 35_000
    c = c.after_entry(0, True, [0], T0 + 4_000)  # within the grace: bank untouched
    assert c.seats[0].bank_ms == 30_000 and c.deadline_ms(0) == T0 + 4_000 + 35_000
    c = c.after_entry(0, True, [1], T0 + 4_000 + 8_000)  # 5 s grace, then 3 s of bank
    assert c.seats[0].bank_ms == 27_000


def test_several_active_seats_run_together_and_one_move_leaves_the_others_running():
    c = ClockState.start(live(base=100, inc=0), 4, [0, 1, 2], T0)
    assert set(c.deadlines()) == {0, 1, 2}
    c = c.after_entry(1, True, [0, 2], T0 + 20_000)  # seat 1 bids; 0 and 2 still to answer
    assert c.deadlines() == {0: T0 + 100_000, 2: T0 + 100_000}
    assert c.remaining_ms(0, T0 + 30_000) == 70_000 and c.remaining_ms(2, T0 + 30_000) == 70_000
    assert c.remaining_ms(1, T0 + 30_000) == 80_000
    c = c.after_entry(0, True, [3], T0 + 50_000)  # seat 0's bid ends the auction for seat 2 too
    assert c.seats[2].bank_ms == 50_000 and not c.seats[2].running  # charged, no increment
    assert c.deadlines() == {3: T0 + 150_000}


def test_correspondence_banks_unused_time_up_to_the_maximum():
    control = CorrespondenceControl(per_move_s=86_400, max_bank_s=172_800)
    c = ClockState.start(control, 2, [0], T0)
    c = c.after_entry(0, True, [1], T0 + 3_600_000)  # one hour used of the day
    assert c.seats[0].bank_ms == (86_400 - 3_600 + 86_400) * 1000
    c = c.after_entry(1, True, [0], T0 + 3_600_000 + 1_000)
    c = c.after_entry(0, True, [1], T0 + 3_600_000 + 2_000)  # quick: capped at the maximum
    assert c.seats[0].bank_ms == 172_800_000


def test_a_pause_freezes_every_clock_and_a_resume_restarts_them():
    c = ClockState.start(live(base=60, inc=0, grace=10), 2, [0], T0)
    c = c.pause(T0 + 5_000)
    assert c.deadlines() == {} and c.remaining_ms(0, T0 + 999_000) == 65_000
    c = c.resume(T0 + 1_000_000)
    assert c.deadline_ms(0) == T0 + 1_000_000 + 65_000  # 5 s grace left, 60 s bank


def test_a_move_after_the_deadline_leaves_no_negative_bank():
    c = ClockState.start(live(base=10, inc=2), 2, [0], T0)
    c = c.after_entry(0, True, [1], T0 + 12_000)
    assert c.seats[0].bank_ms == 2_000


def test_a_flagged_seat_never_runs_again():
    c = ClockState.start(live(), 2, [0], T0).flag(0, T0 + 60_000)
    c = c.after_entry(1, True, [0, 1], T0 + 61_000)
    assert c.deadline_ms(0) is None and c.seats[0].flagged


@pytest.mark.parametrize(
    "settings, code, where",
    [
        ({"time_control": {"kind": "live", "base_s": -5}}, "bad_time_control", "base_s"),
        ({"time_control": {"kind": "live", "base_s": 0}}, "bad_time_control", "zero base_s"),
        ({"time_control": {"kind": "live", "base_s": 0, "increment_s": 0}}, "bad_time_control", ""),
        (
            {"time_control": {"kind": "live", "base_s": 60, "increment_s": -1}},
            "bad_time_control",
            "",
        ),
        ({"time_control": {"kind": "live", "base_s": "60"}}, "bad_time_control", "base_s"),
        ({"time_control": {"kind": "blitz", "base_s": 60}}, "bad_time_control", "blitz"),
        ({"time_control": {"kind": "live", "base_s": 60, "per_move_s": 5}}, "bad_time_control", ""),
        (
            {"time_control": {"kind": "correspondence", "per_move_s": 86400, "max_bank_s": 3600}},
            "bad_time_control",
            "max_bank_s",
        ),
        (
            {"time_control": {"kind": "correspondence", "per_move_s": 0, "max_bank_s": 9}},
            "bad_time_control",
            "",
        ),
        ({"timeout_policy": "vanish"}, "bad_timeout_policy", "timeout_policy"),
        ({"timeout_policy": "reclaim", "casual": False}, "reclaim_not_casual", "casual"),
        ({"reclaim_moves": 0}, "bad_clock_settings", "reclaim_moves"),
    ],
)
def test_nonsense_time_controls_are_refused_with_a_reason(settings, code, where):
    with pytest.raises(InvalidClock) as err:
        parse_clock_settings(settings)
    assert err.value.code == code
    assert where in err.value.reason


def test_sound_controls_parse_and_round_trip():
    s = parse_clock_settings(
        {
            "time_control": {"kind": "live", "base_s": 0, "increment_s": 10},
            "timeout_policy": "reclaim",
        }
    )
    assert s.time_control.initial_bank_s == 10 and s.timed
    assert parse_clock_settings(s.to_json()) == s
    assert not parse_clock_json("").timed
    with pytest.raises(InvalidClock):
        parse_clock_json("[1, 2]")
