"""Known defects of the reference engine (tobymao/18xx, 18xx.games), each recognised by its
signature, in one place: :data:`KNOWN_DEFECTS`.

A differential run (:mod:`.differential`) counts a refusal that matches one of these apart
from the other refusals ("refused at a known reference defect"): the reference cannot play on
there, and our engine follows the rules (the write-up of each defect says which, and its test).

A signature is three things, all of which must hold:

* the refused action's ``type``;
* a regular expression the reference's message must match (``re.search``);
* a position condition: a function of the exported game's ``actions`` and the refused action's
  0-based index that says whether the position is the defect's.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from .engine.tiles import SPLIT_TILES

WRITE_UPS = "tests/fixtures/e1894/reference-defects/README.md"
"""The write-ups of the defects, for a maintainer of the reference (path in this repository)."""

TWO_HOME_CORPORATIONS: dict[str, tuple[str, str]] = {
    "Ouest": ("B3", "E6"),
    "Nord": ("D9", "G14"),
    "CFOR": ("D3", "H3"),
}
"""The corporations with two home hexes and those hexes (designer's rules v1.0.3 §7.3.1 "Place
home station marker": on its first operation a public company places a home station marker "in
any empty station location on each home hexagon"; Ouest, Nord and CFOR have two)."""

Condition = Callable[[Sequence[dict[str, Any]], int], bool]
"""``(actions, index) -> bool``: whether the position before ``actions[index]`` is the
defect's."""


@dataclasses.dataclass(frozen=True)
class KnownDefect:
    """One defect of the reference engine and its signature.

    Attributes:
        key: a short stable name (the report's ``defect``).
        action_type: the refused action's ``type``.
        message: a regular expression the reference's message matches.
        condition: the position condition (:data:`Condition`).
        summary: one sentence: what the reference does wrong.
        write_up: where the defect is written up (a path and an anchor).
    """

    key: str
    action_type: str
    message: str
    condition: Condition
    summary: str
    write_up: str

    def matches(self, actions: Sequence[dict[str, Any]], index: int | None, error: str) -> bool:
        """Whether a refusal (of ``actions[index]`` with the reference's message ``error``)
        has this defect's signature; ``False`` when ``index`` is unknown or out of range."""
        if index is None or not 0 <= index < len(actions):
            return False
        action = actions[index]
        return (
            action.get("type") == self.action_type
            and re.search(self.message, error or "") is not None
            and self.condition(actions, index)
        )


def _first_home_token_on_split_tile(actions: Sequence[dict[str, Any]], index: int) -> bool:
    """The refused ``place_token`` is by Ouest, Nord or CFOR, on a city of a split brown tile
    (X16..X24, the brown tiles a home hex can hold), with at most one earlier ``place_token``
    of that corporation in the file: it is one of the corporation's two home tokens."""
    action = actions[index]
    corporation = action.get("entity")
    if corporation not in TWO_HOME_CORPORATIONS:
        return False
    tile = str(action.get("city") or "").split("-", 1)[0]
    if tile not in SPLIT_TILES:
        return False
    earlier = sum(
        1
        for a in actions[:index]
        if a.get("type") == "place_token" and a.get("entity") == corporation
    )
    return earlier <= 1


KNOWN_DEFECTS: tuple[KnownDefect, ...] = (
    KnownDefect(
        key="two-split-brown-homes",
        action_type="place_token",
        message=r"Token is already used",
        condition=_first_home_token_on_split_tile,
        summary=(
            "Ouest, Nord or CFOR first operating with both home hexes brown, the first a split "
            "tile: the reference queues the same home token twice and refuses the second "
            "placement"
        ),
        write_up=f"{WRITE_UPS}#two-split-brown-homes",
    ),
)
"""Every known defect of the reference, one entry each."""


def known_defect(
    actions: Sequence[dict[str, Any]], index: int | None, error: str
) -> KnownDefect | None:
    """The first of :data:`KNOWN_DEFECTS` whose signature a refusal has, else ``None``."""
    for defect in KNOWN_DEFECTS:
        if defect.matches(actions, index, error):
            return defect
    return None
