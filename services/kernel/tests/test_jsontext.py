"""Client JSON with lone surrogates, deep nesting or huge echoed text is
refused with a reason at the unit level (issue 13, item 6); error messages
are bounded and always valid UTF-8."""

from __future__ import annotations

import grpc
import pytest

from services.kernel import jsontext
from services.kernel.engine import InvalidOptions, MalformedAction
from services.platform.grpc_errors import MAX_MESSAGE_CHARS, bounded, status
from services.rules.titles import available_titles, get_game

DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('"\\ud800"', "bad_unicode"),
        ('{"\\udfff": 1}', "bad_unicode"),
        ('[1, {"a": ["ok", "\\udc00x"]}]', "bad_unicode"),
        (DEEP, "json_too_deep"),
        ("[" * (jsontext.MAX_DEPTH + 1) + "]" * (jsontext.MAX_DEPTH + 1), "json_too_deep"),
        ("{", "bad_json"),
        (b"\xff", "bad_json"),
    ],
)
def test_refused_with_a_reason(text, reason):
    with pytest.raises(jsontext.BadJSONText) as err:
        jsontext.loads(text, "thing")
    assert err.value.reason == reason
    assert "thing" in str(err.value)
    str(err.value).encode("utf-8")  # the message itself is valid UTF-8


def test_accepted_up_to_the_limit():
    depth = jsontext.MAX_DEPTH
    assert jsontext.loads("[" * depth + "]" * depth) is not None
    assert jsontext.loads('{"a": "\\ud83d\\ude82"}') == {"a": "\U0001f682"}  # a valid pair


@pytest.mark.parametrize("title", available_titles())
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"type": "\\ud800"}', "bad_unicode"),
        ('{"type": "pass", "\\ud800": 1}', "bad_unicode"),
        (DEEP, "json_too_deep"),
        ('{"type": "pass", "x": ' + DEEP + "}", "json_too_deep"),
    ],
)
def test_engine_actions(title, text, reason):
    with pytest.raises(MalformedAction) as err:
        get_game(title).parse_action(text)
    assert err.value.code == reason


@pytest.mark.parametrize("title", available_titles())
@pytest.mark.parametrize("text", ['{"\\ud800": 1}', DEEP, '{"a": ' + DEEP + "}"])
def test_engine_options(title, text):
    with pytest.raises(InvalidOptions) as err:
        get_game(title).parse_options_json(text)
    assert "options_json" in str(err.value)


def test_error_messages_are_bounded_and_utf8():
    huge = "x" * 100_000 + "\ud800"
    text = bounded(huge)
    assert len(text) < MAX_MESSAGE_CHARS + 50
    assert text.endswith(f"({100_001 - MAX_MESSAGE_CHARS} more characters)")
    assert bounded("a\ud800b") == "a\\ud800b"
    st = status(grpc.StatusCode.INVALID_ARGUMENT, "r", huge, echoed=huge)
    assert len(st.details) < MAX_MESSAGE_CHARS + 50
    assert sum(len(v) for _, v in st.trailing_metadata) < 3 * MAX_MESSAGE_CHARS
