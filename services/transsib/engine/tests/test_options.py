"""The rule options (spec [P]/[U]/[?] items, docs/transsib-assumptions.md §1): each
non-default value changes the rule it names, and only that rule."""

from __future__ import annotations

import pytest

from services.kernel.engine import InvalidOptions
from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine import industry as IND
from services.transsib.engine import scoring as S
from services.transsib.engine.tests.helpers import (
    KIEV,
    TS,
    act,
    legal_text,
    new_game,
    pass_all_but,
    question_bonus_pending,
    refresh,
    refused,
    set_track,
    to_move,
)


def test_coins_substitute_workers_off():
    """§4.3 [P], coins_substitute_workers=False: no coin stands in for a worker (T-ANY's
    own coin is still paid)."""
    s = new_game(4, coins_substitute_workers=False)
    s.players[0].coins = 3
    refresh(s)
    options = legal_text(s)
    assert "place A-COIN 0" in options and "place A-COIN 1" not in options
    assert "place T-ANY 0" in options and "place T-ANY 1" not in options
    refused(s, 0, "place A-COIN 1", "coin_substitution")


def test_coins_on_multi_worker_spaces():
    """§4.3 [U]: by default coins may fill 2- and 3-worker spaces; with
    coins_on_multi_worker_spaces=False only 1-worker spaces take them."""
    s = new_game(4)
    s.players[0].coins = 3
    refresh(s)
    assert {"place T-BLK-2 1", "place T-BLK-2 2", "place L-3 3"} <= set(legal_text(s))
    act(s, 0, "place L-3 3")
    assert s.players[0].coins == 0 and s.players[0].own == 5
    s = new_game(4, coins_on_multi_worker_spaces=False)
    s.players[0].coins = 3
    refresh(s)
    options = legal_text(s)
    assert "place A-COIN 1" in options
    assert not any(o.startswith(("place T-BLK-2 ", "place L-3 ")) and o[-1] != "0" for o in options)
    refused(s, 0, "place T-BLK-2 1", "coin_substitution")


def test_temp_workers_space_on_the_2_player_side():
    """§5.4/§16 [?]: A-TEMP is on the 2-player side by default, not with
    temp_workers_space_in_2p=False."""
    assert "place A-TEMP 0" in legal_text(new_game(2))
    s = new_game(2, temp_workers_space_in_2p=False)
    assert "place A-TEMP 0" not in legal_text(s)
    refused(s, 0, "place A-TEMP", "not_on_board")
    assert "place A-TEMP 0" in legal_text(new_game(3, temp_workers_space_in_2p=False))


def test_temp_workers_cost():
    """§5.4 [P], temp_workers_cost: the workers A-TEMP needs."""
    s = new_game(4, temp_workers_cost=2)
    act(s, 0, "place A-TEMP")
    p = s.players[0]
    assert p.own == 3 and p.temp == 2


def test_claiming_own_position_allowed_by_option():
    """§5.5 [P], forbid_claiming_own_position=False: the 1st player may take O-1."""
    s = new_game(4, forbid_claiming_own_position=False)
    assert "place O-1 0" in legal_text(s)


def test_two_player_first_may_not_take_o1_by_option():
    """§5.5 [P], two_player_first_may_take_o1=False."""
    s = new_game(2, two_player_first_may_take_o1=False)
    assert "place O-1 0" not in legal_text(s)
    refused(s, 0, "place O-1", "claim_own_position")
    act(s, 0, "pass")
    assert "place O-1 0" in legal_text(s)  # the 2nd player may


def test_pass_points_values():
    """§11.4 [U], pass_points: the values on the turn-order card backs."""
    s = new_game(3, pass_points=(5, 6, 7, 8))
    got = []
    for seat in range(3):
        events = act(s, seat, "pass")
        got.append(next(e["points"] for e in events if e["type"] == "passed"))
    assert got == [5, 6, 7]


def test_last_round_tile_cover_only():
    """§14.2 [U], last_round_tile='cover_only': turn order covered, no extra space."""
    s = new_game(4, last_round_tile="cover_only")
    s.round = s.rounds
    refresh(s)
    options = legal_text(s)
    assert not any(o.startswith(("place O-", "place LR-IND")) for o in options)
    s.round = s.rounds - 1
    refresh(s)
    assert "place O-2 0" in legal_text(s)


def test_question_bonus_token_only():
    """§12.1 [U], question_bonus_choice='token_only': '?' cards are never offered."""
    s = question_bonus_pending()
    assert any(o.startswith("question_card") for o in legal_text(s))
    s = question_bonus_pending(question_bonus_choice="token_only")
    options = legal_text(s)
    assert "question_token revaluation" in options
    assert not any(o.startswith("question_card") for o in options)
    refused(s, 0, "question_card QC-BLACK-WORKER", "cards_not_offered")


def test_kiev_medal_points_and_reach_condition():
    """§12.3 [U]: kiev_medal_points, and kiev_medal_condition='kiev_end_reach' (track and
    locomotive at Kiev's last space)."""
    s = new_game(4, kiev_medal_points=7, kiev_medal_condition="kiev_end_reach")
    p = s.players[0]
    p.medal = True
    set_track(s, 0, KIEV, 9)
    p.locos[3] = 8
    assert S.medal_points(s.rules, p) == 0
    p.locos[3] = 9
    assert S.medal_points(s.rules, p) == 7


