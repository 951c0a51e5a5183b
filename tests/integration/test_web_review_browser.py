"""The game review on the replay page in a real browser (Debian's chromium driven by
Playwright, as in ``test_web_browser.py``) against the session's stack, with its review worker:
a person plays a 2-player Chicago Express game against a greedy bot to its end over the API
(the first listed move each turn), asks for the review, the stack's review worker computes it,
and the replay page shows a line per seat of the win chance chart and the costliest moves;
clicking a point of the chart moves the slider to that move. The page is saved as
docs/screenshots/page-review.png."""

from __future__ import annotations

import re
import time
import uuid

import httpx
import pytest

from tests.integration.test_web_browser import (  # noqa: F401
    PASSWORD,
    SHOTS,
    _new_table,
    _sign_up,
    browser,
    site,
)

pytestmark = pytest.mark.integration


def _wait(check, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(1.0)
    raise AssertionError(f"{what} not within {timeout_s} s")


def test_the_replay_page_shows_the_review_and_its_points_move_the_slider(browser, site):  # noqa: F811
    name = f"rev-{uuid.uuid4().hex[:6]}"
    context, page = _sign_up(browser, site, name)
    try:
        table_id = _new_table(page, "railbarons", 2, 1, "greedy")
        http = httpx.Client(base_url=site, timeout=60)
        r = http.post(
            "/api/tokens",
            json={"username": name, "password": PASSWORD, "scopes": ["play", "tables:write"]},
        )
        assert r.status_code in (200, 201), r.text
        auth = {"Authorization": f"Bearer {r.json()['token']}"}
        if http.get(f"/api/tables/{table_id}").json()["status"] == "open":
            r = http.post(f"/api/tables/{table_id}/start", headers=auth)
            assert r.status_code == 200, r.text
        deadline = time.monotonic() + 600
        while http.get(f"/api/tables/{table_id}").json()["status"] != "finished":
            assert time.monotonic() < deadline, "the game did not end in 600 s"
            moves = http.get(f"/api/tables/{table_id}/moves", headers=auth)
            if moves.status_code != 200 or not moves.json()["moves"]:
                time.sleep(0.2)  # the bot's turn
                continue
            listed = moves.json()
            http.post(
                f"/api/tables/{table_id}/moves",
                json={
                    "action": listed["moves"][0]["action"],
                    "expected_version": listed["version"],
                    "idempotency_key": f"k{listed['version']}",
                },
                headers=auth,
            )
        r = http.post(f"/api/tables/{table_id}/review", headers=auth)
        assert r.status_code == 202, r.text
        total = r.json()["progress"]["total"]
        assert total > 10
        done = _wait(
            lambda: (lambda j: j if j["state"] in ("done", "failed") else None)(
                http.get(f"/api/tables/{table_id}/review").json()
            ),
            900,
            "the review",
        )
        assert done["state"] == "done", done
        assert len(done["entries"]) == total
        page.goto(f"/tables/{table_id}/replay")
        page.locator("#review-chart").wait_for()
        assert page.locator("#review-chart polyline.seat-line").count() == 2
        assert page.locator("ol.costliest li").count() >= 1
        assert "the search preferred" in page.locator("#review").inner_text()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "page-review.png"), full_page=True)
        point = page.locator("#review-chart a.review-point").nth(10)
        at = int(point.get_attribute("data-at"))
        point.locator("circle").click()
        page.wait_for_url(re.compile(rf"/replay\?at={at}$"))
        assert int(page.locator("#replay").get_attribute("data-at")) == at
        assert page.locator("#slider").input_value() == str(at)
        assert f"After move {at} of" in page.locator("#replay-at").inner_text()
    finally:
        context.close()
