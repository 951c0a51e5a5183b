"""Issue 27: players see components by name and effect, never by internal code; every
unsourced value names what was (not) found; the provisional sentence stays true."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from services.kernel.rng import SeededRandom
from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine import provenance as PV

CODE = re.compile(
    r"\b(?:[TLIAO]-[A-Z0-9]+(?:-\d)?|E-(?:VAR|HIRE)\S*|LR-IND|ENG\d+|EB\d+|QC-[A-Z0-9-]+)\b"
    r"|[a-z]+_[a-z_]+"
)
"""Internal codes: space ids, engineer ids, card ids, op names with underscores."""

DOCS = Path(__file__).resolve().parents[4] / "docs"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_labels_and_summaries_use_names_not_codes(players: int) -> None:
    """Every label of every legal action and every seat summary of random games names
    components as players know them ("Black track (3 black track steps)", "Engineer 7
    (...)"), never by code ("T-BLK-2", "ENG07", "loco_or_factory")."""
    for seed in range(3):
        state = GAME.new_state(players, seed)
        rng = SeededRandom(seed)
        while not state.is_terminal():
            seat = state.active_seats()[0]
            legal = state.legal_actions(seat)
            for label in GAME.describe_all(state, legal):
                assert not CODE.search(label), label
            state.apply(seat, rng.choice(legal))
        for line in GAME.seat_summaries(state, None):
            assert not CODE.search(line), line


def test_engineer_names_and_effects_in_views() -> None:
    """Views give each visible engineer its name and effect ("Engineer 7: ...")."""
    view = GAME.new_state(4, 3).view(None)
    for eid, info in view["engineers"].items():
        eng = D.ENGINEERS[D.ENGINEER_INDEX[eid]]
        assert info["effect"] == f"Engineer {eng.number}: {eng.text}"
        assert not CODE.search(info["effect"]), info


def test_every_component_has_a_name_and_a_text() -> None:
    """Action spaces, engineers, "?" tokens and cards, factories, starting and end bonus
    cards all carry a player-facing name and effect text in the data file."""
    for sp in D.RAW["action_spaces"]:
        assert sp["name"] and sp["text"], sp["id"]
    for tile in D.RAW["engineers"]["tiles"]:
        assert tile["name"] == f"Engineer {tile['number']}" and tile["text"]
    for group in ("question_tokens", "question_cards"):
        for item in D.RAW[group]:
            assert item["name"] and item["text"], item["id"]
    for item in D.RAW["starting_bonus_cards"]["cards"]:
        assert item["name"] and item["text"], item["id"]
    for item in D.RAW["end_bonus_cards"]["cards"]:
        assert item["name"] and item["text"], item["id"]
    for n in range(1, D.MAX_LOCO + 1):
        assert D.FACTORY_TEXTS[n] and not CODE.search(D.FACTORY_TEXTS[n])


def _tagged(node: Any, inherited: bool = False) -> list[tuple[dict[str, Any], bool]]:
    """Entries with a U/? status, with whether they (or an enclosing entry) name a source."""
    out: list[tuple[dict[str, Any], bool]] = []
    if isinstance(node, Mapping):
        has = inherited or "source" in node
        tags = [node.get("status"), node.get("status_2p")]
        if any(isinstance(t, str) and t in PV.PROVISIONAL for t in tags):
            out.append((dict(node), "source" in node or inherited))
        for key, value in node.items():
            if key != "_meta":
                out.extend(_tagged(value, has and key == "status"))
    elif isinstance(node, list):
        for value in node:
            out.extend(_tagged(value, inherited))
    return out


def test_every_unsourced_entry_says_what_was_found() -> None:
    """Issue 27: every data entry still tagged U or ? has a ``source`` field (what the
    sources give, or "none found"), and every option a tag and sources."""
    missing = [entry for entry, sourced in _tagged(D.RAW) if not sourced]
    assert not missing, missing
    for name, (tag, source) in PV.option_statuses().items():
        assert tag in ("V", "P", "U", "?") and source, name


def test_the_provisional_sentence_names_the_provisional_parts() -> None:
    """The sentence is built from the tags: it names the engineer tiles while they are
    placeholders, and the documents show it word for word."""
    sentence = PV.provisional_sentence()
    assert sentence.startswith("Provisional in this version: the 15 engineer tiles, ")
    assert '2 of the 5 "?" cards (two doublers, two grey steps)' in sentence
    assert "the 10 end bonus cards" in sentence
    assert "locomotives 2, 3, 4, 5, 6, 7, 8 and 9" in sentence  # #1 has a source now
    assert sentence.count(".") == 1  # one sentence
    doc = (DOCS / "transsib-assumptions.md").read_text(encoding="utf-8")
    assert sentence in doc


def test_the_counts_in_the_assumptions_doc_are_current() -> None:
    """The U + ? counts the document states are the data file's and the options'."""
    counts = PV.status_counts()
    entries = counts["data_entries"]["U"] + counts["data_entries"]["?"]
    options = counts["options"]["U"] + counts["options"]["?"]
    doc = (DOCS / "transsib-assumptions.md").read_text(encoding="utf-8")
    assert f"**{entries} after** ({counts['data_entries']['U']} U, " in doc
    assert f"**{options} after** ({counts['options']['U']} U, " in doc
    assert f"Together 80 before, {entries + options} after" in doc


def test_every_source_named_is_listed() -> None:
    """Short source names used in the data file are explained in ``_meta.sources`` and in
    docs/transsib-sources.md."""
    names = set(D.RAW["_meta"]["sources"])
    sources_doc = (DOCS / "transsib-sources.md").read_text(encoding="utf-8")
    for name in names - {"SPEC"}:
        assert f"| {name} |" in sources_doc, name
