"""The transsib rules service: ``roundhouse.v1.GameRules`` for transsib.

A thin adapter: the generic servicer (:mod:`services.rules.servicer`)
drives the transsib engine through the engine contract, and the typed messages
of ``proto/roundhouse/v1/transsib.proto`` map one to one onto the engine's
canonical JSON (:mod:`services.rules.protomap`).

Run: ``python -m services.transsib.service.server`` (settings from ``ROUNDHOUSE_*``).
"""

from services.cli.rules import main_for

TITLE = "transsib"


def main() -> None:
    main_for(TITLE)


if __name__ == "__main__":
    main()
