"""The train depot, phases, rusting and the events of first purchases.

Spec: the 1894 rules summary, "Trains and phases":

* the depot sells the trains in order (7x2, 5x3, 4x4, 5x5+1, 2x6, 3x7, then unlimited D);
  train ids are ``name-k`` (``"3-0"``), k counting the copies sold of that type;
* the first train of a type may start a phase (3 Green, 4 Blue, 5+1 Brown, 6 Red, 7 Gray,
  D Purple) and rusts older trains (2 on the 4, 3 on the 5+1, 4 on the 7, 5+1 on the D);
* events: first 5+1 - the late corporations LF and LB become available; first 6 - every
  private closes except Saint-Quentin (SQG); first D - "last OR set" is triggered (and SQG
  closes in Purple);
* train limits 4 / 4 / 3 / 3 / 3 / 3 / 2: a corporation over a lowered limit discards (the
  trains leave the game);
* trade-in discounts (one per buy step): 3 takes a 2 for 40, 4 a 3 for 60, 5+1 a 4 for 150,
  6 a 5+1 for 200, 7 a 6 for 300, D a 5+1/6/7 for 200/300/350. A traded-in train leaves the
  game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Event

from .data import PHASE_ON, PHASES, PRIVATE_INDEX, TRAIN_INDEX, TRAINS, train_name

if TYPE_CHECKING:
    from .state import E1894State

UNLIMITED = -1


def initial_depot() -> tuple[list[int], list[int]]:
    """(copies left per train type, next copy number per type)."""
    left = [t.count if t.count is not None else UNLIMITED for t in TRAINS]
    return left, [0] * len(TRAINS)


def depot_type(st: E1894State) -> int:
    """Index of the train type the depot sells now (-1 when none is left)."""
    for i, n in enumerate(st.depot_left):
        if n != 0:
            return i
    return -1


def depot_train_id(st: E1894State) -> str:
    """The id of the next train the depot sells (``"3-2"``), or ``""``."""
    ti = depot_type(st)
    if ti < 0:
        return ""
    return f"{TRAINS[ti].name}-{st.depot_next[ti]}"


def train_limit(st: E1894State) -> int:
    """Trains a corporation may hold in the current phase (4, 4, 3, 3, 3, 3, 2)."""
    return PHASES[st.phase].train_limit


def trade_in_discount(new_type: int, old_train_id: str, next_colour_only: bool = False) -> int:
    """Discount (francs) for trading ``old_train_id`` in for a depot train of ``new_type``,
    0 when that pair has no discount. ``next_colour_only`` (option
    ``trade_in_next_colour_only``, designer's rules §7.3.7) allows only the train type just
    before ``new_type`` (the D then takes a 7 only)."""
    old = train_name(old_train_id)
    if next_colour_only and (new_type == 0 or TRAINS[new_type - 1].name != old):
        return 0
    return TRAINS[new_type].discount.get(old, 0)


def owner_of_train(st: E1894State, train_id: str) -> int:
    """Index of the corporation owning ``train_id``, or -1."""
    for ci, trains in enumerate(st.trains):
        if train_id in trains:
            return ci
    return -1


def take_from_depot(st: E1894State, ci: int) -> tuple[str, list[Event]]:
    """Give the next depot train to corporation ``ci`` (payment is the caller's) and run the
    first-purchase effects. Returns (train id, events)."""
    ti = depot_type(st)
    info = TRAINS[ti]
    k = st.depot_next[ti]
    tid = f"{info.name}-{k}"
    st.depot_next[ti] = k + 1
    if st.depot_left[ti] != UNLIMITED:
        st.depot_left[ti] -= 1
    st.trains[ci].append(tid)
    events: list[Event] = []
    if k == 0:
        events.extend(first_of_type(st, ti))
    return tid, events


def first_of_type(st: E1894State, ti: int) -> list[Event]:
    """Phase change, rusting and events of the first train of type ``ti``."""
    from .privates import close_private

    info = TRAINS[ti]
    events: list[Event] = []
    new_phase = PHASE_ON.get(info.name, -1)
    if new_phase > st.phase:
        st.phase = new_phase
        events.append({"type": "phase", "phase": PHASES[new_phase].name})
    rusted: list[str] = []
    for ci, trains in enumerate(st.trains):
        keep = [t for t in trains if TRAINS[TRAIN_INDEX[train_name(t)]].rusts_on != info.name]
        if len(keep) != len(trains):
            rusted.extend(t for t in trains if t not in keep)
            st.trains[ci] = keep
    if rusted:
        events.append({"type": "rusted", "trains": rusted})
    for ev in info.events:
        if ev == "late_corporations_available":
            st.late_available = True
        elif ev == "close_companies":
            for pi in range(len(st.private_owner)):
                if pi != PRIVATE_INDEX["SQG"]:
                    close_private(st, pi)
        elif ev == "last_or_set_triggered":
            st.last_set_triggered = True
        events.append({"type": "event", "event": ev})
    if PHASES[st.phase].name == "Purple":
        close_private(st, PRIVATE_INDEX["SQG"])
    return events


def crowded_corps(st: E1894State) -> list[int]:
    """Corporations holding more trains than the current limit, in operating order."""
    from .market import operating_order

    limit = train_limit(st)
    return [ci for ci in operating_order(st) if len(st.trains[ci]) > limit]
