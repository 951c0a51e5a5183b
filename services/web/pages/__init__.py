"""The web pages: server-rendered HTML (Jinja2, autoescaped) with htmx, served by the gateway
at ``/`` (``docs/web.md``).

Every page calls the same backend as the JSON API: the API's handlers in
:mod:`services.web.tables`, :mod:`services.web.accounts` and :mod:`services.web.tournaments`
as functions, or the lobby / accounts / tournament stubs of :class:`~services.web.backend.Backends`
as they do. No game logic lives here: moves, labels and ranges come from the rules services;
boards are drawn by :mod:`services.web.boards` from the views; a finished game's replay is the
engine's own ``Game.replay`` of the public moves from the public seed (as an audit does).

Writes are forms (POST, ``application/x-www-form-urlencoded``) checked for the double-submit
value first (:mod:`services.web.session`); a refused write re-renders the page with the
server's reason code and message and changes nothing.

The pages by group, one router each (listed in :data:`services.web.app.ROUTERS`):
:mod:`.accounts` (sign up, sign in and out, the account), :mod:`.lobby` (the tables and
the new-table form), :mod:`.table` (one table, its moves and live updates), :mod:`.replay`
(a finished game move by move) and :mod:`.tournaments` (tournaments and ratings); what they
share is in :mod:`.base`.
"""
