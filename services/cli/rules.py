"""The entry point of every rules service: ``roundhouse serve rules TITLE`` and
``python -m services.<title>.service.server``.

Generic for all titles: it serves ``GameRules`` for ``title`` plus the extra services that the
title's service package declares (``EXTRAS`` in ``services.<title>.service.server``: 1894's
``Interchange``), and plugs the archive into the rules layer's archive port
(:class:`services.rules.ports.ArchivePort`). It lives here, above the rules layer and the
archive, because it is the one place that knows both.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from services.archive.fallback import ArchiveFallback
from services.archive.store import ArchiveStore
from services.platform.server import run_service
from services.rules.ports import ArchivePort
from services.rules.serve import Extra, serve


def archive_for(title: str, engine, cached: int) -> ArchivePort:
    """The archive's answers for finished games of ``title`` Redis no longer holds."""
    return ArchiveFallback(title, ArchiveStore(engine), cached)


def title_extras(title: str) -> Sequence[Extra]:
    """The extra services ``title`` declares beside GameRules (``EXTRAS``; none by default)."""
    module = importlib.import_module(f"services.{title}.service.server")
    return tuple(getattr(module, "EXTRAS", ()))


def main_for(title: str) -> None:
    """Run the rules service of ``title`` until SIGTERM/SIGINT."""
    run_service(serve(title, extras=title_extras(title), archive=archive_for))
