"""Round scoring (§13), the industry value (§8.1) and the final scoring (§10.3, §15)."""

from __future__ import annotations

import pytest

from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import scoring as S
from services.transsib.engine.tests.helpers import (
    KIEV,
    STP,
    TS,
    act,
    new_game,
    pass_all_but,
    refresh,
    set_track,
)


def test_spec_worked_example_scores_12():
    """§13 worked example (data example_round_score): TS black 7, grey 5, brown 3,
    locomotives #4 + #2 (reach 6), two doublers on TS spaces 1-2: 4 + 4 + 2 + 1 + 1 + 0
    = 12."""
    ex = D.RAW["example_round_score"]
    s = new_game(4)
    p = s.players[0]
    ts = ex["transsib"]
    set_track(s, 0, TS, ts["black"], ts["grey"], ts["brown"])
    p.locos = [ts["locos"][0], ts["locos"][1], 0, 0]
    p.doublers = ts["doublers"]
    assert S.line_score(s.rules, p, TS) == ex["expected_points"] == 12


def test_only_reached_spaces_score_and_only_the_best_colour():
    """§13 [V]: only spaces the locomotives reach score; black scores 0; only the best
    colour on a space counts."""
    s = new_game(4)
    p = s.players[0]
    set_track(s, 0, STP, 9, 8, 6, 4)
    p.locos = [1, 0, 0, 0]
    assert S.line_score(s.rules, p, STP) == 0  # no locomotive on the line
    p.locos[2] = 3
    assert S.line_score(s.rules, p, STP) == 3 * 4  # spaces 1-3 natural
    p.locos[2] = 9
    assert S.line_score(s.rules, p, STP) == 4 * 4 + 2 * 2 + 2 * 1 + 1 * 0


def test_revalued_colour_values():
    """§6.2 [V]: revalued brown 3, natural 6, white 10 (grey 1, black 0 unchanged)."""
    s = new_game(4)
    p = s.players[0]
    set_track(s, 0, TS, 15, 14, 13, 12, 11)
    p.locos = [8, 7, 0, 0]
    assert S.line_score(s.rules, p, TS) == 11 * 7 + 4 + 2 + 1 + 0
    p.revalued = True
    assert S.line_score(s.rules, p, TS) == 11 * 10 + 6 + 3 + 1 + 0


def test_industry_field_values():
    """§8.1 [P]: board fields 1,2,3,5,10,...; a factory field scores the previous board
    field."""
    s = new_game(4)
    p = s.players[0]
    expected = [1, 2, 3, 5, 5, 10, 10, 15, 15, 20, 20, 25, 25, 30]
    for field, points in enumerate(expected):
        p.ind[0] = field
        assert IND.field_score(s.rules, p) == points


def test_industry_start_field_option():
    """§8.1 [U], option industry_start_zero_field: markers start on a 0-point field."""
    s = new_game(4, industry_start_zero_field=True)
    p = s.players[0]
    assert p.ind[0] == 0 and IND.field_score(s.rules, p) == 0
    p.factories = [2, 3, 4, 5, 6]
    assert IND.marker_capacity(s.rules, p, 0) == 14


def test_round_scoring_adds_to_every_player():
    """§4.1, §13: after everyone passed each player scores the round."""
    s = new_game(3)
    s.players[1].locos = [1, 0, 0, 2]
    set_track(s, 1, KIEV, 3, 2)
    pass_all_but(s, {0})
    before = [p.score for p in s.players]
    events = act(s, 0, "pass")
    scored = next(e for e in events if e["type"] == "round_scored")
    # seat 1: Kiev reach 2: spaces 1-2 grey (1 each) + Kiev point spaces 1, 2 + industry 1
    assert scored["points"][1] == 2 + 3 + 1
    after = [b + d for b, d in zip(before, scored["points"], strict=True)]
    assert [p.score for p in s.players] == after


