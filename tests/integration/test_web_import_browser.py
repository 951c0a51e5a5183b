"""The import page in a real browser (Debian's chromium driven by Playwright, as in
``test_web_browser.py``) against the session's stack: a signed-in person uploads each of the
four shared recorded 1894 games as a file, sees the progress, then the new table with the
recorded players and scores, follows the link to its replay and steps through it on the board;
a pasted recording our rules refuse shows the action and the rule, and no table appears. The
page with a result is saved as docs/screenshots/page-e1894-import.png."""

from __future__ import annotations

import copy
import json
import re
import uuid
from pathlib import Path

import pytest

from tests.integration.test_web_browser import SHOTS, _sign_up, browser, site  # noqa: F401

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "e1894"
GAMES = sorted(FIXTURES.glob("*.json"))


def test_a_person_imports_the_four_recorded_games_and_replays_them(browser, site):  # noqa: F811
    context, page = _sign_up(browser, site, f"imp-{uuid.uuid4().hex[:6]}")
    page.click("a[href='/imports/e1894']")
    page.wait_for_url(re.compile(r"/imports/e1894$"))
    for path in GAMES:
        recorded = json.loads(path.read_text())
        page.goto("/imports/e1894")
        page.set_input_files("#import-file", str(path))
        page.wait_for_function(
            "document.getElementById('import-status').textContent.endsWith('ready')"
        )
        assert page.input_value("#import-text") == path.read_text()
        page.click("#import-submit")
        page.wait_for_selector("#import-done", timeout=60_000)
        done = page.locator("#import-done").inner_text()
        names = {p["id"]: p["name"] for p in recorded["players"]}
        for pid, score in recorded["result"].items():
            assert f"{names[int(pid)]} {score}" in done
        assert page.locator("#import-progress").is_hidden()
        if path == GAMES[-1]:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "page-e1894-import.png"), full_page=True)
        page.click("#import-replay")
        page.wait_for_url(re.compile(r"/tables/[^/]+/replay"))
        assert page.locator("svg").count() > 0
        for name in names.values():
            assert name in page.content()
    # a refused recording: the action and the rule, nothing stored
    bad = copy.deepcopy(json.loads(GAMES[0].read_text()))
    run = next(a for a in bad["actions"] if a["type"] == "run_routes" and a["routes"])
    run["routes"][0]["revenue"] += 10
    page.goto("/")
    tables_before = page.locator("table.tables tr").count()
    page.goto("/imports/e1894")
    page.fill("#import-text", json.dumps(bad))
    page.click("#import-submit")
    page.wait_for_selector("#import-refused", timeout=60_000)
    refused = page.locator("#import-refused").inner_text()
    assert f"action {run['id']}" in refused and "the record says" in refused
    assert "Nothing was stored" in refused
    page.goto("/")
    assert page.locator("table.tables tr").count() == tables_before
    context.close()
