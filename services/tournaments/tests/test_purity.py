"""The tournament cores are pure: no grpc, redis, database, clock or OS imports, and
they never change their inputs."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

from services.tournaments.pairing import PairingConfig, pair_round
from services.tournaments.pairing_cost import Entrant, History, RoundPairing, Table

PACKAGE = Path(__file__).resolve().parents[1]
FORBIDDEN = {"grpc", "redis", "sqlalchemy", "psycopg", "asyncpg", "celery", "time", "os"}


def test_no_service_imports_in_the_cores():
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"


def test_pairing_leaves_the_field_and_history_unchanged():
    history = History.from_rounds([RoundPairing(1, (Table(1, ("a", "b", "c", "d")),))])
    field = [Entrant(p, 1.0) for p in "abcdefgh"]
    before = (copy.deepcopy(history), list(field))
    pair_round(2, field, history, PairingConfig(4), seed=1)
    assert (history, field) == before
