"""The tournament service around the pure cores of :mod:`services.tournaments`.

* :mod:`.models`       the store's tables (migration ``0004_tournaments``)
* :mod:`.store`        tournaments, players, rounds and tables in the store
* :mod:`.director`     registrations, rounds that run by themselves, results, the
                       abort/stall rule, standings
* :mod:`.tables`       the lobby tables a round plays at (or simulated ones)
* :mod:`.rating_store` ratings in the store and the consumer that rates finished games
* :mod:`.events`       tournament events to the players' account event streams
* :mod:`.messages`, :mod:`.export`  the public messages, JSON and CSV
* :mod:`.server`       gRPC ``roundhouse.v1.Tournaments`` and the process
"""
