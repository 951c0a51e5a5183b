"""Print the gateway's OpenAPI document (the committed copy is
``docs/openapi.json``; a test checks it against the app):

    .venv/bin/python -m services.web.openapi > docs/openapi.json
"""

from __future__ import annotations

import json

from services.platform.settings import GatewaySettings
from services.web.app import create_app


def document() -> dict:
    return create_app(GatewaySettings()).openapi()


def main() -> None:
    print(json.dumps(document(), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
