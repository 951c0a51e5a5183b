"""A table's options in their canonical form (issue 13, item 1).

The lobby used to store and echo the request's ``options_json`` text as it
came, so valid JSON padded with whitespace to the message limit was kept per
table and sent in every ``Table`` message. Now the text is checked by the
title (``Game.parse_options_json``: JSON, depth, Unicode, the option schema)
and stored in its canonical form (sorted keys, no spaces:
:func:`services.kernel.engine.canonical_json`), which is never longer than
the text accepted; ``""`` and ``{}`` are both stored as ``""`` (defaults).
"""

from __future__ import annotations

from services.kernel import jsontext
from services.kernel.engine import Game, canonical_json


def canonical_options(game: Game, text: str) -> str:
    """The canonical text of ``text``'s options of ``game``.

    Raises:
        InvalidOptions: the options do not parse or validate.
    """
    game.parse_options_json(text)
    obj = jsontext.loads(text, "options_json") if text else {}
    return canonical_json(obj) if obj else ""
