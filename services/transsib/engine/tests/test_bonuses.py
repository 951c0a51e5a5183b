"""Starting bonus cards, special spaces, "?" tokens and cards, Kiev medal, revaluation and
end bonus cards (§3.3, §6.5, §12, §15.1)."""

from __future__ import annotations

import json

import pytest

from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine import scoring as S
from services.transsib.engine.frames import EndBonus, Track
from services.transsib.engine.tests.helpers import (
    KIEV,
    STP,
    TS,
    act,
    legal_text,
    new_game,
    pass_all_but,
    question_bonus_pending,
    question_position,
    reach_question_space,
    refresh,
    refused,
    set_track,
    to_move,
)


@pytest.mark.parametrize("n,pickers", [(2, [2]), (3, [3, 2]), (4, [4, 3, 2])])
def test_starting_bonus_cards_in_reverse_turn_order(n, pickers):
    """§3.3 [V]: the 4th player picks first, then the 3rd, then the 2nd; the 1st gets
    none; with fewer players only positions N..2 pick."""
    s = GAME.new_state(n, 11)
    picked = []
    while s.phase == 0:
        seat = s.active
        picked.append(s.order.index(seat) + 1)
        card = "coin" if "coin" in s.start_cards else s.start_cards[0]
        if card == "black_track":
            act(s, seat, "start_bonus black_track")
            act(s, seat, "track kiev black")
        else:
            act(s, seat, f"start_bonus {card}")
    assert picked == pickers
    assert len(s.start_cards) == 4 - len(pickers)
    assert s.active == s.order[0]


def test_starting_bonus_card_effects():
    """§3.3 [P]: coin +1, black track one step, industry one step, doubler one."""
    s = GAME.new_state(4, 5)
    fourth, third, second = s.order[3], s.order[2], s.order[1]
    coins = s.players[fourth].coins
    act(s, fourth, "start_bonus coin")
    assert s.players[fourth].coins == coins + 1
    act(s, third, "start_bonus black_track")
    assert legal_text(s) == [
        "track transsib black",
        "track stpetersburg black",
        "track kiev black",
    ]
    act(s, third, "track stpetersburg black")
    assert s.players[third].pos[STP * 5] == 2
    act(s, second, "start_bonus doubler")
    assert s.players[second].doublers == 1
    assert s.start_cards == ["industry"]
    refused(s, s.order[0], "start_bonus industry", "wrong_decision")


def test_question_space_fires_after_the_action_completes():
    """§6.5 [U layout], §4.4 with gained_actions_order='fixed': St Petersburg 4 gives a
    '?' bonus once track and locomotive reach it; it is taken after the current action is
    complete (the default 'any' is tested in test_rules_points.py)."""
    s = question_position(gained_actions_order="fixed")
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    assert s.gained and isinstance(s.stack[-1], Track)  # still the second black step
    act(s, 0, "track kiev black")
    options = legal_text(s)
    assert "question_token revaluation" in options
    assert "question_card QC-BLACK-WORKER" in options
    assert "done" in options  # a token is optional


def test_question_space_needs_the_locomotive_reach():
    """§6.5: a locomotive-marked special fires only once the reach gets there too, and
    fires later when a locomotive arrives."""
    s = question_position()
    s.players[0].locos = [1, 0, 3, 0]
    refresh(s)
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track stpetersburg black")
    act(s, 0, "track kiev black")
    assert s.active == 1  # no '?' bonus
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 3, "pass")
    s.supply[2] = s.supply[3] = 0
    s.supply_total = sum(s.supply)
    refresh(s)
    act(s, 0, "place L-1")
    act(s, 0, "loco stpetersburg 0")  # #4 replaces #3: the reach gets to 4
    act(s, 0, "loco transsib 1")  # the displaced #3
    assert s.active == 0 and "question_token revaluation" in legal_text(s)


def test_revaluation_token_raises_colour_values():
    """§12.2 [U], §6.2: the revaluation marker makes brown 3, natural 6, white 10."""
    s = question_position()
    p = s.players[0]
    set_track(s, 0, KIEV, 5, 4, 3)
    p.locos[3] = 5
    before = S.line_score(s.rules, p, KIEV)
    reach_question_space(s)
    act(s, 0, "question_token revaluation")
    assert p.revalued
    assert before == 3 * 2 + 1 * 1
    assert S.line_score(s.rules, p, KIEV) == 3 * 3 + 1 * 1


