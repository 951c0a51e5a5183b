"""The lobby servicer's handlers, one module per resource (tables, seats, play, watch,
results), joined by the thin :class:`services.lobby.server.LobbyServicer`."""
