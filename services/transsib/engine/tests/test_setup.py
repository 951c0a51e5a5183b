"""Setup by player count (§2, §3) and the data file's status tags."""

from __future__ import annotations

import json

import pytest

from services.kernel.engine import InvalidOptions
from services.transsib.engine import GAME
from services.transsib.engine import data as D


@pytest.mark.parametrize(
    "n,rounds,workers,coins,stack",
    [(2, 6, 6, 2, 2), (3, 6, 6, 1, 3), (4, 7, 5, 1, 4)],
)
def test_parameters_by_player_count(n, rounds, workers, coins, stack):
    """§2 [V]: rounds, starting workers and coins, locomotive stacks by player count."""
    s = GAME.new_state(n, 2)
    assert s.rounds == rounds
    for p in s.players:
        assert p.own == workers and p.perm_own == workers
        assert p.coins == coins  # the starting bonus cards are still to be picked
    assert s.supply[1] == 0
    assert all(s.supply[k] == stack for k in range(2, 10))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_board_side_by_player_count(n):
    """§2, §5, §16 [P]: the 2-player side lacks T-BLK-1, T-GRY-1, L-2, I-3, O-2 and the
    second public engineer space; 3-4 players use every space (the last-round tile's
    space only in the last round, §14.2)."""
    s = GAME.new_state(n, 4)
    on_board = {D.SPACES[i].id for i in s.spaces}
    every = {sp.id for sp in D.SPACES} - {"LR-IND"}
    missing = {"T-BLK-1", "T-GRY-1", "L-2", "I-3", "O-2", "E-VAR-2"} if n == 2 else set()
    assert on_board == every - missing
    assert {sp["id"] for sp in s.view(None)["spaces"] if sp["on_board"]} == on_board


def test_player_boards_at_the_start():
    """§3.2 [V]: black markers on space 1 of each line, a #1 on the Trans-Siberian, the
    industry marker on the first field, second marker inactive."""
    s = GAME.new_state(4, 5)
    p = s.players[s.order[0]]  # the first player picks no starting bonus
    assert [p.pos[line * 5] for line in range(3)] == [1, 1, 1]
    assert p.locos == [1, 0, 0, 0]
    assert p.ind == [0, -1]
    assert p.unlocked == 1


def test_turn_order_follows_the_dealt_cards():
    """§3.2 steps 8-9 [V]: turn-order cards are dealt at random; pawns follow them."""
    orders = set()
    for seed in range(12):
        s = GAME.new_state(4, seed)
        assert [s.players[seat].card for seat in s.order] == [1, 2, 3, 4]
        orders.add(tuple(s.order))
    assert len(orders) > 3


def test_end_bonus_pile_and_box():
    """§3.1 step 3 [V]: 10 end bonus cards, 2 back in the box unseen, 8 face down."""
    s = GAME.new_state(3, 8)
    assert len(s.deck) == 8 and len(s.removed) == 2
    assert sorted(s.deck + s.removed) == list(range(10))


def test_same_seed_same_game_and_seeds_differ():
    """Determinism: same seed, same state; another seed deals differently."""
    a, b, c = GAME.new_state(4, 77), GAME.new_state(4, 77), GAME.new_state(4, 78)
    assert a.to_json() == b.to_json()
    assert a.to_json() != c.to_json()


def test_options_are_validated():
    """Unknown option names or bad values are refused."""
    with pytest.raises(InvalidOptions):
        GAME.new_state(4, 1, {"no_such_option": True})
    with pytest.raises(InvalidOptions):
        GAME.new_state(4, 1, {"doubler_spaces": [1, 2, 3, 4, 5, 6, 7, 99]})
    with pytest.raises(InvalidOptions):
        GAME.new_state(5, 1)


def test_every_option_names_its_tag_and_section():
    """Every option documents the spec's tag and section (brief: no hidden constants)."""
    schema = GAME.options_schema()
    for name, field in schema["properties"].items():
        text = field["description"]
        assert "§" in text, name
        assert any(tag in text for tag in ("[U", "[?", "[P", "[V")), name


def test_every_data_entry_carries_a_status_tag():
    """Data file: each table entry carries its status tag (V/P/U/?)."""
    raw = D.RAW
    tables = [
        raw["action_spaces"],
        raw["engineers"]["tiles"],
        raw["question_tokens"],
        raw["question_cards"],
        raw["end_bonus_cards"]["cards"],
        raw["starting_bonus_cards"]["cards"],
        list(raw["locomotives"]["factory_action_by_number"].values()),
        *[raw["special_spaces"][k] for k in ("transsib", "stpetersburg", "kiev", "industry")],
    ]
    for table in tables:
        for entry in table:
            assert entry["status"] in ("V", "P", "U", "?"), entry


def test_to_json_is_json():
    """to_json() is plain JSON."""
    s = GAME.new_state(2, 1)
    assert json.loads(json.dumps(s.to_json())) == s.to_json()


def test_every_option_is_listed_in_the_assumptions_doc():
    """docs/transsib-assumptions.md lists every option with its default."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[4] / "docs" / "transsib-assumptions.md").read_text()
    for name, field in GAME.options_schema()["properties"].items():
        assert f"| `{name}` |" in doc, name
        default = json.dumps(field["default"])
        if isinstance(field["default"], bool):
            default = str(field["default"]).lower()
        elif isinstance(field["default"], str):
            default = field["default"]
        assert f"| `{name}` | `{default}` |" in doc, (name, default)
