"""Our titles as OpenSpiel (``pyspiel``) Python games.

Importing this module registers ``roundhouse_railbarons``, ``roundhouse_transsib`` and
``roundhouse_e1894``; then ``pyspiel.load_game("roundhouse_transsib", {"players": 4})``
works like any OpenSpiel game (see ``docs/openspiel.md``).

The game each wraps is the title's engine (:mod:`services.kernel.engine` contract) with two
documented restrictions that make it a finite OpenSpiel game:

* **Moves** are the title's play-out actions (``State.playout_actions`` where the title
  defines it, e.g. 1894 drops auction bids that would leave the bidder unable to buy the
  cheapest private; otherwise every legal action).
* **Ranged actions** (an :class:`~services.kernel.engine.ActionRange`: a price, a bid) are
  made finite: the values the title's greedy heuristic proposes (``candidate_values``)
  plus ``range_values`` evenly spaced values from the range's minimum to its maximum
  (both ends included), deduplicated, lowest first.

**Action integers** (positional encoding). At a decision node the concrete moves above are
listed in the engine's ``legal_actions`` order (a range's values lowest first, in the
range's place); action ``i`` is the ``i``-th of that list, so legal actions are always
``0 .. k-1``. An integer therefore means "the i-th move here", not the same move in every
state: use ``action_to_string`` (the move's canonical JSON, e.g.
``{"amount":12,"type":"bid"}``) to give moves a state-independent identity.
``num_distinct_actions`` is :data:`MAX_ACTIONS` (an upper bound on ``k`` checked on every
node: :class:`TooManyMoves` if a position ever had more).

**Chance.** Where the title's setup is random (Russian Railroads: bonus tiles, end bonus
cards, draw piles; 1894: the private companies' order and the seating) the initial state
is a chance node with ``setup_seeds`` equally likely outcomes; outcome ``j`` starts the
engine with seed ``j``. Every later random draw of the engine follows from that seed, so
after the setup node the game has no further chance nodes (the draws are hidden from the
players where the title hides them: the observation strings show only the seat's view).
Chicago Express has a fixed setup: no chance node.

**Observations.** ``observation_string(p)`` is the canonical JSON of ``State.view(p)``, what
seat ``p`` may see (hidden information of other seats never appears in it).

**Returns.** At the end each winner (rank 1) gets ``1/k`` where ``k`` seats tie for first,
everyone else ``0`` (constant sum 1); before the end every return is 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from services.bots.heuristics import candidates_for
from services.kernel.engine import Action, ActionRange, State, canonical_json
from services.kernel.playout import playout_actions
from services.rules.titles import get_game

MAX_ACTIONS = 512
"""``num_distinct_actions`` of every title: the most moves a decision node may offer."""

DEFAULT_SETUP_SEEDS = 1000
DEFAULT_RANGE_VALUES = 5

TITLES = ("railbarons", "transsib", "e1894")
"""Titles wrapped, with their OpenSpiel short name ``roundhouse_<title>``."""

RANDOM_SETUP = {"railbarons": False, "transsib": True, "e1894": True}
"""Whether the title's setup depends on the seed (then the initial node is a chance node)."""

MAX_GAME_LENGTH = {"railbarons": 5_000, "transsib": 5_000, "e1894": 20_000}
"""Moves (plus the chance node) a game may last, an upper bound for OpenSpiel's
``max_game_length`` (random games last about 300, 300 and 1,600 moves)."""


class TooManyMoves(RuntimeError):
    """A position offered more than :data:`MAX_ACTIONS` moves (raise the bound)."""


def moves(state: State, seat: int, range_values: int) -> list[Action]:
    """The concrete moves of ``seat`` in ``state``, in action-integer order (see the module
    docstring)."""
    candidates = candidates_for(state.game.id)
    out: list[Action] = []
    for entry in playout_actions(state, seat):
        if type(entry) is ActionRange:
            values = set(v for v in candidates(state, seat, entry) if v in entry.values())
            count = len(entry)
            k = min(range_values, count)
            for i in range(k):
                pos = 0 if k == 1 else round(i * (count - 1) / (k - 1))
                values.add(entry.min + pos * entry.step)
            out.extend(entry.at(v) for v in sorted(values))
        else:
            out.append(entry)
    if len(out) > MAX_ACTIONS:
        raise TooManyMoves(f"{len(out)} moves > MAX_ACTIONS={MAX_ACTIONS}")
    return out


def _game_type(title: str, players_max: int, players_min: int) -> pyspiel.GameType:
    hidden = title == "transsib"
    return pyspiel.GameType(
        short_name=f"roundhouse_{title}",
        long_name=f"Roundhouse {get_game(title).name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if RANDOM_SETUP[title]
            else pyspiel.GameType.ChanceMode.DETERMINISTIC
        ),
        information=(
            pyspiel.GameType.Information.IMPERFECT_INFORMATION
            if hidden
            else pyspiel.GameType.Information.PERFECT_INFORMATION
        ),
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players_max,
        min_num_players=players_min,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification={
            "players": 4,
            "setup_seeds": DEFAULT_SETUP_SEEDS,
            "range_values": DEFAULT_RANGE_VALUES,
        },
    )


