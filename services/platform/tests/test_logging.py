"""Structured logs (services/platform/logging.py): in JSON mode every line is one
JSON object with level, logger, event and timestamp, exceptions carry their
traceback, standard-library records (grpc, redis, celery, kombu, warnings) go
through the same renderer, and the Celery worker uses it."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import structlog

from services.platform import logging as rh_logging
from services.platform.logging import HANDLER_NAME, configure_logging, get_logger

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def restore_logging():
    """Each test configures the process-wide logging; put it back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    config = structlog.get_config()
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        if not type(h).__module__.startswith("_pytest"):  # pytest re-adds its own per phase
            root.addHandler(h)
    root.setLevel(level)
    logging.captureWarnings(False)
    structlog.configure(**config)


def json_lines(text: str) -> list[dict]:
    """Every non-empty line parsed as one JSON object (fails on any other line)."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines, "nothing was logged"
    return [json.loads(line) for line in lines]


def fail() -> None:
    raise ZeroDivisionError("no seats")


def test_json_lines_carry_level_logger_event_and_timestamp():
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)
    get_logger("rules").info("game created", game_id="g1", seats=4)
    get_logger("lobby").warning("table full", table_id="t9")
    first, second = json_lines(out.getvalue())
    assert first["event"] == "game created"
    assert first["level"] == "info"
    assert first["logger"] == "rules"
    assert (first["game_id"], first["seats"]) == ("g1", 4)
    assert first["timestamp"].endswith("Z")
    assert (second["level"], second["logger"], second["table_id"]) == ("warning", "lobby", "t9")


def test_log_exception_renders_the_traceback_in_json():
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)
    try:
        fail()
    except ZeroDivisionError:
        get_logger("grpc-errors").exception("internal error", incident="abc")
    (line,) = json_lines(out.getvalue())
    assert line["level"] == "error"
    assert line["logger"] == "grpc-errors"
    assert line["incident"] == "abc"
    assert "exc_info" not in line
    assert line["exception"].startswith("Traceback (most recent call last)")
    assert "in fail" in line["exception"]
    assert "ZeroDivisionError: no seats" in line["exception"]


def test_stdlib_loggers_come_out_as_json_through_the_same_renderer():
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)
    logging.getLogger("grpc._cython.cygrpc").warning("channel %s closed", "rules-e1894")
    try:
        fail()
    except ZeroDivisionError:
        logging.getLogger("kombu.connection").exception("broker lost")
    logging.getLogger("celery.worker").debug("below the level: not written")
    warn, exc = json_lines(out.getvalue())
    assert warn == {
        "event": "channel rules-e1894 closed",
        "level": "warning",
        "logger": "grpc._cython.cygrpc",
        "timestamp": warn["timestamp"],
    }
    assert (exc["logger"], exc["level"], exc["event"]) == (
        "kombu.connection",
        "error",
        "broker lost",
    )
    assert "ZeroDivisionError: no seats" in exc["exception"]


def test_level_filters_structlog_and_stdlib_alike():
    out = io.StringIO()
    configure_logging("warning", "json", stream=out)
    get_logger("rules").info("hidden")
    logging.getLogger("redis").info("hidden too")
    get_logger("rules").error("shown")
    logging.getLogger("redis").error("shown too")
    assert [line["event"] for line in json_lines(out.getvalue())] == ["shown", "shown too"]


def test_reconfiguring_replaces_the_root_handler():
    """One renderer only: a second call (or a handler someone else installed)
    does not leave a second handler printing other lines."""
    logging.getLogger().addHandler(logging.StreamHandler(io.StringIO()))
    configure_logging("INFO", "console", stream=io.StringIO())
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)
    assert [h.get_name() for h in logging.getLogger().handlers] == [HANDLER_NAME]
    get_logger("rules").info("once")
    assert [line["event"] for line in json_lines(out.getvalue())] == ["once"]


def test_console_mode_names_the_logger_and_prints_the_traceback():
    out = io.StringIO()
    configure_logging("INFO", "console", stream=out)
    try:
        fail()
    except ZeroDivisionError:
        get_logger("dispatcher").exception("handler failed", game_id="g2")
    text = out.getvalue()
    assert "handler failed" in text
    assert "[dispatcher]" in text
    assert "game_id=g2" in text
    assert "ZeroDivisionError: no seats" in text


def test_unknown_format_or_level_is_refused():
    with pytest.raises(ValueError, match="log format"):
        configure_logging("INFO", "text")
    with pytest.raises(ValueError, match="log level"):
        configure_logging("LOUD", "json")


def test_a_process_writes_json_lines_only():
    """End to end in a fresh interpreter, as a service runs: structlog, stdlib
    loggers, an exception and a warning all come out on stderr as JSON."""
    script = textwrap.dedent(
        """
        import logging, warnings
        from services.platform.logging import configure_logging, get_logger
        log = get_logger("rules")  # module-level, before configuration, as services do
        configure_logging("INFO", "json")
        log.info("listening", port=50061)
        logging.getLogger("grpc").error("multi\\nline")
        warnings.warn("deprecated thing")
        try:
            {}["missing"]
        except KeyError:
            log.exception("internal error")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    lines = json_lines(proc.stderr)
    assert [(line["logger"], line["event"]) for line in lines[:2]] == [
        ("rules", "listening"),
        ("grpc", "multi\nline"),
    ]
    assert lines[2]["logger"] == "py.warnings"
    assert "deprecated thing" in lines[2]["event"]
    assert "KeyError: 'missing'" in lines[3]["exception"]


def test_the_module_uses_the_stdlib_logging_and_refuses_to_shadow_it():
    """services/platform/logging.py imports the real standard library module;
    with services/platform/ on sys.path (a file run as a script) the clash is
    reported clearly instead of breaking every library that logs."""
    assert rh_logging.logging is sys.modules["logging"]
    assert Path(rh_logging.logging.__file__).parent.name == "logging"  # .../lib/python3.x/logging
    proc = subprocess.run(
        [sys.executable, "-c", "import logging"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "services" / "platform")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "services/platform/ is on sys.path" in proc.stderr


def test_celery_worker_logging_goes_through_configure_logging(monkeypatch, capsys):
    """The worker's setup_logging signal has our receiver, so Celery installs no
    handler of its own and configures ours from the settings."""
    from celery.app.log import Logging

    from services.bots.celery_app import app
    from services.platform.settings import get_settings

    monkeypatch.setenv("ROUNDHOUSE_LOG_FORMAT", "json")
    monkeypatch.setenv("ROUNDHOUSE_LOG_LEVEL", "INFO")
    for name in ("_MP_FORK_LOGLEVEL_", "_MP_FORK_LOGFILE_", "_MP_FORK_LOGFORMAT_"):
        monkeypatch.setenv(name, "")  # Celery writes these; restored afterwards
    monkeypatch.setattr(Logging, "_setup", False)
    get_settings.cache_clear()
    try:
        handled = app.log.setup_logging_subsystem(loglevel="DEBUG")
        assert handled, "no setup_logging receiver: Celery would install its own logging"
        assert [h.get_name() for h in logging.getLogger().handlers] == [HANDLER_NAME]
        logging.getLogger("celery.worker.consumer").info("Connected to redis")
        logging.getLogger("celery.worker.consumer").debug("settings' INFO wins over DEBUG")
        get_logger("bots").info("turn played", game_id="g3")
    finally:
        get_settings.cache_clear()
    lines = json_lines(capsys.readouterr().err)
    assert [(line["logger"], line["event"]) for line in lines] == [
        ("celery.worker.consumer", "Connected to redis"),
        ("bots", "turn played"),
    ]
