"""Fixtures and settings shared by every test directory.

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
import uuid

import pytest
from hypothesis import settings as hypothesis_settings

from services.cli.launcher import free_port, redis_answers, redis_server_command, wait_for_redis

# Property tests are derandomized by default so CI is reproducible; explore new
# examples with HYPOTHESIS_PROFILE=explore (random seeds, more examples).
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
hypothesis_settings.register_profile("explore", max_examples=200, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def redis_url():
    if shutil.which("redis-server"):
        port = free_port()
        workdir = tempfile.mkdtemp(prefix="rh-test-redis-")
        proc = subprocess.Popen(
            redis_server_command(port, workdir),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            wait_for_redis(url)
        except TimeoutError:
            proc.kill()
            pytest.fail(f"could not start redis-server on port {port}")
        yield url
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
        return
    url = os.environ.get("ROUNDHOUSE_REDIS_URL", "redis://127.0.0.1:6379/0")
    if not redis_answers(url):
        pytest.fail(f"tests need Redis: install redis-server or start one at {url}")
    yield url


@pytest.fixture
def key_prefix() -> str:
    """A fresh key prefix per test, so tests never see each other's keys."""
    return f"test-{uuid.uuid4().hex[:10]}"
