"""The titles Roundhouse hosts, by short name.

This list names every engine, so it sits above the engines (in the rules layer), never in the
kernel they import (docs/architecture.md, "Layers"). The engines are imported on first use
(:class:`services.kernel.registry.TitleRegistry`).
"""

from __future__ import annotations

from services.kernel.engine import Game
from services.kernel.registry import TitleRegistry

TITLE_MODULES: dict[str, str] = {
    "railbarons": "services.railbarons.engine",
    "transsib": "services.transsib.engine",
    "e1894": "services.e1894.engine",
}
"""Short name -> module exposing ``GAME``."""

REGISTRY = TitleRegistry(TITLE_MODULES)
"""The hosted titles."""


def get_game(title: str) -> Game:
    """The :class:`Game` for a short name such as ``"railbarons"``.

    Raises:
        services.kernel.registry.UnknownTitle: the name is not registered or its engine is not
            installed.
    """
    return REGISTRY.get_game(title)


def available_titles() -> list[str]:
    """Short names whose engine imports and defines ``GAME``."""
    return REGISTRY.available_titles()
