"""The examples in the docstrings of the layer packages (kernel, match, platform, rules), the
lobby and the engines run as tests (``make test``): an example that no longer holds fails here.

The modules are found by walking the packages, so a new module's examples are picked up
without a list to keep."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = (
    "services.kernel",
    "services.match",
    "services.platform",
    "services.rules",
    "services.lobby",
    "services.railbarons.engine",
    "services.transsib.engine",
    "services.e1894.engine",
)
"""The packages whose modules' examples run (their ``tests`` subpackages excepted)."""


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if ".tests" not in info.name:
                names.append(info.name)
    return sorted(names)


def _with_examples(name: str) -> bool:
    finder = doctest.DocTestFinder(exclude_empty=True)
    return any(t.examples for t in finder.find(importlib.import_module(name)))


MODULES = [name for name in _modules() if _with_examples(name)]


def test_examples_are_found():
    assert "services.kernel.engine" in MODULES and "services.lobby.tables" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_hold(name: str):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} fail"
