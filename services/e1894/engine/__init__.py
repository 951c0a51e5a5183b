"""1894 rules engine (title ``e1894``): exposes :data:`GAME` for the registry."""

from .game import GAME

__all__ = ["GAME"]
