"""The railbarons rules service: ``roundhouse.v1.GameRules`` for railbarons.

A thin adapter: the generic servicer (:mod:`services.rules.servicer`)
drives the railbarons engine through the engine contract, and the typed messages
of ``proto/roundhouse/v1/railbarons.proto`` map one to one onto the engine's
canonical JSON (:mod:`services.rules.protomap`).

Run: ``python -m services.railbarons.service.server`` (settings from ``ROUNDHOUSE_*``).
"""

from services.cli.rules import main_for

TITLE = "railbarons"


def main() -> None:
    main_for(TITLE)


if __name__ == "__main__":
    main()
