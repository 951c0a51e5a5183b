"""A private PostgreSQL server for tests that stop and start the database:
``initdb`` and ``pg_ctl`` (``ROUNDHOUSE_TEST_PG_BIN``, default
``/usr/lib/postgresql/15/bin``) on a free port in a tmp dir, run as the user
``postgres`` when the tests run as root (PostgreSQL refuses root). Never the
machine's shared server."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from services.cli.launcher import free_port

PG_BIN = Path(os.environ.get("ROUNDHOUSE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


class PrivatePostgres:
    """``start()``, ``stop()``, ``url(database)``; ``close()`` stops it and
    removes its files."""

    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError(f"no initdb in {PG_BIN} (set ROUNDHOUSE_TEST_PG_BIN)")
        self.dir = Path(tempfile.mkdtemp(prefix="rh-test-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(PG_BIN / "initdb", "-D", self.data, "-U", "postgres", "-A", "trust", "--no-sync")

    def _run(self, *argv) -> None:
        cmd = [str(a) for a in argv]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off"
        self._run(
            PG_BIN / "pg_ctl", "-D", self.data, "-l", self.dir / "log", "-w", "-o", options, "start"
        )

    def stop(self) -> None:
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def close(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(self.dir, ignore_errors=True)
