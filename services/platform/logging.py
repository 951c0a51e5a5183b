"""Structured logs (structlog) for every process: JSON lines in production,
readable console output in development (``ROUNDHOUSE_LOG_FORMAT``).

One renderer for everything: structlog loggers (:func:`get_logger`) hand their
events to the standard library, and a single handler on the root logger
renders both those events and plain ``logging`` records (grpc, redis, celery,
kombu, warnings) with :class:`structlog.stdlib.ProcessorFormatter`. In JSON
mode every line on stderr is one JSON object with at least ``event``,
``level``, ``logger`` and ``timestamp`` (UTC, ISO 8601); ``log.exception(...)``
(or ``exc_info=True``) adds an ``exception`` key holding the formatted
traceback. Local variables are never rendered (they may hold seat tokens or
the bot secret).

This module is ``services.platform.logging``: it is always imported by that
absolute name, and its own ``import logging`` is the standard library (absolute
imports). It would shadow the standard library only if ``services/platform/``
itself were on ``sys.path`` (running one of its files as a script); that case
fails at once with an explanation instead of a confusing circular import.
"""

from __future__ import annotations

if __name__ == "logging":  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "services/platform/logging.py was imported as the standard library's 'logging': "
        "services/platform/ is on sys.path. Run modules with 'python -m services.platform.<name>' "
        "instead of 'python services/platform/<name>.py'."
    )

import logging
import sys
from typing import TextIO

import structlog

FORMATS = ("console", "json")

# Marks the handler configure_logging installs (tests and re-configuration find it).
HANDLER_NAME = "roundhouse"


def _shared_processors() -> list[structlog.typing.Processor]:
    """Processors run on every event, structlog's and the standard library's."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.PositionalArgumentsFormatter(),
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def _final_processors(fmt: str) -> list[structlog.typing.Processor]:
    """The renderer of ``fmt`` (after the bookkeeping keys are removed)."""
    if fmt == "json":
        return [
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,  # exc_info -> "exception": traceback text
            structlog.processors.JSONRenderer(),
        ]
    return [
        structlog.stdlib.ProcessorFormatter.remove_processors_meta,
        structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        ),
    ]


def configure_logging(
    level: str = "INFO", fmt: str = "console", stream: TextIO | None = None
) -> None:
    """Configure structlog and the standard library's root logger for this
    process. Calling it again replaces the previous configuration.

    Args:
        level: minimum level name (``DEBUG``, ``INFO``, ``WARNING``...; any case).
        fmt: ``"json"`` (one JSON object per line) or ``"console"`` (readable).
        stream: where lines go; default ``sys.stderr`` at the time of the call.

    Raises:
        ValueError: unknown ``fmt`` or ``level``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r}: expected one of {', '.join(FORMATS)}")
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"log level {level!r}: expected DEBUG, INFO, WARNING, ERROR or CRITICAL")

    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.set_name(HANDLER_NAME)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_shared_processors(),
            processors=_final_processors(fmt),
        )
    )
    root = logging.getLogger()
    for old in list(root.handlers):  # one renderer only: JSON mode prints JSON lines only
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    logging.captureWarnings(True)  # warnings.warn -> logger "py.warnings" -> same renderer

    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_shared_processors(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """The structured logger ``name`` (e.g. ``"rules"``, ``"lobby"``); the name
    appears as the ``logger`` key of every line it writes. Safe to call at
    import time, before :func:`configure_logging`."""
    return structlog.get_logger(name)
