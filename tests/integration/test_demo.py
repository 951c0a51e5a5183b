"""The demo's path on the real services (services/cli/demo.py): an organiser
and its hosted bot accounts are signed up, a table of distinct bot accounts
plays to its end through the lobby, and the standings name those accounts."""

from __future__ import annotations

import io
import re

import httpx
import pytest
from rich.console import Console

from roundhouse.v1 import lobby_pb2
from services.cli.demo import DEMO_TABLES, bots_needed, play_table, seat_bots, sign_up_organiser

pytestmark = pytest.mark.integration


def test_the_demo_seats_distinct_bot_accounts_of_the_organiser():
    need = bots_needed(list(DEMO_TABLES))
    assert need == {"search-easy": 1, "greedy": 1, "random": 2}


def test_the_demo_plays_a_table_of_the_organisers_bots(accounts, anonymous_lobby, stack):
    demo = next(t for t in DEMO_TABLES if t.title == "railbarons")
    organiser = sign_up_organiser(accounts, bots_needed([demo]), "demo-org", "demo-")
    assert seat_bots(demo, organiser) == [
        "demo-search-easy-1",
        "demo-random-1",
        "demo-greedy-1",
        "demo-random-2",
    ]
    out = io.StringIO()
    result = play_table(
        anonymous_lobby, demo, Console(file=out, width=120), organiser, stack, quiet=True
    )
    assert sorted(s.name for s in result.standings) == sorted(seat_bots(demo, organiser))
    assert result.table.owner == "demo-org"
    assert result.table.status == lobby_pb2.TABLE_STATUS_FINISHED
    assert "final standings" in out.getvalue()
    # the printed address is the game's page on the gateway, a person can open it
    url = re.search(r"Watch it in a browser: (\S+)", out.getvalue()).group(1)
    assert url == f"http://{stack.gateway_address}/tables/{result.table.table_id}"
    page = httpx.get(url, timeout=30)
    assert page.status_code == 200 and "<svg" in page.text and "Game over" in page.text
