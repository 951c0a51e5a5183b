"""Seeded setup (spec "Replay semantics" step 1 and "Setup and auction")."""

from __future__ import annotations

import pytest

from ..data import CORP_INDEX, PRIVATES
from ..privates import CLOSED, UNSOLD
from ..setup import LCG, draw_setup
from .flow_helpers import FINAL, MARKET, fixture, new


def test_lcg_is_the_reference_generator():
    """§Replay semantics: state = (1103515245 * state + 12345) mod 2^31 from the seed."""
    rng = LCG(1)
    assert [rng.next() for _ in range(3)] == [1103527590, 377401575, 662824084]


@pytest.mark.parametrize(
    "seed,french,removed",
    [
        (92791301, "Est", "GLG"),  # 1894_game_end_final_phase
        (2076138808, "Ouest", "SAC"),  # 1894_game_end_stock_market
        (1, "Ouest", "GLG"),  # data/game.json setup_example_seed_1 (SAC kept)
    ],
)
def test_draws_in_the_reference_order(seed, french, removed):
    """§Setup: 5 draws for PLM, Ouest, Nord, Est, CFOR (smallest wins), then 2 for GLG/SAC
    (the smaller is removed)."""
    assert draw_setup(seed) == (french, removed)


def test_fixture_seeds_give_the_recorded_setup():
    """§Setup: the recorded games' seeds give the traces' starting corporation."""
    assert new(4, fixture(FINAL)["settings"]["seed"]).to_json()["starting_corporations"] == [
        "Est",
        "Belge",
    ]
    assert new(3, fixture(MARKET)["settings"]["seed"]).to_json()["starting_corporations"] == [
        "Ouest",
        "Belge",
    ]


@pytest.mark.parametrize("players,cash,pool", [(4, 480, 0), (3, 570, 10)])
def test_starting_position(players, cash, pool):
    """§Setup: 570/480 francs; every player holds 10% of the French starting corporation and of
    Belge; with 3 players one more share of each is in the pool; the rest (president's
    certificate included) stays in the Treasury."""
    st = new(players, 92791301)
    assert st.cash == [cash] * players
    for sym in ("Est", "Belge"):
        ci = CORP_INDEX[sym]
        assert st.holdings[ci] == [10] * players
        assert st.pool[ci] == pool
        assert st.ipo[ci] == 100 - 10 * players - pool
        assert st.president[ci] == -1 and not st.floated[ci]
    for sym in ("PLM", "Ouest", "Nord", "CFOR", "AG", "LF", "LB"):
        assert st.ipo[CORP_INDEX[sym]] == 100


def test_privates_in_the_auction():
    """§Setup: 8 privates, cheapest first: the drawn teleport private and only the drawn
    corporation's major shareholding (BMS always); the others are closed."""
    st = new(4, 92791301)
    names = [PRIVATES[pi].sym for pi in st.auc_companies]
    assert names == ["LRC", "AR", "SAC", "SQG", "LS", "NMinorS", "EMS", "BMS"]
    closed = {PRIVATES[pi].sym for pi, o in enumerate(st.private_owner) if o == CLOSED}
    assert closed == {"GLG", "PLMMS", "OMMS", "NMS", "CMS"}
    assert all(st.private_owner[pi] == UNSOLD for pi in st.auc_companies)


def test_player_count_is_checked():
    from services.kernel.engine import InvalidOptions

    from .. import GAME

    with pytest.raises(InvalidOptions):
        GAME.new_state(2, 1)
    with pytest.raises(InvalidOptions):
        GAME.new_state(5, 1)
