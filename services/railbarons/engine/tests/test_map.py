"""The map and company data (spec §2, §12), loaded from the packaged data file."""

from __future__ import annotations

from collections import Counter

from services.railbarons.engine import data


def test_160_hexes_with_the_terrain_counts_of_the_overview():
    """§12: 160 hexes: 73 plain, 41 forest, 22 city (incl. Chicago), 16 mountain, 5 start,
    3 industrial cities."""
    assert data.NUM_HEXES == 160
    counts = Counter(data.TERRAIN_NAMES[t] for t in data.TERRAIN)
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
    for h, hid in enumerate(data.HEX_IDS):
        pos[(ord(hid[0]) - ord("A"), int(hid[1:]))] = h
    even = [(0, -1), (0, 1), (-1, -1), (-1, 0), (1, -1), (1, 0)]
    odd = [(0, -1), (0, 1), (-1, 0), (-1, 1), (1, 0), (1, 1)]
    for (c, r), h in pos.items():
        offsets = odd if c & 1 else even
        expected = sorted(pos[(c + dc, r + dr)] for dc, dr in offsets if (c + dc, r + dr) in pos)
        assert list(data.NEIGHBOURS[h]) == expected, data.HEX_IDS[h]
        for n in data.NEIGHBOURS[h]:
            assert h in data.NEIGHBOURS[n]
            assert data.NB_MASK[h] >> n & 1


def test_chicago_is_reachable_only_from_a3_and_b2():
    """§12: Chicago (A2) is reachable only from A3 and B2; it is a city of income 7, cost 3."""
    assert {data.HEX_IDS[n] for n in data.NEIGHBOURS[data.CHICAGO]} == {"A3", "B2"}
    assert data.BASE_INCOME[data.CHICAGO] == 7
    assert data.BASE_COST[data.CHICAGO] == 3
    assert data.TERRAIN[data.CHICAGO] == data.CITY


def test_shortest_paths_to_chicago():
    """§12: shortest paths to Chicago: B&O and C&O 16 hexes, PRR 17, NYC 18, Wabash 3."""
    dist = {c: data.CHICAGO_DISTANCE[data.START_HEX[i]] for i, c in enumerate(data.COMPANY_IDS)}
    assert dist == {"BO": 16, "CO": 16, "PRR": 17, "NYC": 18, "WAB": 3}


def test_company_data():
    """§2: shares 3/4/6/5/2 (20), locomotives 20/22/26/24/11 (103), start hexes R5, Q7, Q9,
    S3, D3; start incomes 7/6/5/8 (Wabash set by option)."""
    assert data.COMPANY_IDS == ("PRR", "BO", "CO", "NYC", "WAB")
    assert data.SHARES == (3, 4, 6, 5, 2) and sum(data.SHARES) == 20
    assert data.LOCOMOTIVES == (20, 22, 26, 24, 11) and sum(data.LOCOMOTIVES) == 103
    assert [data.HEX_IDS[h] for h in data.START_HEX] == ["R5", "Q7", "Q9", "S3", "D3"]
    assert data.START_INCOME_DATA == (7, 6, 5, 8, None)
    assert [data.START_OWNER[h] for h in data.START_HEX] == [0, 1, 2, 3, 4]


def test_industrial_cities_and_exclusive_terrain():
    """§8, §7: Detroit E0, Wheeling I6, Pittsburgh K4 start at 1/3/4; forests and mountains
    (57 hexes) are the exclusive ones."""
    assert [data.HEX_IDS[h] for h in data.INDUSTRIAL_HEX] == ["E0", "I6", "K4"]
    assert data.INDUSTRIAL_START == (1, 3, 4)
    assert bin(data.EXCLUSIVE_MASK).count("1") == 41 + 16


def test_developable_hexes():
    """§8: forests, mountains and cities with a printed bonus are developable; Chicago,
    plains, start hexes and industrial cities are not (as ordinary hexes)."""
    dev = data.ORDINARY_DEVELOPABLE_MASK
    assert not dev >> data.CHICAGO & 1
    for h in range(data.NUM_HEXES):
        t = data.TERRAIN[h]
        if t in (data.PLAIN, data.START, data.INDUSTRIAL):
            assert not dev >> h & 1
        elif t in (data.FOREST, data.MOUNTAIN):
            assert dev >> h & 1
    assert data.DEV_BONUS[data.HEX_INDEX["N4"]] == 1  # the one +1 mountain (suspect)
    assert data.DEV_BONUS[data.HEX_INDEX["B5"]] == 2


def test_costs_match_the_overview_spot_checks():
    """§12 overview: N8/O5/O6/O8 are the plains costing 2; J2 is the forest costing 1."""
    for hid in ("N8", "O5", "O6", "O8"):
        assert data.BASE_COST[data.HEX_INDEX[hid]] == 2
    assert data.BASE_COST[data.HEX_INDEX["J2"]] == 1
    plains_cost = Counter(
        data.BASE_COST[h] for h in range(data.NUM_HEXES) if data.TERRAIN[h] == data.PLAIN
    )
    assert plains_cost == {1: 69, 2: 4}
