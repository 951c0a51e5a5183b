"""Each title's board drawn as SVG from its view: ``render(title, view) -> str``.

One module per title (:mod:`.railbarons`, :mod:`.e1894`, :mod:`.transsib`) plus the shared
hex/SVG helpers in :mod:`.svg`. Pure functions: data in, picture out, no game logic.
"""

from __future__ import annotations

import importlib
from typing import Any

RENDERERS = {
    "railbarons": "services.web.boards.railbarons",
    "e1894": "services.web.boards.e1894",
    "transsib": "services.web.boards.transsib",
}
"""Title -> module defining ``render(view, names=None) -> str``."""


def render(title: str, view: dict[str, Any], names: list[str] | None = None) -> str:
    """The SVG board of ``view`` for ``title``.

    Raises:
        KeyError: no board renderer for ``title``.
    """
    if title not in RENDERERS:
        raise KeyError(f"no board for title {title!r}; known: {', '.join(RENDERERS)}")
    return importlib.import_module(RENDERERS[title]).render(view, names)
