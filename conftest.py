"""Fixtures shared by every test directory.

``redis_url``: a Redis for tests. A private ``redis-server`` on a free port is
started for the session when the binary is installed (hermetic, nothing
persisted); otherwise ``ROUNDHOUSE_REDIS_URL`` (or the default local Redis) is
used if it answers. With neither, tests that need Redis fail with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid

import pytest
import redis


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except (redis.ConnectionError, redis.TimeoutError, ValueError):
        return False


@pytest.fixture(scope="session")
def redis_url():
    server = shutil.which("redis-server")
    if server:
        from services.cli.launcher import free_port

        port = free_port()
        workdir = tempfile.mkdtemp(prefix="rh-test-redis-")
        proc = subprocess.Popen(
            [
                server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                workdir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 10
        while not _answers(url):
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"could not start redis-server on port {port}")
            time.sleep(0.05)
        yield url
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
        return
    url = os.environ.get("ROUNDHOUSE_REDIS_URL", "redis://127.0.0.1:6379/0")
    if not _answers(url):
        pytest.fail(f"tests need Redis: install redis-server or start one at {url}")
    yield url


@pytest.fixture
def key_prefix() -> str:
    """A fresh key prefix per test, so tests never see each other's keys."""
    return f"test-{uuid.uuid4().hex[:10]}"
