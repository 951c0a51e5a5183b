"""The e1894 rules service: ``roundhouse.v1.GameRules`` for e1894.

A thin adapter: the generic servicer (:mod:`services.rules.servicer`)
drives the e1894 engine through the engine contract, and the typed messages
of ``proto/roundhouse/v1/e1894.proto`` map one to one onto the engine's
canonical JSON (:mod:`services.rules.protomap`).

Beside ``GameRules`` it serves ``roundhouse.v1.e1894.Interchange`` (18xx.games
import and export, :mod:`services.e1894.service.interchange`): the title declares it in
:data:`EXTRAS`, and the generic entry (:mod:`services.cli.rules`) adds it.

Run: ``python -m services.e1894.service.server`` (settings from ``ROUNDHOUSE_*``).
"""

from services.cli.rules import main_for
from services.e1894.service.interchange import add_interchange

TITLE = "e1894"

EXTRAS = (add_interchange,)
"""The services this title adds beside GameRules."""


def main() -> None:
    main_for(TITLE)


if __name__ == "__main__":
    main()
