"""An outside bot on the public API (issue 10, item 4): a person makes a bot account that plays
itself (no hosted policy), mints its token, seats it at a Chicago Express table beside two hosted
bots; ``clients/python/examples/bot.py`` runs in its own process with that token, listens to the
account's event stream and plays the seat through the HTTP gateway until the game ends. The
dispatcher never plays that seat: every one of its moves is the outside program's."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from roundhouse_client import Client, PermissionDenied

from services.platform.hotstore import KeySpace

pytestmark = pytest.mark.integration

BOT = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples" / "bot.py"
PASSWORD = "outside-bot-owner-pw"


def test_the_example_bot_plays_a_whole_game_through_the_gateway(stack, rdb, tmp_path):
    url = f"http://{stack.gateway_address}"
    with Client(url) as anon:
        anon.create_account("otto", PASSWORD)
        scopes = ["play", "tables:write", "bots:write"]
        token = anon.create_token("otto", PASSWORD, scopes).token
    with Client(url, token=token) as otto:
        assert otto.create_bot("otto-bot").username == "otto-bot"
        bot_token = otto.create_bot_token("otto-bot").token
        table = otto.create_table("railbarons", num_players=3)
        otto.add_bot(table.table_id, 0, account="otto-bot")
        otto.add_bot(table.table_id, 1, policy="greedy")
        otto.add_bot(table.table_id, 2, policy="random")
        # the owner's token is not the bot's: it may not move for the bot's seat
        log = (tmp_path / "bot.log").open("w")
        bot = subprocess.Popen(
            [sys.executable, str(BOT), "--url", url, "--token", bot_token, "--seed", "3"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            table = otto.start(table.table_id)
            deadline = time.monotonic() + 300
            while (table := otto.get_table(table.table_id)).status != "finished":
                assert bot.poll() is None, (tmp_path / "bot.log").read_text()[-2000:]
                assert time.monotonic() < deadline, "the game did not finish"
                time.sleep(0.5)
            with pytest.raises(PermissionDenied):
                otto.move(table.table_id, {"type": "pass"}, expected_version=0)
        finally:
            bot.terminate()
            bot.wait(20)
            log.close()
    entries = rdb.xrange(KeySpace(stack.prefix).log(table.game_id))
    seats = [int(fields["seat"]) for _, fields in entries]
    assert seats.count(0) >= 5, "the outside bot's seat moved too little"
    assert [int(f["version"]) for _, f in entries] == list(range(1, len(entries) + 1))
    text = (tmp_path / "bot.log").read_text()
    assert "playing as otto-bot" in text and "game over: seat 0: rank " in text
    assert f"{table.table_id}: move " in text  # each move is logged with its label
