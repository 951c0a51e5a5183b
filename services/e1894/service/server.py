"""The e1894 rules service: ``roundhouse.v1.GameRules`` for e1894.

A thin adapter: the generic servicer (:mod:`services.common.rules_server`)
drives the e1894 engine through the engine contract, and the typed messages
of ``proto/roundhouse/v1/e1894.proto`` map one to one onto the engine's
canonical JSON (:mod:`services.common.protomap`).

Run: ``python -m services.e1894.service.server`` (settings from ``ROUNDHOUSE_*``).
"""

from services.common.rules_server import main_for

e1894 = "e1894"


def main() -> None:
    main_for(e1894)


if __name__ == "__main__":
    main()
