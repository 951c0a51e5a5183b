"""Which HTTP route offers each public gRPC call: the one table of the API's parity (issue 32,
item 5). ``services/web/tests/test_grpc_parity.py`` walks every RPC of every service in the
generated descriptors (``roundhouse.v1.*_pb2``: a new ``.proto`` is walked too) and checks each
is either in :data:`ROUTES`, whose route must be in the OpenAPI document with that method, or
in :data:`INTERNAL_ONLY` with the reason.

A new resource (chat, challenges, ...) adds a block of its RPCs to :data:`ROUTES` (or
:data:`INTERNAL_ONLY`), next to its router in :data:`services.web.app.ROUTERS`.
"""

from __future__ import annotations

ROUTES: dict[str, tuple[str, str]] = {
    # roundhouse.v1.Accounts (services/web/accounts.py)
    "roundhouse.v1.Accounts/CreateAccount": ("POST", "/api/accounts"),
    "roundhouse.v1.Accounts/CreateToken": ("POST", "/api/tokens"),
    "roundhouse.v1.Accounts/GetAccount": ("GET", "/api/accounts/{username}"),
    "roundhouse.v1.Accounts/WhoAmI": ("GET", "/api/account"),
    "roundhouse.v1.Accounts/ListTokens": ("GET", "/api/tokens"),
    "roundhouse.v1.Accounts/RevokeToken": ("DELETE", "/api/tokens/{token_id}"),
    "roundhouse.v1.Accounts/CreateBotAccount": ("POST", "/api/bots"),
    "roundhouse.v1.Accounts/SetBotPolicy": ("PUT", "/api/bots/{username}/policy"),
    "roundhouse.v1.Accounts/CreateBotToken": ("POST", "/api/bots/{username}/tokens"),
    "roundhouse.v1.Accounts/ListBots": ("GET", "/api/bots"),
    # roundhouse.v1.Archive (services/web/games.py)
    "roundhouse.v1.Archive/ListGames": ("GET", "/api/games"),
    # roundhouse.v1.Lobby (services/web/tables.py, streams.py, imports.py, reviews.py)
    "roundhouse.v1.Lobby/CreateTable": ("POST", "/api/tables"),
    "roundhouse.v1.Lobby/GetTable": ("GET", "/api/tables/{table_id}"),
    "roundhouse.v1.Lobby/ListTables": ("GET", "/api/tables"),
    "roundhouse.v1.Lobby/JoinSeat": ("POST", "/api/tables/{table_id}/seats/{seat}/join"),
    "roundhouse.v1.Lobby/LeaveSeat": ("POST", "/api/tables/{table_id}/seats/{seat}/leave"),
    "roundhouse.v1.Lobby/AddBot": ("POST", "/api/tables/{table_id}/seats/{seat}/bot"),
    "roundhouse.v1.Lobby/StartTable": ("POST", "/api/tables/{table_id}/start"),
    "roundhouse.v1.Lobby/AbortTable": ("POST", "/api/tables/{table_id}/abort"),
    "roundhouse.v1.Lobby/GetSeatView": ("GET", "/api/tables/{table_id}/view"),
    "roundhouse.v1.Lobby/ListMoves": ("GET", "/api/tables/{table_id}/moves"),
    "roundhouse.v1.Lobby/SubmitMove": ("POST", "/api/tables/{table_id}/moves"),
    "roundhouse.v1.Lobby/Resign": ("POST", "/api/tables/{table_id}/resign"),
    "roundhouse.v1.Lobby/WatchTable": ("GET", "/api/tables/{table_id}/stream"),
    "roundhouse.v1.Lobby/GetTableResult": ("GET", "/api/tables/{table_id}/result"),
    "roundhouse.v1.Lobby/PauseTable": ("POST", "/api/tables/{table_id}/pause"),
    "roundhouse.v1.Lobby/ResumeTable": ("POST", "/api/tables/{table_id}/resume"),
    "roundhouse.v1.Lobby/ReclaimSeat": ("POST", "/api/tables/{table_id}/reclaim"),
    "roundhouse.v1.Lobby/StreamEvents": ("GET", "/api/stream/events"),
    "roundhouse.v1.Lobby/ImportRecordedGame": ("POST", "/api/e1894/imports"),
    "roundhouse.v1.Lobby/ExportTable": ("GET", "/api/tables/{table_id}/export"),
    "roundhouse.v1.Lobby/RequestReview": ("POST", "/api/tables/{table_id}/review"),
    "roundhouse.v1.Lobby/GetReview": ("GET", "/api/tables/{table_id}/review"),
    # roundhouse.v1.Tournaments (services/web/tournaments.py)
    "roundhouse.v1.Tournaments/CreateTournament": ("POST", "/api/tournaments"),
    "roundhouse.v1.Tournaments/GetTournament": ("GET", "/api/tournaments/{tournament_id}"),
    "roundhouse.v1.Tournaments/ListTournaments": ("GET", "/api/tournaments"),
    "roundhouse.v1.Tournaments/Register": ("POST", "/api/tournaments/{tournament_id}/register"),
    "roundhouse.v1.Tournaments/Withdraw": ("POST", "/api/tournaments/{tournament_id}/withdraw"),
    "roundhouse.v1.Tournaments/StartTournament": ("POST", "/api/tournaments/{tournament_id}/start"),
    "roundhouse.v1.Tournaments/PauseTournament": ("POST", "/api/tournaments/{tournament_id}/pause"),
    "roundhouse.v1.Tournaments/EndTournament": ("POST", "/api/tournaments/{tournament_id}/end"),
    "roundhouse.v1.Tournaments/AdvanceRound": ("POST", "/api/tournaments/{tournament_id}/advance"),
    "roundhouse.v1.Tournaments/RecordResult": ("POST", "/api/tournaments/{tournament_id}/results"),
    "roundhouse.v1.Tournaments/GetStandings": ("GET", "/api/tournaments/{tournament_id}/standings"),
    "roundhouse.v1.Tournaments/ExportTournament": (
        "GET",
        "/api/tournaments/{tournament_id}/export",
    ),
    "roundhouse.v1.Tournaments/GetLeaderboard": ("GET", "/api/ratings/{title}"),
    "roundhouse.v1.Tournaments/GetAccountRatings": ("GET", "/api/accounts/{name}/ratings"),
}
"""``package.Service/Method`` -> (HTTP method, OpenAPI path) of the route that offers it."""

_RULES = "internal: the rules services answer the lobby and the bots only (docs/deploy.md)"
_INTERCHANGE = (
    "internal: the lobby's import and export call it (POST /api/e1894/imports, GET .../export)"
)

INTERNAL_ONLY: dict[str, str] = {
    "roundhouse.v1.Accounts/IssueAppToken": "internal: the gateway's OAuth token endpoint calls "
    "it after the account's consent (/oauth/token; services/web/oauth.py)",
    **{
        f"roundhouse.v1.GameRules/{rpc}": _RULES
        for rpc in (
            "CreateGame",
            "GetView",
            "ListLegalActions",
            "SubmitAction",
            "WatchGame",
            "GetResult",
            "Resign",
            "Timeout",
            "SetPaused",
            "Reclaim",
        )
    },
    "roundhouse.v1.e1894.Interchange/ImportGame": _INTERCHANGE,
    "roundhouse.v1.e1894.Interchange/ExportGame": _INTERCHANGE,
}
"""``package.Service/Method`` -> why no HTTP route offers it."""
