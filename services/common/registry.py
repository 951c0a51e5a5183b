"""The registry of titles by short name.

Each title's engine package exposes a module-level ``GAME`` (a
:class:`services.common.engine.Game`). The registry maps the short name to the
module path and imports it on first use, so the common package never imports
an engine at import time (imports point one way: engine -> common).
"""

from __future__ import annotations

import importlib

from services.common.engine import Game

TITLE_MODULES: dict[str, str] = {
    "railbarons": "services.railbarons.engine",
    "transsib": "services.transsib.engine",
    "e1894": "services.e1894.engine",
}
"""Short name -> module exposing ``GAME``."""

_cache: dict[str, Game] = {}


class UnknownTitle(KeyError):
    """No title of that name is registered."""


def get_game(title: str) -> Game:
    """The :class:`Game` for a short name such as ``"railbarons"``.

    Raises:
        UnknownTitle: the name is not registered or its engine is not installed.
    """
    game = _cache.get(title)
    if game is not None:
        return game
    module_name = TITLE_MODULES.get(title)
    if module_name is None:
        raise UnknownTitle(f"unknown title {title!r}; known: {', '.join(TITLE_MODULES)}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnknownTitle(f"title {title!r} has no engine yet ({exc})") from None
    game = getattr(module, "GAME", None)
    if game is None:
        raise UnknownTitle(f"title {title!r}: {module_name} defines no GAME")
    _cache[title] = game
    return game


def available_titles() -> list[str]:
    """Short names whose engine imports and defines ``GAME``."""
    out = []
    for title in TITLE_MODULES:
        try:
            get_game(title)
        except UnknownTitle:
            continue
        out.append(title)
    return out
