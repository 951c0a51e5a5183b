"""Pages name things as players know them (issue 32, item 7): over a game played through
the table pages, at every position, the visible text of each seat's table page, of a
spectator's and the live part answered to each move never shows an internal code
(``T-BLK-2``, ``E-VAR-1``, ``loco_or_factory``): only the names and effects from the rules
data. Markup (attributes such as ``data-space``, the move forms' hidden JSON) may carry
codes; text may not."""

from __future__ import annotations

import html
import random
import re
from html.parser import HTMLParser

import pytest

from services.web.tests.test_pages import _browser, _forms, _signed_up

CODE = re.compile(
    r"\b[A-Z]{1,3}(?:-[A-Z0-9]+)+\b"  # space / tile ids: T-BLK-2, E-VAR-1, E-HIRE, L-2
    r"|\b[a-z0-9]+(?:_[a-z0-9]+)+\b"  # snake_case names: loco_or_factory, start_bonus
)
"""What an internal code looks like in text (a player-facing name never has this shape)."""

MOVES = {"transsib": 60, "railbarons": 40, "e1894": 40}
"""How many moves each game is played for (all positions on the way are checked)."""


class _Text(HTMLParser):
    """The text a reader sees: character data outside ``<script>``, ``<style>`` and
    ``<head>`` (SVG ``<text>`` and ``<title>`` included)."""

    HIDDEN = frozenset({"script", "style", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return " ".join(" ".join(parser.parts).split())


def codes_in(page: str) -> list[str]:
    """The internal-code-shaped words of ``page``'s visible text, each with its context."""
    text = visible_text(page)
    return [text[max(0, m.start() - 40) : m.end() + 20] for m in CODE.finditer(text)]


def test_the_code_pattern_catches_codes_and_spares_names():
    shown = visible_text(
        '<p data-space="T-BLK-2">Black track (3 black track steps)</p>'
        "<svg><text>Engineer 7: carry out an occupied space again</text></svg>"
        '<input type="hidden" name="action" value="{&#34;space&#34;:&#34;E-VAR-1&#34;}">'
    )
    assert not CODE.search(shown), shown
    for leak in ("T-BLK-2", "E-VAR-1", "loco_or_factory", "E-HIRE", "start_bonus"):
        assert codes_in(f"<p>Place 2 workers on {leak}</p>"), leak


@pytest.mark.parametrize("title", list(MOVES))
def test_no_internal_code_in_the_visible_text_over_a_game(gateway_env, title):
    rng = random.Random(32)

    async def body(env):
        async with (
            _signed_up(env, "nina") as (first, first_csrf),
            _signed_up(env, "omar") as (second, second_csrf),
            _signed_up(env, "pia") as (third, third_csrf),
            _browser(env) as (spectator, _),
        ):
            r = await first.post(
                "/tables",
                data={
                    "csrf": first_csrf,
                    "title": title,
                    "num_players": "3",
                    "bots": "0",
                    "play": "on",
                },
            )
            assert r.status_code == 303, r.text
            table_id = r.headers["location"].rsplit("/", 1)[1]
            people = [first, second, third]
            for seat, (person, csrf) in enumerate([(second, second_csrf), (third, third_csrf)], 1):
                j = await person.post(f"/tables/{table_id}/seats/{seat}/join", data={"csrf": csrf})
                assert j.status_code == 303, j.text
            r = await first.post(f"/tables/{table_id}/start", data={"csrf": first_csrf})
            assert r.status_code == 303, r.text
            shown = visible_text((await spectator.get(f"/tables/{table_id}")).text)
            assert "Move 0" in shown and len(shown) > 300  # the board's and seats' text read
            played = 0
            for _ in range(MOVES[title]):
                pages = [await p.get(f"/tables/{table_id}") for p in people]
                watched = await spectator.get(f"/tables/{table_id}")
                for page in (*pages, watched):
                    assert page.status_code == 200
                    assert codes_in(page.text) == [], codes_in(page.text)
                movers = [
                    (p, page) for p, page in zip(people, pages, strict=True) if _forms(page.text)
                ]
                if not movers:  # the end
                    break
                person, page = movers[0]
                forms = [f for f in _forms(page.text) if "field" not in f] or _forms(page.text)
                form = forms[rng.randrange(len(forms))]
                form["action"] = html.unescape(form["action"])
                if "field" in form:  # a ranged move: its lowest value
                    form["value"] = re.search(r'name="value" min="(-?\d+)"', page.text).group(1)
                r = await person.post(f"/tables/{table_id}/move", data=form)
                assert r.status_code == 200 and 'id="move-error"' not in r.text, r.text
                assert codes_in(r.text) == [], codes_in(r.text)
                played += 1
            assert played >= 10

    gateway_env(body, titles=(title,))
