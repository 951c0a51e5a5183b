"""Engineers: strip, public engineer spaces, hiring, own engineers, majority (§3.1, §10)."""

from __future__ import annotations

import pytest

from services.transsib.engine import GAME
from services.transsib.engine import data as D
from services.transsib.engine import scoring as S
from services.transsib.engine.tests.helpers import (
    act,
    legal_text,
    new_game,
    pass_all_but,
    refresh,
    refused,
)

E = D.ENGINEER_INDEX


@pytest.mark.parametrize(
    "n,slots,filled,var_spaces",
    [(2, 6, 6, ["E-VAR-1"]), (3, 7, 6, ["E-VAR-1", "E-VAR-2"]), (4, 7, 7, ["E-VAR-1", "E-VAR-2"])],
)
def test_strip_setup_by_player_count(n, slots, filled, var_spaces):
    """§2, §3.1 step 9, §10.1: 4p: 4 B upcoming, 2 A variable + 1 A hire; 3p: the leftmost
    space stays empty; 2p: 6 spaces with one variable space [P]."""
    s = GAME.new_state(n, 3)
    assert len(s.strip) == slots
    assert sum(1 for e in s.strip if e >= 0) == filled
    if n == 3:
        assert s.strip[0] == -1
    letters = [D.ENGINEERS[e].stack for e in s.strip if e >= 0]
    assert letters[-3:] == ["A", "A", "A"]
    assert all(x == "B" for x in letters[:-3])
    assert len(s.box) == 14 - filled
    on_board = [D.SPACES[i].id for i in s.spaces if D.SPACES[i].area == "engineer"]
    assert on_board == var_spaces


def test_strip_shifts_one_space_right_every_round():
    """§10.1: at cleanup every engineer moves one space right; the unhired engineer on the
    hiring space leaves the game."""
    s = new_game(4)
    before = s.strip[:]
    pass_all_but(s, {0})
    events = act(s, 0, "pass")
    assert s.strip == [-1] + before[:-1]
    new_round = next(e for e in events if e["type"] == "new_round")
    assert new_round["engineer_left"] == D.ENGINEERS[before[-1]].id


def test_hiring_costs_one_coin_and_no_worker():
    """§5.6 E-HIRE, §10.2: place a coin on the hiring space and take that engineer."""
    s = new_game(4)
    e = s.strip[-1]
    p = s.players[0]
    act(s, 0, "place E-HIRE")
    assert p.coins == 0 and p.own == 5
    assert p.engineers == [e] and s.strip[-1] == -1
    assert "place E-HIRE 0" not in legal_text(s)  # one hire per round


def test_hiring_needs_a_coin():
    """§5.6: without a coin there is no hiring."""
    s = new_game(4)
    s.players[0].coins = 0
    refresh(s)
    refused(s, 0, "place E-HIRE", "too_few_coins")


def test_public_engineer_space_is_a_competed_action():
    """§5.6, §10.2: a variable engineer is a public action space, used once per round at
    the cost printed on it, and must be performable in full."""
    s = new_game(4)
    s.strip[4] = E["ENG02"]  # 2 black/grey steps, 1 worker (placeholder data)
    refresh(s)
    act(s, 0, "place E-VAR-1")
    assert "done" not in legal_text(s)
    act(s, 0, "track transsib black")
    act(s, 0, "track transsib grey")
    assert s.players[0].pos[:2] == [2, 1]
    assert "place E-VAR-1 0" not in legal_text(s)


def test_public_engineer_with_a_coin_cost():
    """§5.6 [P]: some engineers cost a coin on their variable space."""
    s = new_game(4)
    s.strip[5] = E["ENG06"]  # 5 points for 1 coin (placeholder data)
    refresh(s)
    p = s.players[0]
    act(s, 0, "place E-VAR-2")
    assert p.coins == 0 and p.own == 5 and p.score == 5


