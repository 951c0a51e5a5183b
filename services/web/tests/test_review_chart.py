"""The replay page's review chart and costliest moves (services/web/review_chart.py)."""

from __future__ import annotations

import re

from services.web.review_chart import (
    LEGEND_BOX,
    LEGEND_CHAR,
    MAX_POINTS,
    PAD_RIGHT,
    PAD_TOP,
    WIDTH,
    costliest_moves,
    legend_layout,
    win_chance_svg,
)


def _entries(n: int, seats: int = 2) -> list[dict]:
    out = []
    for v in range(1, n + 1):
        seat = (v - 1) % seats
        chance = [0.5] * seats
        chance[seat] = 0.5 - 0.001 * v
        out.append(
            {
                "version": v,
                "seat": seat,
                "label": f"move<{v}>",
                "win_chance_before": [0.5] * seats,
                "win_chance_after": chance,
                "best_label": "Pass",
                "loss": 0.001 * v if v % 3 else 0.0,
            }
        )
    return out


def test_the_chart_has_a_line_per_seat_and_points_linking_to_the_replay():
    svg = win_chance_svg(_entries(10), ["ada", "<b>bob</b>"], "t1")
    assert svg.count('class="seat-line"') == 2
    assert svg.count('class="review-point"') == 20
    assert 'href="/tables/t1/replay?at=7"' in svg
    assert "<b>" not in svg and "&lt;b&gt;bob&lt;/b&gt;" in svg  # names are escaped
    # y runs from 100% at the top to 0% at the bottom
    ys = [float(y) for y in re.findall(r'cy="([\d.]+)"', svg)]
    assert max(ys) > min(ys)
    assert win_chance_svg([], ["ada"], "t1") == ""


def test_the_legend_sits_above_the_100_line_and_its_entries_do_not_overlap():
    """The legend covered the 100 % line (and long names the next entry): each entry is
    above the plot with room to spare, as wide as its name, within the chart's width."""
    names = ["greedy-bot", "a-rather-long-username-indeed", "x", "search-hard-bot"]
    svg = win_chance_svg(_entries(10, 4), names, "t1")
    boxes = [
        (float(x), float(y))
        for x, y in re.findall(r'class="legend" x="([\d.]+)" y="([\d.]+)"', svg)
    ]
    assert len(boxes) == 4
    assert all(y + LEGEND_BOX + 5 <= PAD_TOP for _, y in boxes)  # points have radius 2.5
    for many in (names, ["n" * 40] * 6):
        layout = legend_layout(many, len(many))
        for (x, _, name), (next_x, _, _) in zip(layout, layout[1:], strict=False):
            assert x + LEGEND_BOX + 4 + LEGEND_CHAR * len(name) <= next_x
        x, _, name = layout[-1]
        assert x + LEGEND_BOX + 4 + LEGEND_CHAR * len(name) <= WIDTH - PAD_RIGHT
    # the whole name stays in the line's tooltip when the legend cuts it
    cut = win_chance_svg(_entries(4, 2), ["n" * 40, "b"], "t1")
    assert "<title>" + "n" * 40 + "</title>" in cut


def test_a_long_game_keeps_the_points_few():
    svg = win_chance_svg(_entries(1000, 4), ["a", "b", "c", "d"], "t1")
    assert svg.count('class="review-point"') <= 4 * MAX_POINTS


def test_the_costliest_moves_are_the_largest_losses_in_words():
    rows = costliest_moves(_entries(12), ["ada", "bob"], n=2)
    assert [r["name"] for r in rows] == ["ada", "bob"]
    ada = rows[0]["moves"]
    assert [m["version"] for m in ada] == [11, 7]  # losses 0.011 and 0.007; 9 lost nothing
    assert ada[0]["text"] == (
        "move 11, ada: move<11>: the search preferred 'Pass', \u22121% win chance"
    )
