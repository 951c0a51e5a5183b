"""The web pages in a real browser: Debian's chromium driven by Playwright (the Makefile's
``browser`` step installs it; no browser download), against the session's stack (the real
processes, the gateway included). A person signs up, creates a Chicago Express table with
three bots, plays the whole game by clicking and sees the final standings while a spectator
in a second browser context watches it update live; a Russian Railroads and a 1894 table
render and a clicked move is applied; a tournament page shows the standings change as its
tables finish. Each title's table page is saved mid-game under docs/screenshots/."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import pytest

from services.rules.titles import available_titles

pytestmark = pytest.mark.integration
playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PASSWORD = "browser test password"
VIEWPORT = {"width": 1600, "height": 1000}

BYPASS_CSP = True
"""The pages' Content-Security-Policy forbids eval, and Playwright's ``wait_for_function``
evaluates its predicate with eval in the page: the tests' own probes need the bypass. The
headers themselves are checked in services/web/tests/test_oauth_security.py."""


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(stack):
    return f"http://{stack.gateway_address}"


def _sign_up(browser, site: str, name: str):
    context = browser.new_context(viewport=VIEWPORT, base_url=site, bypass_csp=BYPASS_CSP)
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto("/signup")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button:text('Sign up')")
    page.wait_for_url(re.compile(r"/$"))
    assert page.locator("#me").inner_text() == name
    return context, page


def _new_table(page, title: str, players: int, bots: int, policy: str = "random") -> str:
    page.goto("/")
    page.select_option("#new-table select[name=title]", title)
    page.fill("#new-table input[name=num_players]", str(players))
    page.fill("#new-table input[name=bots]", str(bots))
    page.select_option("#new-table select[name=policy]", policy)
    page.click("#new-table button[type=submit]")
    page.wait_for_url(re.compile(r"/tables/[^/]+$"))
    return page.url.rsplit("/", 1)[1]


def _version(page) -> int:
    return int(page.locator("#live").get_attribute("data-version"))


def _my_turn_or_over(page) -> bool:
    """Waits until the page offers a move (True) or shows the game over (False)."""
    page.wait_for_function(
        "document.querySelector('#moves form.move button')"
        " || document.querySelector('#live[data-finished=yes]')",
        timeout=120_000,
    )
    return page.locator("#live[data-finished=yes]").count() == 0


def _click_a_move(page) -> None:
    """Clicks the first listed move and waits for the page to answer (a new version, or the
    stale-page notice); a listed move refused is a failure."""
    before = _version(page)
    page.locator("#moves form.move button").first.click()
    page.wait_for_function(
        f"Number(document.querySelector('#live').dataset.version) > {before}"
        " || document.querySelector('#move-error') || document.querySelector('.notice')"
    )
    assert page.locator("#move-error").count() == 0, page.locator("#move-error").inner_text()


def _shot(page, title: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"page-{title}.png"), full_page=True)


@pytest.mark.skipif("railbarons" not in available_titles(), reason="needs Chicago Express")
def test_a_person_plays_chicago_express_to_the_end_while_a_spectator_watches(browser, site):
    context, page = _sign_up(browser, site, f"web-{uuid.uuid4().hex[:6]}")
    watcher = browser.new_context(viewport=VIEWPORT, base_url=site, bypass_csp=BYPASS_CSP)
    watcher.set_default_timeout(60_000)
    try:
        table_id = _new_table(page, "railbarons", 4, 3)
        spectator = watcher.new_page()
        spectator.goto(f"/tables/{table_id}")
        assert spectator.locator("#moves").count() == 0  # spectators get no move forms
        seen = [_version(spectator)]
        clicks = 0
        while _my_turn_or_over(page):
            if clicks == 12:
                _shot(page, "railbarons")
            _click_a_move(page)
            clicks += 1
            seen.append(_version(spectator))  # the spectator's page, never reloaded
        assert clicks > 10
        page.locator("#standings").wait_for()
        rows = page.locator("#standings tr").count()
        assert rows == 5  # a header and the four seats
        # the spectator's page followed the game live to its end, without a reload
        spectator.wait_for_selector("#live[data-finished=yes]")
        spectator.locator("#standings").wait_for()
        assert _version(spectator) == _version(page)
        assert len(set(seen)) > 5, seen
        # the finished game, replayed with the slider
        spectator.goto(f"/tables/{table_id}/replay")
        final = int(spectator.locator("#replay").get_attribute("data-at"))
        assert final == _version(page)
        spectator.locator("#slider").fill("3")
        spectator.wait_for_selector("#replay[data-at='3']")
        assert "After move 3 of" in spectator.locator("#replay-at").inner_text()
    finally:
        watcher.close()
        context.close()


@pytest.mark.parametrize("title,moves", [("transsib", 6), ("e1894", 8)])
def test_a_table_renders_and_a_clicked_move_is_applied(browser, site, title, moves):
    if title not in available_titles():
        pytest.skip(f"needs {title}")
    context, page = _sign_up(browser, site, f"web-{uuid.uuid4().hex[:6]}")
    try:
        _new_table(page, title, 4, 3, policy="random")
        assert page.locator(".board svg").count() == 1
        for _ in range(moves):  # into the game a little, for the screenshot
            assert _my_turn_or_over(page)
            label = page.locator("#moves form.move button").first.inner_text()
            before = _version(page)
            _click_a_move(page)
            if _version(page) > before:  # applied: it heads the move log (or bots followed)
                assert page.locator("#log li").count() >= 1
                assert label.split(" (")[0] in page.locator("#log").inner_text()
        _my_turn_or_over(page)
        _shot(page, title)
    finally:
        context.close()


@pytest.mark.skipif("railbarons" not in available_titles(), reason="needs Chicago Express")
def test_tournament_standings_change_as_its_tables_finish(browser, site):
    context, page = _sign_up(browser, site, f"org-{uuid.uuid4().hex[:6]}")
    try:
        tag = uuid.uuid4().hex[:4]
        bots = [f"tb{tag}-{i}" for i in range(6)]
        page.goto("/account")
        for name in bots:
            page.fill("form[action='/account/bots'] input[name=username]", name)
            page.select_option("form[action='/account/bots'] select[name=policy]", "random")
            page.click("form[action='/account/bots'] button")
            page.wait_for_selector(f"td:text-is('{name}')")
        page.goto("/tournaments")
        # a user string written to run a script: shown as text, never run
        name = f"<script>window.pwned = 1</script> Cup {tag}"
        page.fill("#new-tournament input[name=name]", name)
        page.select_option("#new-tournament select[name=title]", "railbarons")
        page.fill("#new-tournament input[name=table_size]", "3")
        page.fill("#new-tournament input[name=rounds]", "1")
        page.click("#new-tournament button")
        page.wait_for_url(re.compile(r"/tournaments/[^/]+$"))
        assert name in page.locator("h1").inner_text()
        assert page.evaluate("window.pwned") is None
        for name in bots:
            page.fill("input[name=account]", name)
            page.click("button:text('Register bot')")
            page.wait_for_selector(f"#tstandings:has-text('{name}')")
        page.click("button:text('Start')")
        page.wait_for_selector("#tstatus:text-is('running')")
        pairings = page.locator(".pairings tr")
        pairings.first.wait_for()
        assert pairings.count() == 2  # two tables of three
        seen = set()
        page.wait_for_function(
            "(() => { const s = document.querySelector('#tstandings');"
            " window.__seen = window.__seen || new Set(); if (s) window.__seen.add(s.innerText);"
            " return document.querySelector('#tstatus').innerText === 'finished'; })()",
            timeout=240_000,
            polling=200,
        )
        seen = set(page.evaluate("Array.from(window.__seen)"))
        final = page.locator("#tstandings").inner_text()
        assert len(seen) >= 2, seen  # the standings changed while the page was open
        games = [int(c) for c in re.findall(r"\t(\d+)\t\d+\s*$", final, re.M)]
        assert games == [1] * 6, final
        points = re.findall(r"^\d+\t[^\t]+\t([^\t]+)\t\d+\t\d+\s*$", final, re.M)
        assert len(points) == 6 and not any(p.endswith(".0") for p in points), final  # 14, not 14.0
        # the rated games reach the title's leaderboard page
        for _ in range(60):  # the ratings are written as the results come in
            page.goto("/ratings/railbarons")
            text = page.locator("#ratings").inner_text()
            if all(b in text for b in bots):
                break
            page.wait_for_timeout(500)
        assert all(b in text for b in bots), text
    finally:
        context.close()
