"""JSON text from clients, parsed with bounds (pure: usable by the engines).

:func:`loads` is ``json.loads`` plus the checks the services need before any
value reaches an engine, a fingerprint or an error message:

* nesting at most :data:`MAX_DEPTH` arrays/objects deep (CPython's decoder
  raises ``RecursionError``, not ``ValueError``, near 1,000 levels; no action
  or option of any title nests more than a few levels);
* no lone surrogate (``"\\ud800"``) in a string or a member name: such text is
  not Unicode and cannot be encoded as UTF-8 (for fingerprints, logs, Redis
  and gRPC messages).

Errors raise :class:`BadJSONText` (a ``ValueError``) with a ``reason`` code
(``bad_json``, ``json_too_deep``, ``bad_unicode``) and a message naming the
rule.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in client JSON (levels)."""


class BadJSONText(ValueError):
    """Client JSON text refused; ``reason`` is the machine code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def loads(text: str | bytes, what: str = "JSON") -> Any:
    """Parse client JSON ``text`` (``what`` names it in messages, e.g.
    ``"options_json"``).

    Raises:
        BadJSONText: not JSON (``bad_json``), nested deeper than
            :data:`MAX_DEPTH` (``json_too_deep``) or carrying a lone surrogate
            (``bad_unicode``).
    """
    try:
        obj = json.loads(text)
    except RecursionError:
        raise BadJSONText("json_too_deep", f"{what} nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError of bytes
        raise BadJSONText("bad_json", f"{what} is not valid JSON: {exc}") from None
    check(obj, what)
    return obj


def check(obj: Any, what: str = "JSON") -> None:
    """Check an already decoded value like :func:`loads` (iteratively, so any
    depth is safe). Raises :class:`BadJSONText`."""
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value, what)
        elif isinstance(value, dict | list | tuple):
            if depth > MAX_DEPTH:
                raise BadJSONText("json_too_deep", f"{what} nests deeper than {MAX_DEPTH} levels")
            if isinstance(value, dict):
                for key, item in value.items():
                    if isinstance(key, str):
                        _check_text(key, what)
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)


def _check_text(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadJSONText(
            "bad_unicode",
            f"{what} holds a lone surrogate \\u{ord(text[exc.start]):04x} at character "
            f"{exc.start} of a string: text must be valid Unicode",
        ) from None
