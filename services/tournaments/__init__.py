"""Tournaments: pairing for 3-6 player tables, scoring and standings, OpenSkill ratings.

The modules here are pure (no grpc, redis or database): typed records in, records out.
The tournament service (gRPC, lobby tables, storage) builds on them.

* :mod:`.errors`        ``TournamentError``, the reason codes of bad input
* :mod:`.pairing_cost`  the records of a round and the cost of one table
* :mod:`.pairing`       ``pair_round`` (Swiss), table-size plans and byes, exact solve
* :mod:`.pairing_search` the local search for fields too large for the exact solve
* :mod:`.seeding`       first Swiss round from ratings (``predict_rank``)
* :mod:`.designs`       resolvable designs (affine geometries) and ``round_robin``
* :mod:`.scoring`       placement points, normalised scores, tiebreaks, standings
* :mod:`.ratings`       OpenSkill Plackett-Luce ratings, history, leaderboards

``docs/tournaments.md`` and ``docs/ratings.md`` explain them to an organiser.
"""
