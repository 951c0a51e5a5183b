"""Turn order, passing and worker relocation (§4.1, §5.5, §11, §14.2)."""

from __future__ import annotations

import pytest

from services.transsib.engine.tests.helpers import (
    act,
    legal_text,
    new_game,
    pass_all_but,
    refresh,
    refused,
)
from services.transsib.engine.turn_order import rearrange

A, B, C, D_ = range(4)


@pytest.mark.parametrize(
    "o1,o2,expected",
    [
        (B, -1, [B, A, C, D_]),  # B takes O-1
        (D_, -1, [D_, A, B, C]),  # D takes O-1
        (-1, C, [A, C, B, D_]),  # C takes O-2
        (-1, A, [A, B, C, D_]),  # A (1st) takes O-2, nobody O-1: A stays 1st
        (B, C, [B, C, A, D_]),  # B takes O-1 and C takes O-2
        (-1, -1, [A, B, C, D_]),
    ],
)
def test_rearrangement_examples(o1, o2, expected):
    """§11.2: the examples listed in the spec (order [A, B, C, D])."""
    assert rearrange([A, B, C, D_], o1, o2) == expected


@pytest.mark.parametrize(
    "o1,o2,expected",
    [
        (B, -1, [B, A, C, D_]),
        (D_, -1, [D_, A, B, C]),
        (-1, C, [A, C, B, D_]),
        (-1, A, [A, B, C, D_]),
        (B, C, [B, C, A, D_]),
    ],
)
def test_rearrangement_examples_played(o1, o2, expected):
    """§11.2 examples (order [A, B, C, D] = seats 0-3), played: the claimants place on
    O-1/O-2 in their turn, everyone passes, both decline the relocation (§11.3), and the
    next round is played in the new order."""
    s = new_game(4)
    claims = {seat: space for seat, space in ((o1, "O-1"), (o2, "O-2")) if seat >= 0}
    for seat in range(4):
        act(s, seat, f"place {claims[seat]}" if seat in claims else "pass")
    while s.round == 1:
        seat = s.active
        act(s, seat, "done" if s.stack else "pass")
    assert s.order == expected
    assert s.active == expected[0]
    assert s.view(None)["order"] == expected


def test_claims_change_the_next_rounds_order():
    """§11.2, §14.1: at cleanup the O-1 holder becomes 1st, the O-2 holder 2nd."""
    s = new_game(4)
    act(s, 0, "pass")
    act(s, 1, "pass")
    act(s, 2, "place O-2")
    act(s, 3, "place O-1")
    act(s, 2, "pass")
    act(s, 3, "pass")
    # relocation: O-2 first (seat 2), then O-1 (seat 3); both decline
    assert s.active == 2 and "done" in legal_text(s)
    act(s, 2, "done")
    assert s.active == 3
    act(s, 3, "done")
    assert s.round == 2
    assert s.order == [3, 2, 0, 1]
    assert s.active == 3


def test_no_player_holds_both_turn_order_spaces():
    """§5.5: no player may hold both spaces."""
    s = new_game(4)
    act(s, 0, "pass")
    act(s, 1, "place O-1")
    act(s, 2, "pass")
    act(s, 3, "pass")
    assert "place O-2 0" not in legal_text(s)
    refused(s, 1, "place O-2", "claims_both")


def test_no_claiming_your_own_position_with_3_or_4_players():
    """§5.5 [P]: with 3-4 players you may not claim the position you already hold."""
    s = new_game(4)
    assert "place O-1 0" not in legal_text(s)  # seat 0 is 1st
    refused(s, 0, "place O-1", "claim_own_position")
    act(s, 0, "pass")
    assert "place O-2 0" not in legal_text(s)  # seat 1 is 2nd
    assert "place O-1 0" in legal_text(s)


def test_two_players_first_may_take_o1_and_there_is_no_o2():
    """§5.5, §16 [P]: the 2-player side has only O-1, and the first player may take it."""
    s = new_game(2)
    options = legal_text(s)
    assert "place O-1 0" in options
    assert not any(o.startswith("place O-2") for o in options)
    refused(s, 0, "place O-2", "not_on_board")


