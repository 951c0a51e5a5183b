"""Golden playthroughs of railbarons: whole seeded games committed as JSON Lines, replayed
on every test run (``tests/test_golden.py``); any change of behaviour shows up as a diff.

File format (``*.jsonl``, one JSON object per line):

1. a header: ``{"golden": "railbarons", "players", "seed", "options", "policy",
   "policy_seed", "regenerate"}``;
2. one line per applied action: ``{"v": version after it, "seat", "action": canonical
   JSON, "events": [...], "digest": compact text, "sha": first 12 hex digits of the
   SHA-256 of the state's canonical JSON}``. The digest reads
   ``r<round> <phase> dials <a>/<d>/<e> $<cash per seat> <company>:t<treasury>i<income>
   s<sold>l<locos left> ... h<houses> det<Detroit>``;
3. a footer: ``{"result": {...}, "final_sha": full SHA-256}``.

Regenerate deliberately (after an intended rule change), then review the diff::

    python -m services.railbarons.engine.tests.golden --update
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from services.kernel.engine import canonical_json
from services.railbarons.engine import GAME, data, phases
from services.railbarons.engine.tests.helpers import steered_policy

HERE = Path(__file__).parent
REGENERATE = "python -m services.railbarons.engine.tests.golden --update"

GOLDENS: dict[str, dict[str, Any]] = {
    "steered_4p_seed0.jsonl": {"players": 4, "seed": 0, "options": {}, "policy_seed": 0},
    "steered_3p_seed10_options.jsonl": {
        "players": 3,
        "seed": 10,
        "options": {
            "build_cost_formula": "doubling",
            "dividend_rounding": "down",
            "auctioneer_must_open": True,
        },
        "policy_seed": 10,
    },
}
"""Golden files and how each game is played: the "steered" policy of
:func:`~services.railbarons.engine.tests.helpers.steered_policy` for every seat."""


def digest(st) -> str:
    """A compact, readable summary of a state (see the module docstring)."""
    companies = " ".join(
        f"{cid}:t{st.treasury[c]}i{st.income[c]}s{st.sold[c]}l{st.locos[c]}"
        for c, cid in enumerate(data.COMPANY_IDS)
        if st.opened >> c & 1
    )
    cash = "/".join(str(x) for x in st.cash)
    return (
        f"r{st.rounds + 1} {phases.PHASE_NAMES[st.phase]} "
        f"dials {st.dials[0]}/{st.dials[1]}/{st.dials[2]} ${cash} {companies} "
        f"h{st.houses} det{st.ind[0]}"
    )


def state_sha(st) -> str:
    """SHA-256 of the state's canonical JSON."""
    return hashlib.sha256(canonical_json(st.to_json()).encode()).hexdigest()


def generate(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Play the game described by ``spec`` and return the golden lines."""
    st = GAME.new_state(spec["players"], spec["seed"], spec["options"])
    policy = steered_policy(spec["policy_seed"])
    lines: list[dict[str, Any]] = [
        {
            "golden": "railbarons",
            "players": spec["players"],
            "seed": spec["seed"],
            "options": spec["options"],
            "policy": "steered",
            "policy_seed": spec["policy_seed"],
            "regenerate": REGENERATE,
        }
    ]
    while not st.is_terminal():
        seat = st.active_seats()[0]
        action = policy(st, seat)
        events = st.apply(seat, action)
        lines.append(
            {
                "v": st.version,
                "seat": seat,
                "action": action.to_json(),
                "events": events,
                "digest": digest(st),
                "sha": state_sha(st)[:12],
            }
        )
    lines.append({"result": st.result().to_json(), "final_sha": state_sha(st)})
    return lines


def dumps(lines: list[dict[str, Any]]) -> str:
    """The file text: one canonical JSON object per line."""
    return "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    )


def load(name: str) -> list[dict[str, Any]]:
    """The committed lines of golden file ``name``."""
    with (HERE / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def update() -> list[str]:
    """Rewrite every golden file; returns the names written."""
    for name, spec in GOLDENS.items():
        (HERE / name).write_text(dumps(generate(spec)), encoding="utf-8")
    return list(GOLDENS)