def test_kiev_medal_scores_each_later_round():
    """§12.3 [P]: the activated Kiev medal scores 20 points at every later round scoring
    (HALES: 'a bonus that could net you 20 points/turn'); under the default condition
    ``kiev_grey`` only while the player has grey track on Kiev (HALES ties the medal to
    grey on the Kiev line; issue 27, docs/transsib-assumptions.md change log)."""
    s = question_bonus_pending()
    p = s.players[0]
    act(s, 0, "question_token kiev_medal")
    assert S.round_breakdown(s.rules, p)["kiev_medal"] == 0  # no grey track on Kiev yet
    set_track(s, 0, KIEV, 2, 1)
    assert S.round_breakdown(s.rules, p)["kiev_medal"] == 20


def test_kiev_medal_without_condition():
    """§12.3, option kiev_medal_condition='none' (the reading before issue 27, the
    Ultimate analogue): the medal scores every later round whatever the track."""
    s = question_bonus_pending(kiev_medal_condition="none")
    p = s.players[0]
    act(s, 0, "question_token kiev_medal")
    assert S.round_breakdown(s.rules, p)["kiev_medal"] == 20


def test_kiev_medal_condition_option():
    """§12.3, option kiev_medal_condition='kiev_end_track'."""
    s = new_game(4, kiev_medal_condition="kiev_end_track")
    p = s.players[0]
    p.medal = True
    assert S.medal_points(s.rules, p) == 0
    set_track(s, 0, KIEV, 9)
    assert S.medal_points(s.rules, p) == 20


def test_second_industry_marker_token():
    """§8.3 [U]: the token activates the second marker on the start field, with the
    activation steps of the option (default 2)."""
    s = question_bonus_pending()
    p = s.players[0]
    act(s, 0, "question_token second_industry_marker")
    assert p.ind == [0, 2]
    assert S.round_breakdown(s.rules, p)["industry"] == 1 + 3


def test_end_bonus_card_is_chosen_at_the_end_of_the_turn_and_kept_secret():
    """§4.4 [V]: end bonus cards are always chosen at the end of the turn; §15.1 [U]: the
    player picks from the face-down pile, which only that player sees."""
    s = question_bonus_pending()
    act(s, 0, "question_token end_bonus")
    assert isinstance(s.stack[-1], EndBonus)  # the end bonus choice, end of turn
    pile = [D.END_BONUS_IDS[c] for c in s.deck]
    assert s.view(0)["end_bonus_choices"] == pile
    assert s.view(1)["end_bonus_choices"] == [] and s.view(None)["end_bonus_choices"] == []
    assert legal_text(s) == [f"end_bonus {i}" for i in range(8)]
    events = act(s, 0, "end_bonus 3")
    assert events == [{"type": "end_bonus_taken", "seat": 0}]
    assert [D.END_BONUS_IDS[c] for c in s.players[0].eb] == [pile[3]]
    assert len(s.deck) == 7
    assert s.view(0)["players"][0]["end_bonus_cards"] == [pile[3]]
    assert s.view(1)["players"][0]["end_bonus_cards"] == []
    assert s.view(1)["players"][0]["end_bonus_count"] == 1
    assert s.active == 1


def test_question_cards_are_competed_and_taken_once():
    """§12.4 [P]: the shared '?' cards are first come, first served; the black worker card
    gives a permanent worker."""
    s = question_bonus_pending()
    p = s.players[0]
    act(s, 0, "question_card QC-BLACK-WORKER")
    assert p.has_black and p.perm_own == 6 and p.own == 5
    assert "QC-BLACK-WORKER" not in s.view(None)["question_cards"]


def test_question_card_loco9_is_placed_like_a_locomotive():
    """§12.4 [P]: the factory-less #9 locomotive is placed like a normal one."""
    s = question_bonus_pending()
    p = s.players[0]
    act(s, 0, "question_card QC-LOCO9")
    act(s, 0, "loco kiev 0")
    assert p.locos == [1, 0, 4, 9]


def test_question_card_engineer_counts_for_the_majority():
    """§12.4 [P]: the letterless engineer and a coin; the engineer is then the player's."""
    s = question_bonus_pending()
    p = s.players[0]
    coins = p.coins
    act(s, 0, "question_card QC-ENGINEER")
    assert p.engineers == [D.LETTERLESS] and p.coins == coins + 1
    assert S.engineer_count(p) == 1