class RoundhouseGame(pyspiel.Game):
    """One title as a pyspiel game. Parameters: ``players`` (default 4),
    ``setup_seeds`` (chance outcomes of the setup, default 1000) and ``range_values``
    (evenly spaced values per ranged action, default 5)."""

    title: str = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        engine = get_game(self.title)
        players = int(params.get("players", 4))
        if not engine.min_players <= players <= engine.max_players:
            raise ValueError(
                f"{self.title} takes {engine.min_players} to {engine.max_players} players"
            )
        setup_seeds = int(params.get("setup_seeds", DEFAULT_SETUP_SEEDS))
        range_values = int(params.get("range_values", DEFAULT_RANGE_VALUES))
        if setup_seeds < 1 or range_values < 2:
            raise ValueError("setup_seeds >= 1 and range_values >= 2")
        info = pyspiel.GameInfo(
            num_distinct_actions=MAX_ACTIONS,
            max_chance_outcomes=setup_seeds if RANDOM_SETUP[self.title] else 0,
            num_players=players,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=MAX_GAME_LENGTH[self.title],
        )
        game_type = _game_type(self.title, engine.max_players, engine.min_players)
        chosen = {"players": players, "setup_seeds": setup_seeds, "range_values": range_values}
        super().__init__(game_type, info, chosen)
        # attributes only after pybind11's __init__ (it would drop them)
        self.engine = engine
        self.players = players
        self.setup_seeds = setup_seeds
        self.range_values = range_values

    def new_initial_state(self) -> RoundhouseState:
        return RoundhouseState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> ViewObserver:
        return ViewObserver(params)


class _Box:
    """Holds the engine state, the moves of its decision (``None`` until asked) and its
    text (``None`` until asked); a deep copy is the engine's own fast ``clone``, sharing
    the moves and the text (both are replaced, never changed, when the state moves on)."""

    __slots__ = ("state", "moves", "text", "seen")

    def __init__(self, state: State | None) -> None:
        self.state = state
        self.moves: list[Action] | None = None
        self.text: str | None = None
        self.seen: dict[int, str] = {}  # observation string per player

    def __deepcopy__(self, memo: dict) -> _Box:
        box = _Box(None if self.state is None else self.state.clone())
        box.moves, box.text, box.seen = self.moves, self.text, self.seen
        return box

    def moved(self) -> None:
        """Forget what described the position before a move."""
        self.moves, self.text, self.seen = None, None, {}


class RoundhouseState(pyspiel.State):
    """A position: the chance node of the setup, or the engine's state.

    pyspiel clones a Python state with a generic deep copy of its attributes, so the state
    keeps plain values (title, players, range_values, setup_seeds) and the engine state in
    a box whose copy is ``State.clone``."""

    def __init__(self, game: RoundhouseGame) -> None:
        super().__init__(game)
        self._title = game.title
        self._players = game.players
        self._setup_seeds = game.setup_seeds
        self._range_values = game.range_values
        self._box = _Box(None)
        if not RANDOM_SETUP[game.title]:
            self._box.state = game.engine.new_state(game.players, 0)

    @property
    def engine(self) -> State | None:
        """The engine's state (``None`` at the setup's chance node)."""
        return self._box.state

    # -------------------------------------------------------------- pyspiel API

    def current_player(self) -> int:
        engine = self._box.state
        if engine is None:
            return pyspiel.PlayerId.CHANCE
        if engine.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return min(engine.active_seats())

    def _current_moves(self) -> list[Action]:
        box = self._box
        if box.moves is None:
            box.moves = moves(box.state, self.current_player(), self._range_values)
        return box.moves

    def _legal_actions(self, player: int) -> list[int]:
        engine = self._box.state
        if engine is None or engine.is_terminal() or player != self.current_player():
            return []
        return list(range(len(self._current_moves())))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        n = self._setup_seeds
        return [(j, 1.0 / n) for j in range(n)]

    def _apply_action(self, action: int) -> None:
        box = self._box
        if box.state is None:
            box.moved()
            box.state = get_game(self._title).new_state(self._players, int(action))
            return
        move = self._current_moves()[action]
        box.state.apply(self.current_player(), move)
        box.moved()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"setup seed {action}"
        if self._box.state is not None and player == self.current_player():
            current = self._current_moves()
            if 0 <= action < len(current):
                return canonical_json(current[action].to_json())
        return f"move #{action}"

    def is_terminal(self) -> bool:
        engine = self._box.state
        return engine is not None and engine.is_terminal()

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._players
        ranks = self._box.state.result().ranks
        winners = sum(1 for r in ranks if r == 1)
        return [1.0 / winners if r == 1 else 0.0 for r in ranks]

    def __str__(self) -> str:
        """The spectator's view as canonical JSON (everything public)."""
        box = self._box
        if box.state is None:
            return "setup (chance)"
        if box.text is None:
            box.text = canonical_json(box.state.view(None))
        return box.text


class ViewObserver:
    """Observation strings only: the canonical JSON of the seat's view."""

    def __init__(self, params: dict | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: RoundhouseState, player: int) -> None:
        """No tensor: nothing to set."""

    def string_from(self, state: RoundhouseState, player: int) -> str:
        box = state._box
        if box.state is None:
            return "setup"
        text = box.seen.get(player)
        if text is None:
            text = box.seen[player] = canonical_json(box.state.view(player))
        return text


def _register(title: str) -> type[RoundhouseGame]:
    cls = type(f"Roundhouse_{title}", (RoundhouseGame,), {"title": title})
    engine = get_game(title)
    pyspiel.register_game(_game_type(title, engine.max_players, engine.min_players), cls)
    return cls


GAME_CLASSES = {title: _register(title) for title in TITLES}
