"""Scoring after every round (§13) and the final scoring (§15, §10.3).

Round points of a player::

    Σ_lines (line doubled ? 2 : 1) × Σ_{s=1..min(reach, length)} value(best colour on s)
                                          × (doubler on s ? 2 : 1)
    + industry field value of each active marker
    + Kiev point spaces reached (track and locomotive) + Kiev medal

Only spaces the locomotives reach score; black scores 0; only the best colour on
a space counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.transsib.engine import data as D
from services.transsib.engine import industry
from services.transsib.engine.track import best_colour_counts

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.options import Rules
    from services.transsib.engine.player import Player

_LEN = D.LINE_LENGTH


def colour_at(p: Player, line: int, space: int) -> int:
    """The best colour on ``space`` of ``line``: the rearmost marker at or beyond it
    (-1 if no marker is there, i.e. the space is ahead of the black marker)."""
    base = line * 5
    for c in range(4, -1, -1):
        if p.pos[base + c] >= space:
            return c
    return -1


def line_score(rules: Rules, p: Player, line: int) -> int:
    """Round points of one line (§13)."""
    reach = p.reach(line)
    if reach <= 0:
        return 0
    if reach > _LEN[line]:
        reach = _LEN[line]
    revalued = p.revalued and (rules.options.revaluation_lines == "all" or line == D.TS)
    values = D.VALUES_REVALUED if revalued else D.VALUES
    base = line * 5
    pos = p.pos
    total = 0
    prev = 0
    for c in range(4, -1, -1):
        q = pos[base + c]
        if q > prev:
            hi = q if q < reach else reach
            if hi > prev:
                total += values[c] * (hi - prev)
            prev = q
            if prev >= reach:
                break
    if line == D.TS and p.doublers:
        for k in range(p.doublers):
            s = rules.doubler_ts_space[k]
            if s <= reach:
                c = colour_at(p, line, s)
                if c >= 0:
                    total += values[c]
    if p.line_double >> line & 1:
        total *= 2
    return total


def kiev_points(p: Player) -> int:
    """Points of the Kiev round-point spaces reached by track and locomotive (§6.5)."""
    total = 0
    for sp in D.ROUND_POINT_SPECIALS:
        if p.pos[sp.line * 5 + sp.trigger] >= sp.space and (
            not sp.needs_loco or p.reach(sp.line) >= sp.space
        ):
            total += sp.points
    return total


def medal_points(rules: Rules, p: Player) -> int:
    """The Kiev medal's round points (§12.3) under the ``kiev_medal_condition`` option.

    ``kiev_grey`` (the default): the medal scores while the player has grey track on the
    Kiev line (HALES, a play report: on Kiev 'a higher-than-average score for grey by taking
    a bonus that could net you 20 points/turn' [P]); ``none``: always; ``kiev_end_track`` /
    ``kiev_end_reach``: once the black track (and the locomotive) reach Kiev's last space.
    """
    if not p.medal:
        return 0
    cond = rules.options.kiev_medal_condition
    if cond == "kiev_grey" and p.pos[D.KIEV * 5 + D.GREY] < 1:
        return 0
    end = _LEN[D.KIEV]
    if cond == "kiev_end_track" and p.pos[D.KIEV * 5] < end:
        return 0
    if cond == "kiev_end_reach" and (p.pos[D.KIEV * 5] < end or p.reach(D.KIEV) < end):
        return 0
    return rules.options.kiev_medal_points


def round_breakdown(rules: Rules, p: Player) -> dict[str, int]:
    """The round points of a player by source (§13)."""
    return {
        "transsib": line_score(rules, p, D.TS),
        "stpetersburg": line_score(rules, p, D.STP),
        "kiev": line_score(rules, p, D.KIEV),
        "industry": industry.field_score(rules, p),
        "kiev_spaces": kiev_points(p),
        "kiev_medal": medal_points(rules, p),
    }


def round_points(rules: Rules, p: Player) -> int:
    """The total round points of a player (§13)."""
    return (
        line_score(rules, p, D.TS)
        + line_score(rules, p, D.STP)
        + line_score(rules, p, D.KIEV)
        + industry.field_score(rules, p)
        + kiev_points(p)
        + medal_points(rules, p)
    )


# --------------------------------------------------------------------------- final scoring


def end_bonus_points(p: Player, card: int) -> int:
    """Points of one end bonus card for a player (§15.1, data ``end_bonus_cards``)."""
    c = D.END_BONUS_CARDS[card]
    kind = c["kind"]
    each: int = c.get("points_each", 0)
    if kind == "factories":
        return each * sum(1 for f in p.factories if f)
    if kind == "engineers":
        return each * len(p.engineers)
    if kind == "end_stations":
        return each * sum(1 for line in range(len(D.LINES)) if p.pos[line * 5] >= _LEN[line])
    if kind == "grey_brown_spaces":
        return each * sum(
            best_colour_counts(p, line)[D.GREY] + best_colour_counts(p, line)[D.BROWN]
            for line in range(len(D.LINES))
        )
    if kind == "black_spaces":
        return each * sum(best_colour_counts(p, line)[D.BLACK] for line in range(len(D.LINES)))
    if kind == "doublers":
        pts: int = 0
        for minimum, points in c["tiers"]:
            if p.doublers >= minimum:
                pts = points
        return pts
    if kind == "top4_locos_sum":
        return sum(sorted(p.locos, reverse=True)[:4])
    if kind == "extra_workers":
        cap: int = c["max"]
        return each * min(p.extra, cap)
    if kind == "question_tokens_used":
        return each * bin(p.tokens_used).count("1")
    return 0  # extra_engineer: counts for the majority only


def engineer_count(p: Player) -> int:
    """Engineers counted for the majority: hired ones plus an 'extra engineer' card."""
    extra = sum(1 for card in p.eb if D.END_BONUS_CARDS[card]["kind"] == "extra_engineer")
    return len(p.engineers) + extra


def majority(players: list[Player], payout: tuple[int, ...]) -> list[int]:
    """Engineer majority points per seat (§10.3): most engineers ``payout[0]``, second
    ``payout[1]``; ties broken by the highest engineer number held (an 'extra engineer'
    card has no number).

    Only a player who hired at least one engineer tile qualifies for a place (BGA: "you
    must hire at least one engineer to qualify for the most engineers second place" [P];
    CHEAT and BGA for 40/20 and the tie-break [V]); an 'extra engineer' end bonus card [U]
    adds to the count of a qualified player but does not qualify a player alone (before
    issue 27 it did).

    Engineer numbers are unique, so the tie-break decides every tie in play; should two
    qualified players still tie completely, they share the place: each gets its payout
    and the next place is skipped (engine reading, docs/transsib-assumptions.md), never
    decided by seat.

    Args:
        players: every seat's player, in seat order.
        payout: points of the first and second place.

    Returns:
        The majority points of each seat, in seat order.
    """
    keys: dict[int, tuple[int, int]] = {}
    for seat, p in enumerate(players):
        count = engineer_count(p)
        if p.engineers:
            top = max((D.ENGINEERS[e].number for e in p.engineers), default=0)
            keys[seat] = (count, top)
    out = [0] * len(players)
    for seat, key in keys.items():
        place = sum(1 for other in keys.values() if other > key)
        if place < len(payout):
            out[seat] = payout[place]
    return out


def final_breakdown(rules: Rules, players: list[Player], num_players: int) -> list[dict[str, Any]]:
    """End bonus cards and engineer majority per seat (§15 steps 1-2)."""
    payout = rules.options.engineer_majority_points_2p if num_players == 2 else D.MAJORITY_POINTS
    maj = majority(players, payout)
    out: list[dict[str, Any]] = []
    for seat, p in enumerate(players):
        cards = {D.END_BONUS_IDS[c]: end_bonus_points(p, c) for c in p.eb}
        out.append({"end_bonus": cards, "majority": maj[seat]})
    return out
