"""The map and company data (spec §2, §12), loaded from the packaged data file."""

from __future__ import annotations

from collections import Counter

from services.railbarons.engine import board


def test_160_hexes_with_the_terrain_counts_of_the_overview():
    """§12: 160 hexes: 73 plain, 41 forest, 22 city (incl. Chicago), 16 mountain, 5 start,
    3 industrial cities."""
    assert board.NUM_HEXES == 160
    counts = Counter(board.TERRAIN_NAMES[t] for t in board.TERRAIN)
    assert counts == {
        "plain": 73,
        "forest": 41,
        "city": 22,
        "mountain": 16,
        "start": 5,
        "industrial_city": 3,
    }


def test_neighbours_follow_the_odd_q_rule_and_are_symmetric():
    """§12: odd columns sit half a hex lower; the neighbour offsets of even and odd columns
    give exactly the listed neighbours, and adjacency is symmetric."""
    pos = {}
    for h, hid in enumerate(board.HEX_IDS):
        pos[(ord(hid[0]) - ord("A"), int(hid[1:]))] = h
    even = [(0, -1), (0, 1), (-1, -1), (-1, 0), (1, -1), (1, 0)]
    odd = [(0, -1), (0, 1), (-1, 0), (-1, 1), (1, 0), (1, 1)]
    for (c, r), h in pos.items():
        offsets = odd if c & 1 else even
        expected = sorted(pos[(c + dc, r + dr)] for dc, dr in offsets if (c + dc, r + dr) in pos)
        assert list(board.NEIGHBOURS[h]) == expected, board.HEX_IDS[h]
        for n in board.NEIGHBOURS[h]:
            assert h in board.NEIGHBOURS[n]
            assert board.NB_MASK[h] >> n & 1


def test_chicago_is_reachable_only_from_a3_and_b2():
    """§12: Chicago (A2) is reachable only from A3 and B2; it is a city of income 7, cost 3."""
    assert {board.HEX_IDS[n] for n in board.NEIGHBOURS[board.CHICAGO]} == {"A3", "B2"}
    assert board.BASE_INCOME[board.CHICAGO] == 7
    assert board.BASE_COST[board.CHICAGO] == 3
    assert board.TERRAIN[board.CHICAGO] == board.CITY


def test_shortest_paths_to_chicago():
    """§12: shortest paths to Chicago: B&O and C&O 16 hexes, PRR 17, NYC 18, Wabash 3."""
    dist = {c: board.CHICAGO_DISTANCE[board.START_HEX[i]] for i, c in enumerate(board.COMPANY_IDS)}
    assert dist == {"BO": 16, "CO": 16, "PRR": 17, "NYC": 18, "WAB": 3}


def test_company_data():
    """§2: shares 3/4/6/5/2 (20), locomotives 20/22/26/24/11 (103), start hexes R5, Q7, Q9,
    S3, D3; start incomes 7/6/5/8 (Wabash set by option)."""
    assert board.COMPANY_IDS == ("PRR", "BO", "CO", "NYC", "WAB")
    assert board.SHARES == (3, 4, 6, 5, 2) and sum(board.SHARES) == 20
    assert board.LOCOMOTIVES == (20, 22, 26, 24, 11) and sum(board.LOCOMOTIVES) == 103
    assert [board.HEX_IDS[h] for h in board.START_HEX] == ["R5", "Q7", "Q9", "S3", "D3"]
    assert board.START_INCOME_DATA == (7, 6, 5, 8, None)
    assert [board.START_OWNER[h] for h in board.START_HEX] == [0, 1, 2, 3, 4]


def test_industrial_cities_and_exclusive_terrain():
    """§8, §7: Detroit E0, Wheeling I6, Pittsburgh K4 start at 1/3/4; forests and mountains
    (57 hexes) are the exclusive ones."""
    assert [board.HEX_IDS[h] for h in board.INDUSTRIAL_HEX] == ["E0", "I6", "K4"]
    assert board.INDUSTRIAL_START == (1, 3, 4)
    assert bin(board.EXCLUSIVE_MASK).count("1") == 41 + 16


def test_developable_hexes():
    """§8: forests, mountains and cities with a printed bonus are developable; Chicago,
    plains, start hexes and industrial cities are not (as ordinary hexes)."""
    dev = board.ORDINARY_DEVELOPABLE_MASK
    assert not dev >> board.CHICAGO & 1
    for h in range(board.NUM_HEXES):
        t = board.TERRAIN[h]
        if t in (board.PLAIN, board.START, board.INDUSTRIAL):
            assert not dev >> h & 1
        elif t in (board.FOREST, board.MOUNTAIN):
            assert dev >> h & 1
    assert board.DEV_BONUS[board.HEX_INDEX["N4"]] == 1  # the one +1 mountain (suspect)
    assert board.DEV_BONUS[board.HEX_INDEX["B5"]] == 2


def test_costs_match_the_overview_spot_checks():
    """§12 overview: N8/O5/O6/O8 are the plains costing 2; J2 is the forest costing 1."""
    for hid in ("N8", "O5", "O6", "O8"):
        assert board.BASE_COST[board.HEX_INDEX[hid]] == 2
    assert board.BASE_COST[board.HEX_INDEX["J2"]] == 1
    plains_cost = Counter(
        board.BASE_COST[h] for h in range(board.NUM_HEXES) if board.TERRAIN[h] == board.PLAIN
    )
    assert plains_cost == {1: 69, 2: 4}
