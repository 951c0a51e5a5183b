"""``roundhouse demo --keep-running``: after its games the services stay up, so a newcomer can
sign in with the organiser's printed password; SIGTERM then stops every process it started."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from roundhouse.v1 import accounts_pb2, accounts_pb2_grpc

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_kept_demo_lets_the_organiser_sign_in_then_stops_on_sigterm(redis_url, tmp_path):
    env = {**os.environ, "ROUNDHOUSE_REDIS_URL": redis_url, "COLUMNS": "80"}
    env["ROUNDHOUSE_DATA_DIR"] = str(tmp_path)
    out_path = tmp_path / "demo.out"
    with out_path.open("w") as out:
        demo = subprocess.Popen(
            # transsib: one short table and no tournament (the demo's tournament plays
            # Chicago Express; test_tournament.py runs it): this test is about --keep-running
            [str(Path(sys.executable).parent / "roundhouse"), "demo", "--titles", "transsib"]
            + ["--quiet", "--keep-running"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # as a shell script's background job (`demo &`) starts it: SIGINT ignored
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
    try:
        deadline = time.monotonic() + 240
        while "The services stay up" not in out_path.read_text():
            assert demo.poll() is None, out_path.read_text()
            assert time.monotonic() < deadline, out_path.read_text()
            time.sleep(0.5)
        text = out_path.read_text()
        # the sign-in command is printed on one line (pasteable), whatever the width
        line = next(x for x in text.splitlines() if "grpcurl -plaintext" in x)
        request = json.loads(re.search(r"-d '(\{.*?\})'", line).group(1))
        address = re.search(r"\}' (\S+) roundhouse\.v1\.Accounts/CreateToken", line).group(1)
        with grpc.insecure_channel(address) as channel:
            accounts = accounts_pb2_grpc.AccountsStub(channel)
            token = accounts.CreateToken(accounts_pb2.CreateTokenRequest(**request)).token
            me = accounts.WhoAmI(
                accounts_pb2.WhoAmIRequest(), metadata=[("authorization", f"Bearer {token}")]
            )
        assert me.account.username == request["username"]
        demo.send_signal(signal.SIGINT)  # Ctrl-C, even though it runs in the background
        assert demo.wait(60) == 0, out_path.read_text()
        assert "every process it started has stopped" in out_path.read_text()
        with pytest.raises(ProcessLookupError):
            os.killpg(demo.pid, 0)  # nothing of its process group is left
    finally:
        if demo.poll() is None:  # let it stop what it started, then make sure
            demo.send_signal(signal.SIGTERM)
            try:
                demo.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(demo.pid, signal.SIGKILL)