def test_second_marker_without_activation_steps():
    """§8.3 [U], second_marker_activation_steps=0: the second marker starts and stays on
    the start field."""
    s = question_bonus_pending(second_marker_activation_steps=0)
    act(s, 0, "question_token second_industry_marker")
    assert s.players[0].ind == [0, 0]


def test_industry_board_points_option():
    """§8.1 [P, sources disagree], industry_board_points: the rythos42 reading."""
    s = new_game(4, industry_board_points=(1, 2, 3, 4, 5, 10, 15, 20, 25))
    p = s.players[0]
    p.ind[0] = 4  # the first factory field scores the previous board field
    assert IND.field_score(s.rules, p) == 4
    p.ind[0] = 13
    assert IND.field_score(s.rules, p) == 25


def test_industry_steps_may_be_lost_option():
    """§4.4 vs §8.2 [?], industry_board_steps_may_be_lost=True: I-2 may be taken with one
    step of room; the other step is lost."""
    s = new_game(4)
    s.players[0].ind[0] = 2
    refresh(s)
    assert "place I-2 0" not in legal_text(s)
    s = new_game(4, industry_board_steps_may_be_lost=True)
    s.players[0].ind[0] = 2
    refresh(s)
    events = act(s, 0, "place I-2")
    assert s.players[0].ind[0] == 3
    assert {"type": "industry_steps_lost", "seat": 0, "steps": 1} in events


def test_start_bonus_industry_steps():
    """§3.3 [U], start_bonus_industry_steps: steps of the 'industry' starting card."""
    s = GAME.new_state(4, 5, {"start_bonus_industry_steps": 3})
    fourth = s.order[3]
    act(s, fourth, "start_bonus industry")
    assert s.players[fourth].ind[0] == 3


def test_doubler_supply_limit():
    """§9 [?]: the doubler supply is a hard limit by default; doubler_supply_limited=False
    lifts it."""
    s = new_game(4, doubler_supply=1)
    act(s, 0, "place A-DBL")
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 3, "pass")
    act(s, 0, "pass")  # round 2
    assert s.doubler_supply == 0
    assert "place A-DBL 0" not in legal_text(s)
    s = new_game(4, doubler_supply=0, doubler_supply_limited=False)
    act(s, 0, "place A-DBL")
    assert s.players[0].doublers == 1


def test_doubler_spaces_mapping_moves_the_doubled_spaces():
    """§6.4 [U], doubler_spaces: which Trans-Siberian space each doubler doubles."""
    s = new_game(4, doubler_spaces=(15, 5, 1, 2, 3, 4, 6, 7))
    p = s.players[0]
    set_track(s, 0, TS, 7, 5, 3)
    p.locos = [4, 2, 0, 0]  # reach 6
    p.doublers = 2  # spaces 15 (beyond the reach) and 5 (grey)
    assert S.line_score(s.rules, p, TS) == 2 * 3 + 1 * 2 + 1
    default = new_game(4)
    q = default.players[0]
    set_track(default, 0, TS, 7, 5, 3)
    q.locos = [4, 2, 0, 0]
    q.doublers = 2  # spaces 1 and 2 (brown)
    assert S.line_score(default.rules, q, TS) == 12


def test_doubler_spaces_must_differ():
    """§6.4: each doubler space sits above its own Trans-Siberian space, so a mapping that
    repeats a space is refused."""
    with pytest.raises(InvalidOptions):
        GAME.new_state(4, 1, {"doubler_spaces": [1, 1, 2, 3, 4, 5, 6, 7]})


def test_extra_workers_per_player_limit():
    """§2 [P], extra_workers_per_player: permanent workers a player may still gain."""
    s = new_game(4, extra_workers_per_player=0)
    p = s.players[0]
    p.locos = [1, 2, 0, 0]
    refresh(s)
    act(s, 0, "place T-BLK-1")
    act(s, 0, "track transsib black")
    act(s, 0, "track transsib black")  # TS 3 reached: no worker left to gain
    assert p.perm_own == 5 and p.extra == 0


def test_revaluation_on_the_transsib_only():
    """§6.2 [P], revaluation_lines='transsib'."""
    s = new_game(4, revaluation_lines="transsib")
    p = s.players[0]
    set_track(s, 0, TS, 6, 4, 2)
    set_track(s, 0, KIEV, 6, 4, 2)
    p.locos = [3, 0, 0, 3]
    p.revalued = True
    assert S.line_score(s.rules, p, TS) == 2 * 3 + 1
    assert S.line_score(s.rules, p, KIEV) == 2 * 2 + 1


def test_engineer_majority_points_with_two_players():
    """§10.3/§16 [U], engineer_majority_points_2p: the 2-player payout at the final
    scoring (3-4 players keep 40/20)."""
    assert _final_majority_points(2, engineer_majority_points_2p=(30, 10)) == [30, 10]
    assert _final_majority_points(3, engineer_majority_points_2p=(30, 10)) == [40, 20, 0]


def _final_majority_points(n: int, **options) -> list[int]:
    """§10.3: the engineer majority points of the final scoring in an ``n``-player game
    (``options``) where seat 0 holds ENG03 and seat 1 ENG02, everyone else has passed and
    seat 0 passes last."""
    s = new_game(n, **options)
    s.round = s.rounds
    s.players[0].engineers = [D.ENGINEER_INDEX["ENG03"]]
    s.players[1].engineers = [D.ENGINEER_INDEX["ENG02"]]
    pass_all_but(s, {0})
    to_move(s, 0)
    events = act(s, 0, "pass")
    return events[-1]["majority_points"]
