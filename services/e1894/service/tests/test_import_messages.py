"""The import/export helpers fit the service messages of ``e1894.proto``
(``ImportGameResponse``, ``ExportGameRequest``/``ExportGameResponse``) for the lead's
ImportGame/ExportGame calls."""

from __future__ import annotations

import json

from google.protobuf import json_format

from roundhouse.v1 import e1894_pb2
from services.e1894.engine import GAME
from services.e1894.engine.interchange.api import export_response, import_response
from services.e1894.engine.tests.flow_helpers import MARKET, fixture, fixture_copy


def test_import_response_parses_and_replays():
    resp = import_response(json.dumps(fixture(MARKET)))
    msg = json_format.ParseDict(resp, e1894_pb2.ImportGameResponse())
    assert msg.ok and msg.num_players == 3 and msg.game_end_reason == "stock_market"
    assert dict(msg.result) == {str(k): v for k, v in fixture(MARKET)["result"].items()}
    back = json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    log = []
    for entry in back["log"]:
        ((kind, body),) = entry["action"].items()
        log.append((entry.get("seat", 0), {"type": kind, **body}))
    st = GAME.replay(msg.num_players, int(msg.seed), json.loads(msg.options_json), log)
    assert st.result().end_reason == "stock_market"
    export = json_format.ParseDict(
        {
            "num_players": msg.num_players,
            "seed": msg.seed,
            "options_json": msg.options_json,
            "log": back["log"],
            "player_ids": back["player_ids"],
        },
        e1894_pb2.ExportGameRequest(),
    )
    out = export_response(
        json_format.MessageToDict(
            export, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
    )
    json_format.ParseDict(out, e1894_pb2.ExportGameResponse())
    again = import_response(out["game_json"])
    assert again["result"] == resp["result"]


def test_import_response_reports_the_divergence():
    data = fixture_copy(MARKET)
    next(a for a in data["actions"] if a["id"] == 1)["price"] = 51
    resp = import_response(json.dumps(data))
    msg = json_format.ParseDict(resp, e1894_pb2.ImportGameResponse())
    assert not msg.ok and msg.divergence.action_id == 1
    assert msg.divergence.code == "bid_not_multiple_of_5"
    assert not import_response("not json")["ok"]
