"""The archive through the real processes: a bot game played through the lobby
is archived by the archiver process, listed by ListGames, and once Redis has
dropped it its view, watch and result still come (from the archive) through
the lobby and the rules service; ``roundhouse archive verify`` replays it."""

from __future__ import annotations

import subprocess
import sys
import time

import grpc
import pytest

from roundhouse.v1 import archive_pb2, archive_pb2_grpc, game_pb2, lobby_pb2
from services.platform.hotstore import KeySpace

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def archive(stack):
    with grpc.insecure_channel(stack.archive_address) as channel:
        yield archive_pb2_grpc.ArchiveStub(channel)


def test_a_finished_bot_game_is_archived_and_served_from_the_archive_after_redis(
    lobby, rules, rdb, stack, archive
):
    policies = ["greedy", "random", "random"]
    table = lobby.CreateTable(
        lobby_pb2.CreateTableRequest(title="railbarons", num_players=3, seed=777)
    )
    for seat, policy in enumerate(policies):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy=policy))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    watch = lobby_pb2.WatchTableRequest(table_id=table.table_id)
    updates = list(lobby.WatchTable(watch, timeout=300))
    assert updates[-1].finished

    deadline = time.monotonic() + 60
    while True:
        listed = archive.ListGames(archive_pb2.ListGamesRequest(title="railbarons", page_size=100))
        mine = [g for g in listed.games if g.info.game_id == table.game_id]
        if mine:
            break
        assert time.monotonic() < deadline, "the archiver never archived the game"
        time.sleep(0.2)
    (game,) = mine
    assert game.num_actions == len(updates)
    assert [(s.kind, s.policy, s.name) for s in game.seats] == [  # the system bot accounts
        ("bot", p, f"{p}-bot") for p in policies
    ]
    assert list(game.result.ranks) == list(updates[-1].result.ranks)
    log_key = KeySpace(stack.prefix).log(table.game_id)
    assert rdb.ttl(log_key) > 0  # Redis keeps it for the configured time only

    spectator = lobby_pb2.SeatRequest(table_id=table.table_id)
    view_before = lobby.GetSeatView(spectator)
    result_before = rules["railbarons"].GetResult(game_pb2.GetResultRequest(game_id=table.game_id))
    for suffix in ("meta", "log", "idem"):  # what the expiry does, now
        rdb.delete(KeySpace(stack.prefix).game(table.game_id, suffix))
    # a rules replica that never saw the game (the one running may have it cached)
    view_after = lobby.GetSeatView(spectator)
    assert view_after.view_json == view_before.view_json and view_after.finished
    # the archive keeps each move, its events, its label and its time (at_ms, compared
    # without it: games archived before the archive kept it have none)
    assert [_untimed(u) for u in lobby.WatchTable(watch, timeout=60)] == [
        _untimed(u) for u in updates
    ]
    result_after = rules["railbarons"].GetResult(game_pb2.GetResultRequest(game_id=table.game_id))
    assert result_after == result_before and result_after.seed == "777"

    verify = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "archive", "verify", "--title", "railbarons"],
        env=stack.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "mismatch" not in verify.stdout.split("archive verify")[0]


def test_the_documented_archive_client_pages_through_the_games(stack, archive, capsys):
    """docs/api.md's ListGames example runs as written (address swapped) and
    lists the archived Chicago Express games, each once."""
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "api.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    (code,) = [c for c in blocks if "archive_pb2" in c]
    code = code.replace("localhost:50065", stack.archive_address)
    code = code.replace("page_size=50", "page_size=1")  # one game a page: the paging runs
    exec(compile(code, str(doc), "exec"), {})
    printed = capsys.readouterr().out.strip().splitlines()
    every = archive.ListGames(archive_pb2.ListGamesRequest(title="railbarons", page_size=100))
    assert [line.split()[0] for line in printed] == [g.info.game_id for g in every.games]
    assert printed  # the first test of this module archived one


def _untimed(update):
    copy = type(update)()
    copy.CopyFrom(update)
    copy.ClearField("at_ms")
    return copy
