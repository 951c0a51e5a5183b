"""A stand-in reference engine for the differential tests: ``fake_reference.py MODE FILE``.

It reads the 18xx.games JSON ``FILE`` and answers by the reference-command contract of
:mod:`services.e1894.differential`, as ``MODE`` says:

* ``accept``: ``{"ok": true, "result": <the file's result>, "finished": true}``, exit 0;
* ``different``: the same with one point more for the first player, exit 0;
* ``refuse-at-N``: ``{"ok": false, "action_index": N, "action_id": <its id>, "error": ...}``,
  exit 1 (the message names the action's type);
* ``refuse-by-id-N``: the same with only ``action_id`` = N (``action_index`` null);
* ``token-used-at-N``: like ``refuse-at-N`` with the reference's message of its home-token
  defect, ``Engine::GameError: Token is already used``;
* ``crash``: a traceback on stderr and no JSON line, exit 3.
"""

from __future__ import annotations

import json
import sys


def main(mode: str, path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    result = {str(k): v for k, v in (data.get("result") or {}).items()}
    if mode == "accept":
        print(json.dumps({"ok": True, "result": result, "finished": True}))
        return 0
    if mode == "different":
        first = next(iter(result))
        result[first] += 1
        print("some log line")
        print(json.dumps({"ok": True, "result": result, "finished": True}))
        return 0
    if mode.startswith("refuse-at-"):
        index = int(mode.removeprefix("refuse-at-"))
        action = data["actions"][index]
        line = {
            "ok": False,
            "action_index": index,
            "action_id": action["id"],
            "error": f"GameError: cannot process action {action['type']}",
        }
        print(json.dumps(line))
        return 1
    if mode.startswith("token-used-at-"):
        index = int(mode.removeprefix("token-used-at-"))
        error = "Engine::GameError: Token is already used"
        print(json.dumps({"ok": False, "action_index": index, "action_id": None, "error": error}))
        return 1
    if mode.startswith("refuse-by-id-"):
        action_id = int(mode.removeprefix("refuse-by-id-"))
        print(json.dumps({"ok": False, "action_index": None, "action_id": action_id, "error": "x"}))
        return 1
    if mode == "crash":
        print("Traceback (most recent call last):\nRuntimeError: boom", file=sys.stderr)
        return 3
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
