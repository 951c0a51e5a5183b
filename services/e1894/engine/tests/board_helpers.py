"""Helpers shared by the board-level rule tests (track, tokens, routes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.common.engine import IllegalAction


def refused(code: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> IllegalAction:
    """Call ``fn(*args, **kwargs)``, which the rules must refuse: check that it raises
    :class:`IllegalAction` with ``code`` and a reason (the rule's text), and return the error.

    Example: ``refused("already_tokened", check_token_placement, b, "Belge", "E16", 0)``."""
    with pytest.raises(IllegalAction) as err:
        fn(*args, **kwargs)
    assert err.value.code == code, err.value
    assert err.value.reason
    return err.value