def test_public_engineer_not_performable_is_refused():
    """§4.4: competed actions (public engineer spaces too) must be performable in full."""
    s = new_game(4)
    s.strip[4] = E["ENG12"]  # 2 natural/white steps (placeholder data)
    refresh(s)
    assert "place E-VAR-1 0" not in legal_text(s)
    refused(s, 0, "place E-VAR-1", "not_performable")


def test_own_engineer_once_per_round_and_optional():
    """§10.2, §4.4: a hired engineer is a private space, usable once per round; its action
    may be done partially or skipped."""
    s = new_game(4)
    p = s.players[0]
    p.engineers = [E["ENG02"]]
    refresh(s)
    act(s, 0, "place ENG02")
    assert "done" in legal_text(s)
    act(s, 0, "track kiev black")
    act(s, 0, "done")
    assert p.pos[10] == 2
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 3, "pass")
    assert "place ENG02 0" not in legal_text(s)
    refused(s, 0, "place ENG02", "engineer_used")


def test_someone_elses_engineer_is_refused():
    """§10.2: hired engineers are private action spaces."""
    s = new_game(4)
    s.players[1].engineers = [E["ENG02"]]
    refresh(s)
    refused(s, 0, "place ENG02", "not_your_engineer")


def test_engineer_majority_40_20_with_tie_break_by_highest_number():
    """§10.3 [V]: most engineers 40, second 20, at least one needed; ties go to the
    highest engineer number."""
    s = new_game(4)
    p0, p1, p2, p3 = s.players
    p0.engineers = [E["ENG02"], E["ENG03"]]
    p1.engineers = [E["ENG04"], E["ENG09"]]  # ties with p0 on 2, holds #9 > #3
    p2.engineers = [E["ENG15"]]
    assert S.majority(s.players, (40, 20)) == [20, 40, 0, 0]
    p2.engineers = []
    p0.engineers = []
    assert S.majority(s.players, (40, 20)) == [0, 40, 0, 0]  # nobody else qualifies


def test_engineer_majority_second_place_tie_break():
    """§10.3 [V]: second place is also decided by the highest engineer number."""
    s = new_game(4)
    p0, p1, p2, p3 = s.players
    p0.engineers = [E["ENG02"], E["ENG03"], E["ENG05"]]
    p1.engineers = [E["ENG04"], E["ENG06"]]
    p2.engineers = [E["ENG07"], E["ENG08"]]  # ties p1 on 2, holds #8 > #6
    p3.engineers = [E["ENG15"]]
    assert S.majority(s.players, (40, 20)) == [40, 0, 20, 0]


def test_engineer_majority_complete_tie_is_not_decided_by_seat():
    """§10.3: numbers are unique, so only 'extra engineer' cards ([U], no number) can tie
    completely; such qualified players share the place (each gets its points, the next
    place is skipped) whatever their seats."""
    s = new_game(4)
    card = next(i for i, c in enumerate(D.END_BONUS_CARDS) if c["kind"] == "extra_engineer")
    s.players[1].eb = [card]
    s.players[3].eb = [card]
    s.players[1].engineers = [E["ENG02"]]
    s.players[3].engineers = [E["ENG02"]]  # an impossible position: the same tile twice
    assert S.majority(s.players, (40, 20)) == [0, 40, 0, 40]


def test_engineer_majority_needs_a_hired_engineer():
    """§10.3, BGA: 'you must hire at least one engineer to qualify for the most engineers
    second place'. A player whose only 'engineer' is the extra-engineer end bonus card [U]
    does not qualify (before issue 27 the card alone qualified); the card still adds to
    the count of a player who hired one."""
    s = new_game(4)
    card = next(i for i, c in enumerate(D.END_BONUS_CARDS) if c["kind"] == "extra_engineer")
    s.players[0].engineers = [E["ENG02"]]
    s.players[1].eb = [card]
    assert S.majority(s.players, (40, 20)) == [40, 0, 0, 0]
    s.players[2].engineers = [E["ENG15"]]
    s.players[2].eb = [card]
    assert S.majority(s.players, (40, 20)) == [20, 0, 40, 0]
