"""``python -m services.railbarons.engine.tests.golden --update``: rewrite the golden files
(only after an intended behaviour change; review the diff before committing)."""

from __future__ import annotations

import sys

from services.railbarons.engine.tests.golden import update


def main(argv: list[str]) -> int:
    if argv != ["--update"]:
        print(__doc__)
        return 2
    for name in update():
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