def test_used_token_is_refused():
    """§12.2: each '?' token can be used once."""
    s = question_position()
    s.players[0].tokens_used = 1  # revaluation used
    refresh(s)
    reach_question_space(s)
    refused(s, 0, "question_token revaluation", "token_used")


def test_extra_worker_space_on_the_transsib():
    """§6.5 [U]: TS space 3 gives a permanent worker once track and locomotives reach it."""
    s = new_game(4)
    p = s.players[0]
    p.locos = [1, 2, 0, 0]
    refresh(s)
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track transsib black")
    act(s, 0, "track transsib black")
    assert p.perm_own == 6 and p.own == 5 and p.extra == 1


def test_st_petersburg_doubles_once_grey_and_reach_get_to_7():
    """§6.5 [P exists, U where]: the whole St Petersburg line scores double."""
    s = new_game(4)
    p = s.players[0]
    p.locos = [1, 0, 8, 0]
    set_track(s, 0, TS, 3)
    set_track(s, 0, STP, 8, 6, 0)
    plain = S.line_score(s.rules, p, STP)
    act(s, 0, "place T-GRY-1")
    act(s, 0, "track stpetersburg grey")
    act(s, 0, "track transsib grey")
    assert p.line_double == 1 << STP
    assert S.line_score(s.rules, p, STP) == 2 * (plain + 1)


def test_kiev_point_spaces_score_every_round():
    """§6.5 [U]: Kiev spaces 1-4 score 1/2/3/4 each round, cumulatively, once track and
    locomotive reach them."""
    s = new_game(4)
    p = s.players[0]
    set_track(s, 0, KIEV, 3)
    assert S.kiev_points(p) == 0
    p.locos[3] = 2
    assert S.kiev_points(p) == 1 + 2
    p.locos[3] = 5
    assert S.kiev_points(p) == 1 + 2 + 3


def test_views_and_events_of_a_bonus_game_are_json():
    """Events carry no secret card ids before the end (§15.1)."""
    s = question_position()
    evs = []
    evs += act(s, 0, "place T-BLK-1")
    evs += act(s, 0, "track stpetersburg black")
    evs += act(s, 0, "track transsib black")
    evs += act(s, 0, "question_token end_bonus")
    evs += act(s, 0, "end_bonus 0")
    text = json.dumps(evs)
    assert not any(cid in text for cid in D.END_BONUS_IDS)


def test_restricted_black_worker_stands_only_on_black_track_spaces():
    """§9 [U], option black_worker_black_track_only: the black worker from its '?' card is
    a permanent worker that may only stand on the black-track spaces (T-BLK-1, T-BLK-2)."""
    s = question_bonus_pending(black_worker_black_track_only=True)
    p = s.players[0]
    act(s, 0, "question_card QC-BLACK-WORKER")
    assert p.has_black and p.black == 1 and p.perm_own == 5  # not an own-colour worker
    p.own, p.coins = 0, 0  # only the black worker is left
    pass_all_but(s, {0})
    to_move(s, 0)
    assert legal_text(s) == ["pass"]  # T-BLK-1 is taken, T-BLK-2 needs two workers
    refused(s, 0, "place A-COIN", "too_few_workers")
    p.own = 1
    refresh(s)
    assert "place T-BLK-2 0" in legal_text(s)  # one own worker and the black one
    act(s, 0, "place T-BLK-2")
    assert (p.own, p.black, p.placed_black) == (0, 0, 1)


def test_restricted_black_worker_is_spent_before_a_turquoise_worker():
    """§9 [U] with §5.4: on a black-track space the black worker (which can stand nowhere
    else) is placed before a turquoise worker, so the turquoise worker stays free for any
    other space this round."""
    s = new_game(4, black_worker_black_track_only=True)
    p = s.players[0]
    p.own = p.perm_own = 0
    p.temp, p.black, p.has_black, p.coins = 1, 1, True, 0
    s.temp_on_space = False
    refresh(s)
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track kiev black")
    act(s, 0, "track kiev black")
    assert (p.black, p.placed_black, p.temp) == (0, 1, 1)
    pass_all_but(s, {0})
    to_move(s, 0)
    assert "place A-COIN 0" in legal_text(s)
    act(s, 0, "place A-COIN")
    assert p.coins == 2 and p.placed_temp == 1
