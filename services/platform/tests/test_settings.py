"""The settings split per service (:mod:`services.platform.settings`): each field declared
once, every service class a part of the whole deployment's :class:`Settings` with the same
variables and defaults, each process reading only its own class, and ``docs/settings.md``
listing every variable of every class with its default and meaning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from services.platform import settings as S

DOC = Path(__file__).resolve().parents[3] / "docs" / "settings.md"

CLASSES = [
    S.CommonSettings,
    S.StoreSettings,
    S.AccountEventsSettings,
    S.ResignationSettings,
    S.BrokerSettings,
    S.LobbySettings,
    S.GatewaySettings,
    S.AccountsSettings,
    S.ArchiveSettings,
    S.BotSettings,
    S.KeeperSettings,
    S.TournamentsSettings,
    S.RulesSettings,
]
SERVICES = [
    S.LobbySettings,
    S.GatewaySettings,
    S.AccountsSettings,
    S.ArchiveSettings,
    S.BotSettings,
    S.KeeperSettings,
    S.TournamentsSettings,
    S.RulesSettings,
]


def own_fields(cls: type) -> list[str]:
    """The fields ``cls`` declares itself (not those it inherits), in order."""
    return [name for name in cls.__dict__.get("__annotations__", {}) if name != "model_config"]


def default_text(name: str) -> str:
    """A field's default as docs/settings.md shows it."""
    field = S.Settings.model_fields[name]
    if name == "consumer_name":
        return "the host name"
    value = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
    assert value is not PydanticUndefined
    if value is None or value == "":
        return "empty"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, dict | list):
        import json

        return "`" + json.dumps(value) + "`"
    return f"`{value}`"


def doc_tables() -> dict[str, dict[str, tuple[str, str]]]:
    """docs/settings.md's tables: class name -> variable -> (default, meaning)."""
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    current = None
    for line in DOC.read_text().splitlines():
        heading = re.match(r"## `(\w+)`", line)
        if heading:
            current = tables.setdefault(heading.group(1), {})
            continue
        row = re.match(r"\| `ROUNDHOUSE_(\w+)` \| (.*?) \| (.*) \|$", line)
        if row and current is not None:
            current[row.group(1).lower()] = (row.group(2), row.group(3).replace("\\|", "|"))
    return tables


def test_each_field_is_declared_once_and_the_deployment_has_them_all():
    declared = [name for cls in CLASSES for name in own_fields(cls)]
    assert len(declared) == len(set(declared)), "a field declared in two classes"
    assert set(declared) == set(S.Settings.model_fields)
    assert not own_fields(S.Settings)  # the whole deployment adds nothing of its own


@pytest.mark.parametrize("cls", SERVICES, ids=lambda c: c.__name__)
def test_a_service_class_has_the_deployments_variables_and_defaults(cls):
    assert set(S.CommonSettings.model_fields) <= set(cls.model_fields)
    for name, field in cls.model_fields.items():
        assert repr(field) == repr(S.Settings.model_fields[name]), name
    whole = S.Settings().model_dump()
    assert {k: v for k, v in cls().model_dump().items() if k != "consumer_name"} == {
        k: whole[k] for k in cls.model_fields if k != "consumer_name"
    }


def test_a_process_reads_its_own_variables_only(monkeypatch):
    monkeypatch.setenv("ROUNDHOUSE_BOT_SECRET", "shh")
    monkeypatch.setenv("ROUNDHOUSE_TABLES_PER_ACCOUNT", "3")
    monkeypatch.setenv("ROUNDHOUSE_KEY_PREFIX", "mine")
    lobby, bots = S.LobbySettings(), S.BotSettings()
    assert lobby.tables_per_account == 3 and lobby.key_prefix == "mine"
    assert not hasattr(lobby, "bot_secret")
    assert bots.bot_secret == "shh" and bots.key_prefix == "mine"
    assert not hasattr(bots, "tables_per_account") and not hasattr(bots, "database_url")


def test_a_field_of_another_service_is_refused_as_an_argument(monkeypatch):
    with pytest.raises(ValidationError, match="database_url"):
        S.BotSettings(database_url="postgresql://elsewhere/db")
    with pytest.raises(ValidationError, match="bot_secret"):
        S.LobbySettings(bot_secret="shh")
    monkeypatch.setenv("ROUNDHOUSE_NO_SUCH_SETTING", "1")  # the environment: ignored as ever
    assert S.BotSettings().key_prefix == "rh"


def test_get_settings_reads_each_class_once(monkeypatch):
    S.get_settings.cache_clear()
    try:
        monkeypatch.setenv("ROUNDHOUSE_CLOCKS_TICK_MS", "20")
        keeper = S.get_settings(S.KeeperSettings)
        assert type(keeper) is S.KeeperSettings and keeper.clocks_tick_ms == 20
        monkeypatch.setenv("ROUNDHOUSE_CLOCKS_TICK_MS", "30")
        assert S.get_settings(S.KeeperSettings) is keeper
        assert type(S.get_settings(S.RulesSettings)) is S.RulesSettings
    finally:
        S.get_settings.cache_clear()


def test_the_validators_stay_with_their_fields():
    with pytest.raises(ValidationError, match="braces"):
        S.CommonSettings(key_prefix="a{b")
    with pytest.raises(ValidationError):
        S.GatewaySettings(trusted_proxies=["not-a-network"])
    assert (
        S.CommonSettings(redis_cluster=True).lifecycle_shards > S.CommonSettings().lifecycle_shards
    )
    with pytest.raises(S.BrokerNotSet):
        S.BotSettings(redis_cluster=True).check_broker()


def test_the_document_lists_every_variable_of_every_class():
    tables = doc_tables()
    assert set(tables) == {cls.__name__ for cls in CLASSES}
    for cls in CLASSES:
        rows = tables[cls.__name__]
        assert list(rows) == own_fields(cls), cls.__name__
        for name, (default, meaning) in rows.items():
            assert default == default_text(name), name
            assert meaning == (S.Settings.model_fields[name].description or ""), name
