"""Helpers shared by the board-level rule tests (track, tokens, routes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.e1894.engine.board import Board
from services.kernel.engine import IllegalAction


def belge_home() -> Board:
    """Fresh board with Belge's home token in Mechelen (E16)."""
    b = Board.from_data()
    b.put_token("Belge", "E16", 0)
    return b


def belge_line() -> Board:
    """:func:`belge_home` with yellow 57s on Mechelen E16, Gent D15 (AG's home, reserved)
    and Brugge C14, joined in a line (E16's 57 also leads SE to F17)."""
    b = belge_home()
    b.put_tile("E16", "57", 2)
    b.put_tile("D15", "57", 2)
    b.put_tile("C14", "57", 2)
    return b


def refused(code: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> IllegalAction:
    """Call ``fn(*args, **kwargs)``, which the rules must refuse: check that it raises
    :class:`IllegalAction` with ``code`` and a reason (the rule's text), and return the error.

    Example: ``refused("already_tokened", check_token_placement, b, "Belge", "E16", 0)``."""
    with pytest.raises(IllegalAction) as err:
        fn(*args, **kwargs)
    assert err.value.code == code, err.value
    assert err.value.reason
    return err.value
