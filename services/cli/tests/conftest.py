"""The screen's tests run against the lobby tests' in-process lobby (``lobby_env``)."""

from services.lobby.tests.conftest import lobby_env  # noqa: F401
