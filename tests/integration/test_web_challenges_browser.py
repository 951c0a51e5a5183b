"""Invitations in a real browser (Debian's chromium driven by Playwright, as in
``test_web_browser.py``) against the session's stack: two people signed in, each in a
browser context of their own. A creates a table and invites B from the challenges page; B
opens his challenges page, sees the invitation and clicks Accept, lands on the table page
and holds the seat; A's page no longer lists it as pending."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.integration.test_web_browser import (  # noqa: F401
    _new_table,
    _sign_up,
    browser,
    site,
)

pytestmark = pytest.mark.integration


def test_a_invites_b_and_b_accepts_on_the_page(browser, site):  # noqa: F811
    tag = uuid.uuid4().hex[:6]
    a_name, b_name = f"inv-a-{tag}", f"inv-b-{tag}"
    a_context, a_page = _sign_up(browser, site, a_name)
    b_context, b_page = _sign_up(browser, site, b_name)
    try:
        table_id = _new_table(a_page, "railbarons", 3, 0)
        a_page.goto("/challenges")
        a_page.fill("#invite input[name=table_id]", table_id)
        a_page.fill("#invite input[name=seat]", "1")
        a_page.fill("#invite input[name=invitee]", b_name)
        a_page.click("#invite button[type=submit]")
        a_page.locator("#made").wait_for()
        assert b_name in a_page.locator("#made").inner_text()
        assert a_page.locator("#sent tr.challenge").count() == 1
        b_page.goto("/challenges")
        row = b_page.locator("#received tr.challenge")
        assert row.count() == 1 and a_name in row.inner_text()
        row.locator("button.accept").click()
        b_page.wait_for_url(re.compile(rf"/tables/{table_id}$"))
        seats = httpx.get(f"{site}/api/tables/{table_id}", timeout=30).json()["seats"]
        assert seats[1]["account"] == b_name
        a_page.goto("/challenges")
        assert a_page.locator("#sent tr.challenge").count() == 0
    finally:
        a_context.close()
        b_context.close()
