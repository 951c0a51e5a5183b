"""The ``roundhouse`` command (:mod:`services.cli.main`) and its terminal client."""

from __future__ import annotations

import os
import shutil
import sys


def program() -> str:
    """How the ``roundhouse`` command was typed, for the hints the commands print:
    ``roundhouse`` when that is on the PATH, else the path typed (``.venv/bin/roundhouse``);
    ``roundhouse`` when run another way (``python -m``, tests)."""
    typed = sys.argv[0] if sys.argv and sys.argv[0] else "roundhouse"
    name = os.path.basename(typed)
    found = shutil.which(name)
    if found and os.path.realpath(found) == os.path.realpath(typed):
        return name
    return typed if name == "roundhouse" else "roundhouse"
