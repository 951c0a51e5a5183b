"""Golden playthroughs: one generic generator and checker for every title, in the manner of
OpenSpiel's ``generate_playthrough``.

A golden is a whole seeded game played by a seeded policy through the engine contract
(:class:`services.kernel.engine.Game`), written as text under
``tests/goldens/<title>/<players>p-seed<seed>.txt``:

* a header: title, players, seed, policy, rules version and options, then the spectators'
  view at the start in full (canonical JSON);
* one line per step: its number, the seat that moves (a random active seat when several may),
  digests (SHA-256, 12 hex digits) of that seat's view, of the spectators' view and of the
  canonical JSON of every legal entry, the legal entries' labels (``Game.describe_all``; the
  first :data:`SHOWN_LABELS`, then how many more), the action taken as canonical JSON, its
  label, and a digest of the events ``apply`` returned;
* the result and the spectators' view at the end in full.

Views are digested, not printed, per step so that a 1,400-move 1894 game stays a few hundred
kilobytes; a view that changes shows as the first step whose digest differs, and the step's
labels and action say where the game was. ``tests/goldens/test_goldens.py`` regenerates
every golden and names the first step that differs.

Regenerate (after a rule changed on purpose; say which in the commit)::

    .venv/bin/python -m tests.goldens.generate            # every title
    .venv/bin/python -m tests.goldens.generate e1894      # one title
    .venv/bin/python -m tests.goldens.generate --check    # compare only; exit 1 on a change
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from pathlib import Path

from services.kernel.engine import JSON, canonical_json
from services.kernel.playout import random_policy
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game

ROOT = Path(__file__).resolve().parent

SHOWN_LABELS = 4
"""Labels of legal entries printed per step (the digest covers all of them)."""

MAX_STEPS = 20_000
"""A game longer than this is a bug (random 1894 games take ~1,400 moves)."""


@dataclasses.dataclass(frozen=True)
class Golden:
    """One golden playthrough: ``title`` with ``players`` seats from ``seed``, played by
    ``policy`` (``random``: :func:`services.kernel.playout.random_policy`) seeded with
    ``seed``."""

    title: str
    players: int
    seed: int
    policy: str = "random"

    @property
    def path(self) -> Path:
        return ROOT / self.title / f"{self.players}p-seed{self.seed}.txt"


GOLDENS: tuple[Golden, ...] = (
    Golden("railbarons", 3, 1),
    Golden("railbarons", 5, 2),
    Golden("transsib", 2, 1),
    Golden("transsib", 4, 2),
    Golden("e1894", 3, 1),
    Golden("e1894", 4, 2),
)
"""The committed goldens: two per title, at different player counts."""


def digest(value: JSON) -> str:
    """The first 12 hex digits of the SHA-256 of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:12]


def playthrough(golden: Golden) -> str:
    """The text of ``golden``'s playthrough (see the module docstring).

    Raises:
        KeyError: unknown policy. RuntimeError: the game did not end in ``MAX_STEPS``.
    """
    if golden.policy != "random":
        raise KeyError(f"unknown golden policy {golden.policy!r}; known: random")
    game = get_game(golden.title)
    state = game.new_state(golden.players, golden.seed)
    rng = SeededRandom(golden.seed)
    choose = random_policy(rng)
    options = game.parse_options({}).model_dump(mode="json")
    lines = [
        f"# golden playthrough of {golden.title}: {golden.players} players, seed {golden.seed}, "
        f"policy {golden.policy}; regenerate: .venv/bin/python -m tests.goldens.generate",
        f"rules_version {game.rules_version}",
        f"options {canonical_json(options)}",
        f"start public_view {canonical_json(state.view(None))}",
        "# step seat | view public legal | labels | action | label | events",
    ]
    step = 0
    while not state.is_terminal():
        if step >= MAX_STEPS:
            raise RuntimeError(f"{golden} did not end within {MAX_STEPS} steps")
        active = state.active_seats()
        seat = active[0] if len(active) == 1 else active[rng.randbelow(len(active))]
        legal = state.legal_actions(seat)
        labels = game.describe_all(state, legal)
        shown = " ; ".join(labels[:SHOWN_LABELS])
        if len(labels) > SHOWN_LABELS:
            shown += f" ; (+{len(labels) - SHOWN_LABELS} more)"
        action = choose(state, seat)
        label = game.describe(state, action)
        head = (
            f"{step:04d} s{seat} | v={digest(state.view(seat))} p={digest(state.view(None))} "
            f"l{len(legal)}={digest([e.to_json() for e in legal])}"
        )
        events = state.apply(seat, action)
        action_text = canonical_json(action.to_json())
        lines.append(f"{head} | {shown} | {action_text} | {label} | e={digest(events)}")
        step += 1
    lines.append(f"result {canonical_json(state.result().to_json())}")
    lines.append(f"end public_view {canonical_json(state.view(None))}")
    return "\n".join(lines) + "\n"


def first_difference(expected: str, actual: str) -> str:
    """Where two playthrough texts part: the first differing line of each, with its step
    (``""`` when they are equal)."""
    if expected == actual:
        return ""
    old, new = expected.splitlines(), actual.splitlines()
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return f"line {i + 1} differs:\n- {a[:600]}\n+ {b[:600]}"
    short, long = sorted((len(old), len(new)))
    return f"one text ends at line {short}; the other has {long}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("titles", nargs="*", help="titles to regenerate (default: all)")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a change")
    args = parser.parse_args(argv)
    changed = 0
    for golden in GOLDENS:
        if args.titles and golden.title not in args.titles:
            continue
        text = playthrough(golden)
        old = golden.path.read_text() if golden.path.exists() else ""
        where = first_difference(old, text)
        if not where:
            print(f"unchanged {golden.path.relative_to(ROOT.parents[1])}")
            continue
        changed += 1
        print(f"{'differs' if args.check else 'wrote'} {golden.path.relative_to(ROOT.parents[1])}")
        print(where if old else "(new)")
        if not args.check:
            golden.path.parent.mkdir(parents=True, exist_ok=True)
            golden.path.write_text(text)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
