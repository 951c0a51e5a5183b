"""The web pages on the real processes (an 1894 stack with the gateway, a private Redis):

* ``bench_e1894_table_page_median``: the gateway's answer to ``GET /tables/{id}`` (the whole
  table page, board SVG included, as a spectator) of a running 1894 game late in the game
  (after :data:`LATE_VERSION` random legal moves); median of :data:`PAGE_SAMPLES`, ms; bar
  150 ms.
* ``bench_move_to_watching_page_p99``: from a move's ``SubmitMove`` call to its event on a
  watching page's live-update stream (``/tables/{id}/events``, Server-Sent Events), over the
  first :data:`LATENCY_MOVES` moves of a fresh table; p99, ms; bar 300 ms.
"""

from __future__ import annotations

import json
import random
import statistics
import threading
import time

import grpc
import httpx

from benchmarks.common import Measurement
from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.cli.launcher import Stack
from tests.integration.signin import People, lobby_stub

LATE_VERSION = 450
"""Moves played before the page is measured (recorded whole 1894 games run 495-646 actions)."""
PAGE_SAMPLES = 30
LATENCY_MOVES = 150
_results: dict[str, tuple[float, str]] = {}


def _random_move(lobby, tid: str, people: list, rng: random.Random) -> float | None:
    """One random legal move of the active seat; the time just before its SubmitMove (None:
    the game is over)."""
    view = lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid), timeout=30)
    if view.finished or not view.active_seats:
        return None
    seat = view.active_seats[0]
    md = people[seat].md
    legal = lobby.ListMoves(lobby_pb2.SeatRequest(table_id=tid, seat=seat), metadata=md)
    action = json.loads(rng.choice(list(legal.actions_json)))
    at = time.perf_counter()
    lobby.SubmitMove(
        lobby_pb2.SubmitMoveRequest(
            table_id=tid,
            seat=seat,
            action_json=json.dumps(action),
            expected_version=legal.version,
        ),
        metadata=md,
        timeout=30,
    )
    return at


def _measure() -> None:
    if _results:
        return
    env = {"ROUNDHOUSE_MOVES_PER_ACCOUNT": "100000/second"}
    import os

    os.environ.update(env)
    with Stack(["e1894"], private_redis=True, gateway=True, workers=1) as stack:
        from roundhouse.v1 import accounts_pb2_grpc

        with (
            grpc.insecure_channel(stack.accounts_address) as ac,
            grpc.insecure_channel(stack.lobby_address) as lc,
        ):
            people = People(accounts_pb2_grpc.AccountsStub(ac))
            seats = [people.organiser] + [people.sign_up() for _ in range(3)]
            lobby = lobby_stub(lc, people.organiser)
            plain = lobby_pb2_grpc.LobbyStub(lc)
            rng = random.Random(7)

            def new_table() -> str:
                table = lobby.CreateTable(
                    lobby_pb2.CreateTableRequest(title="e1894", num_players=4)
                )
                for i, person in enumerate(seats):
                    plain.JoinSeat(
                        lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=i),
                        metadata=person.md,
                    )
                lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
                return table.table_id

            for _attempt in range(10):  # a random game may end before LATE_VERSION: again
                tid = new_table()
                if all(_random_move(plain, tid, seats, rng) for _ in range(LATE_VERSION)):
                    break
            else:
                raise RuntimeError(f"no random 1894 game lasted {LATE_VERSION} moves")
            base = f"http://{stack.gateway_address}"
            with httpx.Client(base_url=base, timeout=30) as http:
                http.get(f"/tables/{tid}")  # warm the feed and the caches
                samples = []
                for _ in range(PAGE_SAMPLES):
                    t0 = time.perf_counter()
                    r = http.get(f"/tables/{tid}")
                    samples.append((time.perf_counter() - t0) * 1000)
                    assert r.status_code == 200 and "<svg" in r.text
                phase = json.loads(
                    plain.GetSeatView(lobby_pb2.SeatRequest(table_id=tid)).view_json
                ).get("phase", "?")
                _results["page"] = (
                    statistics.median(samples),
                    f"{PAGE_SAMPLES} GETs at version {LATE_VERSION} (phase {phase}), "
                    f"{len(r.text) // 1024} KiB",
                )
                tid = new_table()  # a fresh game: its first moves never end it
                view = plain.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
                arrivals: dict[int, float] = {}
                ready = threading.Event()

                def listen() -> None:
                    with httpx.Client(base_url=base, timeout=None) as client:
                        url = f"/tables/{tid}/events?after={view.version}"
                        with client.stream("GET", url) as stream:
                            ready.set()
                            for line in stream.iter_lines():
                                if line.startswith("data: ") and '"version"' in line:
                                    v = json.loads(line[6:])["version"]
                                    arrivals[v] = time.perf_counter()
                                    if len(arrivals) >= LATENCY_MOVES:
                                        return

                listener = threading.Thread(target=listen, daemon=True)
                listener.start()
                ready.wait(30)
                time.sleep(0.5)
                sent: dict[int, float] = {}
                for i in range(LATENCY_MOVES):
                    sent[view.version + i + 1] = _random_move(plain, tid, seats, rng)
                    time.sleep(0.02)
                listener.join(30)
                lat = sorted((arrivals[v] - sent[v]) * 1000 for v in sent if v in arrivals)
                p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("inf")
                _results["latency"] = (p99, f"{len(lat)}/{len(sent)} moves seen")


def bench_e1894_table_page_median() -> Measurement:
    _measure()
    value, detail = _results["page"]
    return Measurement(
        "1894 table page, late game (median)",
        value,
        "ms",
        150,
        higher_is_better=False,
        detail=detail,
    )


def bench_move_to_watching_page_p99() -> Measurement:
    _measure()
    value, detail = _results["latency"]
    return Measurement(
        "move to watching page (p99)", value, "ms", 300, higher_is_better=False, detail=detail
    )


BENCHMARKS = [bench_e1894_table_page_median, bench_move_to_watching_page_p99]
