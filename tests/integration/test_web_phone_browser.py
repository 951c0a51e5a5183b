"""The table page on a phone, in a real browser (Debian's chromium driven by Playwright,
against the session's stack): at 390 x 844 CSS pixels, for each title, the page never
scrolls sideways, the board fits the width, the zoom buttons enlarge it inside its own box,
and the move buttons sit in a bar fixed at the bottom of the screen, clickable without
scrolling. A screenshot per title goes to docs/screenshots/phone-<title>.png."""

from __future__ import annotations

import uuid

import pytest

from services.rules.titles import available_titles
from tests.integration.test_web_browser import (
    ARGS,
    BYPASS_CSP,
    CHROMIUM,
    PASSWORD,
    SHOTS,
    _click_a_move,
    _my_turn_or_over,
    _new_table,
)

pytestmark = pytest.mark.integration
playwright_api = pytest.importorskip("playwright.sync_api")

PHONE = {"width": 390, "height": 844}
"""A common phone's viewport in CSS pixels (iPhone 12 to 15)."""

TITLES = [t for t in ("railbarons", "transsib", "e1894") if t in available_titles()]


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(stack):
    return f"http://{stack.gateway_address}"


def _phone(browser, site: str):
    context = browser.new_context(
        viewport=PHONE,
        base_url=site,
        bypass_csp=BYPASS_CSP,
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto("/signup")
    page.fill("input[name=username]", f"phone-{uuid.uuid4().hex[:6]}")
    page.fill("input[name=password]", PASSWORD)
    page.click("button:text('Sign up')")
    page.wait_for_selector("#me")
    return context, page


def _page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def _assert_fits(page) -> None:
    """No sideways scroll of the page; the board box within the screen's width."""
    assert _page_width(page) <= PHONE["width"], _page_width(page)
    box = page.locator("#board").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    svg = page.locator("#board svg").bounding_box()
    assert svg["width"] <= box["width"], (svg, box)


def _assert_moves_in_reach(page) -> None:
    """The first move button lies wholly on the screen as the page is (top, not scrolled)."""
    page.evaluate("window.scrollTo(0, 0)")
    bar = page.locator("#moves").bounding_box()
    assert bar["y"] + bar["height"] <= PHONE["height"] + 0.5, bar
    assert bar["y"] >= PHONE["height"] * 0.5, bar  # at the bottom, below the board's start
    button = page.locator("#moves form.move button").first.bounding_box()
    assert button["x"] >= 0 and button["x"] + button["width"] <= PHONE["width"], button
    assert 0 <= button["y"] and button["y"] + button["height"] <= PHONE["height"], button


@pytest.mark.parametrize("title", TITLES)
def test_the_table_page_fits_a_phone(browser, site, title):
    context, page = _phone(browser, site)
    try:
        _new_table(page, title, 4, 3, policy="random")
        assert _my_turn_or_over(page)
        _assert_fits(page)
        _assert_moves_in_reach(page)
        page.screenshot(path=str(SHOTS / f"phone-{title}.png"))
        # zoomed in twice: the picture grows inside the board box, the page does not
        fitted = page.locator("#board svg").bounding_box()["width"]
        page.click("button[data-zoom='1']")
        page.click("button[data-zoom='1']")
        page.wait_for_selector("#board.zoom-3")
        zoomed = page.locator("#board svg").bounding_box()["width"]
        assert zoomed > 2.5 * fitted, (zoomed, fitted)
        assert _page_width(page) <= PHONE["width"]
        # the zoom stays through a move (the live part is swapped in), "fit" undoes it
        _click_a_move(page)
        assert _my_turn_or_over(page)
        page.wait_for_selector("#board.zoom-3")
        page.click("button[data-zoom='0']")
        page.wait_for_selector("#board:not(.zoom-2):not(.zoom-3):not(.zoom-4)")
        _assert_fits(page)
        _assert_moves_in_reach(page)
    finally:
        context.close()