def test_relocated_worker_takes_an_empty_one_worker_space():
    """§11.3: after everyone passed, the O-2 worker moves first, then the O-1 worker, each
    onto an empty 1-worker space (no turn-order space, no coin added), whose action is
    carried out."""
    s = new_game(4)
    act(s, 0, "place A-COIN")
    act(s, 1, "place O-1")
    act(s, 2, "place O-2")
    act(s, 3, "pass")
    act(s, 0, "pass")
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.phase == 2 and s.active == 2  # O-2 first
    options = legal_text(s)
    assert "relocate I-1" in options
    assert "relocate A-COIN" not in options  # occupied
    assert "relocate T-ANY" not in options  # needs a coin as well
    assert "relocate T-BLK-2" not in options  # needs two workers
    assert "relocate O-1" not in options
    assert "relocate T-REP" in options  # the repeatable space may always be used
    act(s, 2, "relocate I-1")
    assert s.players[2].ind[0] == 1
    assert s.active == 1  # then O-1
    assert "relocate I-1" not in legal_text(s)
    coins = s.players[1].coins
    act(s, 1, "relocate A-DBL")
    assert s.players[1].doublers == 1 and s.players[1].coins == coins
    assert s.round == 2 and s.order == [1, 2, 0, 3]


def test_relocation_onto_own_engineer():
    """§11.3 [P]: the relocated worker may go onto its owner's hired engineer."""
    s = new_game(4)
    s.players[1].engineers = [2]  # ENG03 (3 coins, one worker)
    refresh(s)
    act(s, 0, "pass")
    act(s, 1, "place O-1")
    act(s, 2, "pass")
    act(s, 3, "pass")
    act(s, 1, "pass")
    assert "relocate ENG03" in legal_text(s)
    coins = s.players[1].coins
    act(s, 1, "relocate ENG03")
    assert s.players[1].coins == coins + 3


def test_claim_paid_with_a_coin_has_no_worker_to_relocate():
    """§11.3: only the worker on the space moves; a coin standing in cannot."""
    s = new_game(4)
    act(s, 0, "pass")
    act(s, 1, "place O-1 1")
    act(s, 2, "pass")
    act(s, 3, "pass")
    act(s, 1, "pass")
    assert s.round == 2 and s.order[0] == 1


def test_pass_points_from_the_turn_order_card():
    """§11.4 [P] (LEVY): passing scores 0/2/3/4 by turn position, once."""
    s = new_game(4)
    scores = []
    for seat in range(4):
        events = act(s, seat, "pass")
        scores.append(next(e["points"] for e in events if e["type"] == "passed"))
    assert scores == [0, 2, 3, 4]
    # the round is then scored on top (1 industry point each on the first field)
    assert [p.score for p in s.players] == [1, 3, 4, 5]


def test_pass_points_follow_the_turn_position():
    """§11.4 [P], LEVY: 'the player going first receives no Victory Points but second
    place, third place and fourth place players earn bonuses of 2, 3 or 4 VPs': the pass
    points go by the current turn position, not by the card dealt at setup (the default
    since issue 27; docs/transsib-assumptions.md change log)."""
    s = new_game(4)
    for seat, p in enumerate(s.players):
        p.card = 4 - seat  # dealt cards do not matter
    refresh(s)
    act(s, 0, "pass")
    act(s, 1, "pass")
    assert [s.players[0].score, s.players[1].score] == [0, 2]


def test_pass_points_may_follow_the_dealt_card():
    """§11.4, option pass_points_follow='dealt_card' (the default before issue 27, no
    source): each player keeps the card dealt at setup."""
    s = new_game(4, pass_points_follow="dealt_card")
    for seat, p in enumerate(s.players):
        p.card = 4 - seat
    refresh(s)
    act(s, 0, "pass")
    act(s, 1, "pass")
    assert [s.players[0].score, s.players[1].score] == [4, 3]


def test_a_passed_player_takes_no_more_turns():
    """§4.1: after passing a player takes no more turns this round."""
    s = new_game(3)
    act(s, 0, "pass")
    act(s, 1, "place A-COIN")
    act(s, 2, "place I-1")
    assert s.active == 1  # seat 0 is skipped


def test_last_round_tile_covers_turn_order_and_offers_industry():
    """§14.2 [U], option last_round_tile='industry_3': in the last round O-1/O-2 are
    covered and a 1-worker space gives 3 industry steps."""
    s = new_game(4)
    s.round = s.rounds
    refresh(s)
    options = legal_text(s)
    assert not any(o.startswith("place O-") for o in options)
    assert "place LR-IND 0" in options
    act(s, 0, "place LR-IND")
    assert s.players[0].ind[0] == 3
    refused(s, 1, "place O-1", "covered")


def test_last_round_tile_option_none_keeps_turn_order_open():
    """§14.2 [U], option last_round_tile='none'."""
    s = new_game(4, last_round_tile="none")
    s.round = s.rounds
    refresh(s)
    options = legal_text(s)
    assert "place O-2 0" in options and "place LR-IND 0" not in options


def test_everyone_passed_ends_the_round_with_scoring():
    """§4.1: the action phase ends when all have passed; scoring and cleanup follow."""
    s = new_game(3)
    pass_all_but(s, {0})
    events = act(s, 0, "pass")
    assert any(e["type"] == "round_scored" for e in events)
    assert s.round == 2 and s.passed == [False] * 3
