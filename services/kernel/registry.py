"""The registry contract: titles by short name, each an engine package exposing ``GAME``.

A :class:`TitleRegistry` maps short names to the module paths of engine packages and imports
one on first use. The kernel holds only the mechanism: the list of the titles, which names
every engine, sits above them (:mod:`services.rules.titles`), so the kernel that the engines
import never names an engine (docs/architecture.md, "Layers").

>>> registry = TitleRegistry({"railbarons": "services.railbarons.engine"})
>>> registry.get_game("railbarons").id
'railbarons'
>>> registry.get_game("chess")
Traceback (most recent call last):
...
services.kernel.registry.UnknownTitle: "unknown title 'chess'; known: railbarons"
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from services.kernel.engine import Game


class UnknownTitle(KeyError):
    """No title of that name is registered."""


class TitleRegistry:
    """Short name -> :class:`Game`, imported lazily from ``modules`` (name -> module path)."""

    def __init__(self, modules: Mapping[str, str]) -> None:
        self.modules = modules
        self._cache: dict[str, Game] = {}

    def get_game(self, title: str) -> Game:
        """The :class:`Game` for a short name such as ``"railbarons"``.

        Raises:
            UnknownTitle: the name is not registered or its engine is not installed.
        """
        game = self._cache.get(title)
        if game is not None:
            return game
        module_name = self.modules.get(title)
        if module_name is None:
            raise UnknownTitle(f"unknown title {title!r}; known: {', '.join(self.modules)}")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            raise UnknownTitle(f"title {title!r} has no engine yet ({exc})") from None
        game = getattr(module, "GAME", None)
        if game is None:
            raise UnknownTitle(f"title {title!r}: {module_name} defines no GAME")
        self._cache[title] = game
        return game

    def available_titles(self) -> list[str]:
        """Short names whose engine imports and defines ``GAME``."""
        out = []
        for title in self.modules:
            try:
                self.get_game(title)
            except UnknownTitle:
                continue
            out.append(title)
        return out
