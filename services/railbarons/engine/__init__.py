"""Chicago Express (``railbarons``) rules engine: pure Python, no I/O beyond its data file.

Spec: ``railbarons.md`` (copied into ``docs/railbarons-rules.md`` notes); data:
``data/railbarons_data.json``. Modules, one per rule area:

* :mod:`.data` - map and companies (§2, §12), loaded once;
* :mod:`.options` - every uncertain rule as a named option (§14);
* :mod:`.actions` - the moves;
* :mod:`.auction` (§4, §6), :mod:`.dials` (§5), :mod:`.expansion` (§7),
  :mod:`.development` (§8), :mod:`.chicago` (§9), :mod:`.dividends` (§10), :mod:`.end` (§11);
* :mod:`.flow` - the turn structure tying them together;
* :mod:`.state` - the state and the engine contract; :mod:`.view` - views and JSON.
"""

from services.railbarons.engine.actions import (
    Bid,
    Build,
    ChooseDial,
    Decline,
    Develop,
    Done,
    Pass,
    StartAuction,
)
from services.railbarons.engine.game import GAME, RailbaronsGame
from services.railbarons.engine.options import RailbaronsOptions
from services.railbarons.engine.state import RailbaronsState

__all__ = [
    "GAME",
    "Bid",
    "Build",
    "ChooseDial",
    "Decline",
    "Develop",
    "Done",
    "Pass",
    "RailbaronsGame",
    "RailbaronsOptions",
    "RailbaronsState",
    "StartAuction",
]
