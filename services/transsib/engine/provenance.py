"""Where each rule value of Russian Railroads comes from, and what is still provisional.

Every entry of ``data/transsib.json`` and every option of :class:`.options.TranssibOptions`
carries a tag: ``V`` (two independent public sources agree), ``P`` (one source), ``U`` (only
the Ultimate Railroads reprint, or a hint) or ``?`` (no source; a placeholder). The sources
are listed in ``docs/transsib-sources.md`` (issue 27).

:func:`provisional_sentence` turns the tags of the components into the one plain sentence
that the table page, the lobby and ``docs/transsib-assumptions.md`` show while any component
is provisional, so that the sentence stays true whenever the data file changes.

>>> provisional_sentence().startswith("Provisional in this version: the 15 engineer tiles")
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from services.transsib.engine import data as D
from services.transsib.engine.options import TranssibOptions

PROVISIONAL = frozenset({"U", "?"})
"""Tags of values no base-game source gives (``U``: Ultimate edition or a hint; ``?``:
none)."""


_ROOT = object()


def data_statuses(node: Any = _ROOT, path: str = "") -> Iterator[tuple[str, str]]:
    """Every tag of the data file as ``(path, tag)``: each ``status`` value (a string, or
    a mapping of part -> tag) and each ``status_2p``; ``_meta`` is skipped.

    >>> ("engineers.tiles[0]", "?") in set(data_statuses())
    True
    """
    if node is _ROOT:
        node = D.RAW
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "_meta":
                continue
            if key in ("status", "status_2p"):
                if isinstance(value, str):
                    yield (path if key == "status" else f"{path}.{key}", value)
                else:
                    for part, tag in value.items():
                        yield (f"{path}.{part}", tag)
            else:
                yield from data_statuses(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from data_statuses(value, f"{path}[{i}]")


def option_statuses() -> dict[str, tuple[str, str]]:
    """Option name -> ``(tag, sources)``, from each field's JSON schema.

    Raises:
        KeyError: an option without a tag (every option must carry one).
    """
    out: dict[str, tuple[str, str]] = {}
    for name, field in TranssibOptions.model_fields.items():
        extra = field.json_schema_extra
        if not isinstance(extra, dict) or "status" not in extra:
            raise KeyError(f"option {name} has no status tag")
        out[name] = (str(extra["status"]), str(extra.get("source", "")))
    return out


def status_counts() -> dict[str, Counter[str]]:
    """Tags counted: ``{"data": ..., "data_entries": ..., "options": ...}``.

    ``data`` counts every tag of the data file (:func:`data_statuses`); ``data_entries``
    only the plain ``"status": "<tag>"`` fields (the count the issue's numbers use);
    ``options`` one tag per option.
    """
    entries: Counter[str] = Counter()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key == "_meta":
                    continue
                if key == "status" and isinstance(value, str):
                    entries[value] += 1
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(D.RAW)
    return {
        "data": Counter(tag for _, tag in data_statuses()),
        "data_entries": entries,
        "options": Counter(tag for tag, _ in option_statuses().values()),
    }


def _count(items: list[Any], noun: str, names: list[str] | None = None) -> str:
    """``"the 15 engineer tiles"`` or ``"5 of the 7 "?" tokens (a, b)"``."""
    total = len(items)
    bad = [i for i, item in enumerate(items) if item.get("status") in PROVISIONAL]
    if not bad:
        return ""
    if len(bad) == total:
        return f"the {total} {noun}"
    named = f" ({', '.join(names[i].lower() for i in bad)})" if names else ""
    return f"{len(bad)} of the {total} {noun}{named}"


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def provisional_parts() -> list[str]:
    """The provisional components, each as a phrase for :func:`provisional_sentence`
    (empty when every component has a base-game source)."""
    raw = D.RAW
    parts: list[str] = []
    tiles = list(raw["engineers"]["tiles"])
    parts.append(_count(tiles, "engineer tiles"))
    tokens = list(raw["question_tokens"])
    parts.append(_count(tokens, '"?" tokens', [t.get("name", t["id"]) for t in tokens]))
    cards = list(raw["question_cards"])
    parts.append(_count(cards, '"?" cards', [c.get("name", c["id"]) for c in cards]))
    factories = raw["locomotives"]["factory_action_by_number"]
    numbers = [n for n in sorted(factories, key=int) if factories[n]["status"] in PROVISIONAL]
    if numbers:
        noun = "locomotive" if len(numbers) == 1 else "locomotives"
        parts.append(f"the factory actions of {noun} {_and(numbers)}")
    parts.append(_count(list(raw["end_bonus_cards"]["cards"]), "end bonus cards"))
    specials = [
        sp for line in raw["special_spaces"].values() if isinstance(line, list) for sp in line
    ]
    bad = [sp for sp in specials if sp["status"] in PROVISIONAL]
    if bad:
        parts.append(
            f"{len(bad)} of the {len(specials)} special spaces of the lines and the industry "
            "track (their positions and effects)"
        )
    starting = list(raw["starting_bonus_cards"]["cards"])
    parts.append(
        _count(starting, "starting bonus cards", [c.get("name", c["id"]) for c in starting])
    )
    if raw["last_round_tile"]["status"] in PROVISIONAL:
        parts.append("what the last-round tile offers")
    if raw["doubler_space_to_transsib_space"]["status"] in PROVISIONAL:
        parts.append("the Trans-Siberian spaces under the doubler spaces")
    return [p for p in parts if p]


def provisional_sentence() -> str:
    """One plain sentence naming every provisional component (``""`` when none is).

    Shown on the table page and in the lobby for Russian Railroads tables, and at the top
    of ``docs/transsib-assumptions.md`` (a test keeps the document in step).
    """
    parts = provisional_parts()
    if not parts:
        return ""
    return (
        f"Provisional in this version: {_and(parts)} — no public source gives them, so "
        "they are stand-ins that may differ from the printed game."
    )
