"""Table chat in a real browser (Debian's chromium driven by Playwright, as in
``test_web_browser.py``) against the session's stack: two signed-in people, A and B, sit at a
2-player table; A writes in the chat box and B's page shows it live, without a reload, and a
``<script>`` message shows as text and runs nothing; a third person, who only watches, has the
spectators' box and never sees the players' messages, and what they write never reaches the
players while the game runs."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.integration.test_web_browser import (  # noqa: F401
    _new_table,
    _sign_up,
    browser,
    site,
)

pytestmark = pytest.mark.integration

SCRIPT = "<script>window.chatPwned = 1</script>"


def _say(page, text: str) -> None:
    page.fill("#chat-form input[name=text]", text)
    page.click("#chat-form button[type=submit]")
    page.locator("#chat .chatline .text", has_text=text).first.wait_for()


def test_two_people_chat_live_and_a_spectator_reads_apart(browser, site):  # noqa: F811
    tag = uuid.uuid4().hex[:6]
    a_context, a = _sign_up(browser, site, f"chat-a-{tag}")
    b_context, b = _sign_up(browser, site, f"chat-b-{tag}")
    c_context, c = _sign_up(browser, site, f"chat-c-{tag}")
    try:
        table_id = _new_table(a, "railbarons", 2, 0)
        b.goto(f"/tables/{table_id}")
        b.click("button:text('Join seat 1')")
        b.wait_for_url(re.compile(rf"/tables/{table_id}$"))
        a.goto(f"/tables/{table_id}")
        a.click("button:text('Start the game')")
        a.wait_for_url(re.compile(rf"/tables/{table_id}$"))
        for page in (a, b, c):
            page.goto(f"/tables/{table_id}")
            page.locator("#chat-form").wait_for()
        assert a.locator("#chat-form input[name=channel]").input_value() == "players"
        assert c.locator("#chat-form input[name=channel]").input_value() == "spectators"
        _say(a, "good luck, have fun")
        # B's page gets it live (Server-Sent Events, then the box swapped in again)
        b.locator("#chat .chatline .text", has_text="good luck, have fun").wait_for()
        _say(a, SCRIPT)
        line = b.locator("#chat .chatline .text", has_text="window.chatPwned").first
        line.wait_for()
        assert line.inner_text() == SCRIPT
        assert b.evaluate("typeof window.chatPwned") == "undefined"
        # the spectator writes in the spectators' channel; the players never see it, nor
        # does the spectator see theirs (the box is read again after the spectator's send)
        _say(c, "watching from the rail")
        texts = c.locator("#chat .chatline .text").all_inner_texts()
        assert texts == ["watching from the rail"]
        b.reload()
        b.locator("#chat-form").wait_for()
        seen = b.locator("#chat .chatline .text").all_inner_texts()
        assert seen == ["good luck, have fun", SCRIPT]
    finally:
        for context in (a_context, b_context, c_context):
            context.close()
