"""The ``roundhouse play`` screen against an in-process lobby and rules service (no bots):
an 1894 auction bid typed as a number and a price inside the move's range is played, the
price off the range's steps is refused on the screen, and the move and its label reach
the screen's last moves."""

from __future__ import annotations

from roundhouse.v1 import lobby_pb2
from services.cli.screen import PlayApp
from services.cli.session import Session


async def _until(pilot, cond, what: str) -> None:
    for _ in range(1000):
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"the screen never showed {what}")


def test_a_ranged_move_is_typed_as_its_number_and_a_value(lobby_env):
    async def body(env):
        people = [await env.person(n) for n in ("ada", "bob", "cy")]
        table = await env.table(people[0], 3, title="e1894")
        tid = table.table_id
        for seat, p in enumerate(people):
            join = lobby_pb2.JoinSeatRequest(table_id=tid, seat=seat)
            await env.lobby.JoinSeat(join, metadata=p.md)
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=people[0].md)
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
        seat = view.active_seats[0]
        me = people[seat]
        session = Session(me.name, me.md[0][1].split(" ", 1)[1], env.lobby_address, "")
        app = PlayApp(session, tid)
        async with app.run_test(size=(140, 44)) as pilot:
            await _until(pilot, lambda: bool(app.moves), "the moves")
            assert app.seat == seat
            number = next(i for i, m in enumerate(app.moves, 1) if m.ranged)
            move = app.moves[number - 1]
            assert move.label.startswith(f"Bid {move.min}-{move.max} F in steps of 5 on ")
            await pilot.press(*f"{number} {move.min + 1}", "enter")
            assert "value_off_step" in app.error and app.version == 0
            app.query_one("#command").value = ""
            price = move.min + move.step
            await pilot.press(*f"{number} {price}", "enter")
            assert app.status_text == f"played: {move.label} (price {price})"
            await _until(pilot, lambda: app.version == 1 and app.history, "the move applied")
            assert f"Bid {price} F on {move.action['company']}" in app.history[-1]
            assert not app.moves or app.moves_version == 1

    lobby_env(body, titles=("e1894",))
