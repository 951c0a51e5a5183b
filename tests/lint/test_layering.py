"""The layering contracts of ``make lint`` (pyproject.toml, ``[tool.importlinter]``) catch a
deliberate violation: an engine importing Redis, one engine importing another, the lobby
importing the bots, the bots reading the lobby's table records, a lower layer importing a
higher one (the platform importing the rules layer), or two packages importing each other.

The contracts run on a throw-away tree that has every module they name (empty), so the check
is of our contracts themselves, not of today's code (``make lint`` checks that).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _tree(tmp_path: Path, violation: str | None, where: str = "services.railbarons.engine") -> Path:
    config = _config()
    names = set(config["root_packages"])
    for contract in config["contracts"]:
        for key in ("source_modules", "forbidden_modules", "modules"):
            names.update(n for n in contract.get(key, []) if n.split(".")[0] in names or "." in n)
        for layer in contract.get("layers", []):
            names.update(n.strip() for n in layer.replace(":", "|").split("|"))
    for name in sorted(n for n in names if n.split(".")[0] in config["root_packages"]):
        package = tmp_path.joinpath(*name.split("."))
        package.mkdir(parents=True, exist_ok=True)
        for parent in [package, *package.relative_to(tmp_path).parents]:
            init = tmp_path / parent / "__init__.py"
            if parent != Path(".") and not init.exists():
                init.write_text("")
    if violation:
        (tmp_path.joinpath(*where.split(".")) / "flow.py").write_text(violation + "\n")
    text = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text[text.index("[tool.importlinter]") :])
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def lint_imports():
    if not LINT_IMPORTS.exists() and not shutil.which("lint-imports"):
        pytest.fail("lint-imports is not installed: run make venv")


def test_the_contracts_hold_on_a_clean_tree(tmp_path, lint_imports):
    result = _lint(_tree(tmp_path, None))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("violation", "broken"),
    [
        ("import redis", "is not allowed to import redis"),
        ("import time", "is not allowed to import time"),
        ("from services.lobby import server", "is not allowed to import services.lobby"),
        ("import services.e1894.engine", "services.railbarons.engine is not allowed to import"),
    ],
)
def test_a_deliberate_violation_breaks_lint(tmp_path, lint_imports, violation, broken):
    result = _lint(_tree(tmp_path, violation))
    assert result.returncode != 0
    assert broken in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("where", "violation", "broken"),
    [
        ("services.lobby", "import services.bots", "services.lobby is not allowed to import"),
        (
            "services.bots",
            "from services.lobby import hot_tables",
            "services.bots is not allowed to import services.lobby",
        ),
    ],
)
def test_a_deliberate_leak_between_services_breaks_lint(
    tmp_path, lint_imports, where, violation, broken
):
    result = _lint(_tree(tmp_path, violation, where))
    assert result.returncode != 0
    assert broken in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("where", "violation", "broken"),
    [
        (
            "services.platform",
            "from services.rules import servicer",
            "services.platform is not allowed to import services.rules",
        ),
        (
            "services.kernel",
            "import services.match",
            "services.kernel is not allowed to import services.match",
        ),
    ],
)
def test_a_deliberate_import_running_back_up_breaks_lint(
    tmp_path, lint_imports, where, violation, broken
):
    result = _lint(_tree(tmp_path, violation, where))
    assert result.returncode != 0
    assert broken in result.stdout, result.stdout


def test_a_deliberate_cycle_between_packages_breaks_lint(tmp_path, lint_imports):
    tree = _tree(tmp_path, "import services.clocks", "services.lobby")
    (tree / "services" / "clocks" / "keeper.py").write_text("import services.lobby\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "No cycles are allowed in services." in result.stdout, result.stdout