@pytest.mark.parametrize(
    "kind,setup,points",
    [
        ("factories", lambda p: setattr(p, "factories", [2, 3, 0, 0, 0]), 8),
        ("engineers", lambda p: setattr(p, "engineers", [1, 2, 3]), 18),
        ("end_stations", lambda p: p.pos.__setitem__(STP * 5, 9), 10),
        ("doublers", lambda p: setattr(p, "doublers", 7), 30),
        ("top4_locos_sum", lambda p: setattr(p, "locos", [1, 4, 6, 2]), 13),
        ("extra_workers", lambda p: setattr(p, "extra", 5), 30),
        ("question_tokens_used", lambda p: setattr(p, "tokens_used", 0b1011), 21),
        ("black_spaces", lambda p: None, 3),
    ],
)
def test_end_bonus_cards(kind, setup, points):
    """§15.1 [U]: the end bonus cards (placeholder list from the spec)."""
    s = new_game(4)
    p = s.players[0]
    setup(p)
    card = next(i for i, c in enumerate(D.END_BONUS_CARDS) if c["kind"] == kind)
    assert S.end_bonus_points(p, card) == points


def test_extra_engineer_card_counts_for_the_majority():
    """§10.3/§15.1 [U]: an 'extra engineer' card counts as an engineer (no number) for a
    player who hired one (BGA: at least one hired engineer qualifies, issue 27)."""
    s = new_game(4)
    card = next(i for i, c in enumerate(D.END_BONUS_CARDS) if c["kind"] == "extra_engineer")
    s.players[2].eb = [card]
    s.players[2].engineers = [3]
    s.players[3].engineers = [4]
    assert S.majority(s.players, (40, 20)) == [0, 0, 40, 20]
    s.players[2].engineers = []
    assert S.majority(s.players, (40, 20)) == [0, 0, 0, 40]


def test_final_scoring_after_the_last_round():
    """§15: after the last round's scoring, end bonus cards then the engineer majority;
    most points wins, ties share a rank."""
    s = new_game(2)
    s.round = s.rounds
    s.players[0].engineers = [3]
    card = next(i for i, c in enumerate(D.END_BONUS_CARDS) if c["kind"] == "engineers")
    s.players[0].eb = [card]
    pass_all_but(s, {0})
    events = act(s, 0, "pass")
    over = events[-1]
    assert over["type"] == "game_over"
    assert over["majority_points"] == [40, 0]
    assert over["end_bonus_points"] == [6, 0]
    assert s.is_terminal() and s.active_seats() == ()
    result = s.result()
    assert result.ranks == (1, 2)
    assert result.scores[0] == s.players[0].score


def test_tied_scores_share_the_rank():
    """§15 step 3 [P]: ties are shared, there is no tie-breaker (not the turn order, not
    the seat)."""
    s = new_game(3)
    s.round = s.rounds
    s.players[0].score = 50
    s.players[1].score = 48  # 2 pass points still to come: ties seat 0
    s.players[2].score = 10
    s.order = [2, 1, 0]
    for seat, p in enumerate(s.players):
        p.card = s.order.index(seat) + 1  # seat 1 holds card 2 (2 pass points)
    pass_all_but(s, {1})
    s.cur = s.order.index(1)
    refresh(s)
    act(s, 1, "pass")
    result = s.result()
    assert result.scores[0] == result.scores[1] == 51  # + 1 industry point each
    assert result.ranks == (1, 1, 3)


def test_score_is_an_unbounded_integer():
    """§13: the score track laps at 100 (point tiles); the score is an unbounded int."""
    s = new_game(4)
    p = s.players[0]
    p.score = 480
    p.ind[0] = 13  # the last industry field: 30 points
    p.factories = [2, 3, 4, 5, 6]
    pass_all_but(s, {0})
    act(s, 0, "pass")  # card 1: no pass points
    assert p.score == 510
    assert s.view(None)["players"][0]["score"] == 510
