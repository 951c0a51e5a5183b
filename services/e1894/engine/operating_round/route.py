"""Step 5 of a corporation's turn: run the trains.

Spec: designer's rules 7.3.5 "Run trains" and 13.3-13.4; the 1894 rules summary, "Trains
and phases", "London, ferries and bonuses" (the route rules are :mod:`..routes`). The revenue
is always recomputed from the routes, never trusted. Skipped, with revenue 0, when the
corporation has no train or no route (errata A3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, LegalAction

from .. import routes as routes_mod
from ..actions import RunRoutes
from ..data import CORPS, PHASES
from .common import DONE, ROUTE, S_TRAINS, has_route

if TYPE_CHECKING:
    from ..state import E1894State

NAME = ROUTE
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (RunRoutes,)


def skip(st: E1894State, ci: int) -> bool:
    """No train or no route (errata A3): revenue 0, which the dividend step withholds."""
    if st.trains[ci] and has_route(st, ci):
        return False
    st.t_revenue = 0
    return True


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """The best routes (:func:`..routes.best_routes`); any valid set of routes is accepted."""
    best = routes_mod.best_routes(st.board, CORPS[ci].sym, st.trains[ci], PHASES[st.phase].name)
    return [RunRoutes(tuple(routes_mod.route_to_string(r) for r in best.routes))]


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """Value the routes (:func:`..routes.value_route_strings`, which raises on an invalid
    route) and record the revenue; the step ends.

    Raises:
        IllegalAction: ``not_own_train``, and the route rules' codes.
    """
    assert isinstance(action, RunRoutes)
    sym = CORPS[ci].sym
    for text in action.routes:
        train = text.partition(":")[0]
        if train not in st.trains[ci]:
            raise IllegalAction("not_own_train", f"{S_TRAINS}: {sym} does not own train {train}")
    rs = routes_mod.value_route_strings(st.board, sym, PHASES[st.phase].name, action.routes)
    st.t_revenue = rs.total
    st.t_routes = tuple(routes_mod.route_to_string(r) for r in rs.routes)
    event = {
        "type": "routes",
        "corporation": sym,
        "revenue": rs.total,
        "routes": [f"{r.train}:{'-'.join(r.hexes)}={r.revenue}" for r in rs.routes],
    }
    return [event], DONE
