"""The engine contract shared by every title.

Modelled on OpenSpiel's ``Game``/``State`` split and 18xx.games' typed action log
(the target architecture, "Engine contract"; docs/architecture.md).

A title provides one :class:`Game` object (registered by short name in
:mod:`services.rules.titles`) whose :meth:`Game.new_state` returns a
:class:`State`.  Everything a service, a bot or a test needs goes through this
contract:

>>> from services.rules.titles import get_game
>>> game = get_game("railbarons")
>>> state = game.new_state(4, seed=7)
>>> seat = state.active_seats()[0]
>>> action = choose_uniform(state.legal_actions(seat), SeededRandom(1))
>>> events = state.apply(seat, action)
>>> state.version
1

Rules for implementers:

* ``legal_actions`` lists every action ``apply`` accepts and no other; where
  ``apply`` accepts a whole range of one integer field it lists one
  :class:`ActionRange` instead of the values one by one (or a sample of them).
* ``apply`` validates first and raises :class:`IllegalAction` (or its subclass
  :class:`MalformedAction`) **before** it changes anything.
* Everything random comes from the state's own :class:`~services.kernel.rng.SeededRandom`.
  Same seed and same actions give the same state, on every machine.
* ``view(seat)`` is the one place that decides what a seat (or a spectator,
  ``seat=None``) may see. Hidden information and the seed never appear in it.
* Engines are pure: no imports of grpc, redis, celery, time or os.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from services.kernel import jsontext
from services.kernel.rng import SeededRandom

Seat = int
"""A seat index, ``0 .. num_players - 1``. Spectators are ``None``."""

Event = dict[str, Any]
"""One thing an action caused, as a JSON-able dict with a ``"type"`` key."""

JSON = Any


class IllegalAction(Exception):
    """An action the rules refuse.

    Attributes:
        code: short machine-readable identifier, e.g. ``"not_your_turn"``,
            ``"insufficient_cash"``, ``"dial_in_red"``.
        reason: a sentence for humans naming the rule that forbids the move,
            ideally with the spec section, e.g.
            ``"§7: mountains hold one company's locomotive only"``.
        details: the numbers the refusal is about, by name, as well as in ``reason``
            (``cash``, ``cost``, ``min_bid``, ``amount``, ...: whole units of the game's money),
            so that a client never parses the sentence.

    Services map it to gRPC ``FAILED_PRECONDITION``, ``details`` to the ErrorInfo metadata
    (HTTP: the error's ``details``).
    """

    def __init__(self, code: str, reason: str, **details: int | str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.details: dict[str, int | str] = details


class MalformedAction(IllegalAction):
    """An action that is not well-formed at all (unknown type, missing or
    mistyped field, unknown id).  Services map it to gRPC ``INVALID_ARGUMENT``."""


class InvalidOptions(ValueError):
    """Game options that do not validate against the title's option schema."""


def canonical_json(obj: JSON) -> str:
    """The canonical text form of a JSON-able value: sorted keys, no spaces.

    Two equal values always give byte-identical text, so the text can be
    hashed, compared and appended to logs.
    """
    return _CANONICAL.encode(obj)


# what json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
# does, without building a new encoder on every call
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- actions


@dataclasses.dataclass(frozen=True, slots=True)
class Action:
    """Base of every typed action: a small immutable value object.

    Subclasses are frozen dataclasses that set the class variable ``TYPE``
    (the ``"type"`` of the canonical JSON form) and declare their fields with
    plain types: ``int``, ``str``, ``bool``, ``tuple[str, ...]``,
    ``tuple[int, ...]`` or ``X | None``.

    >>> @dataclasses.dataclass(frozen=True, slots=True)
    ... class Bid(Action):
    ...     TYPE: ClassVar[str] = "bid"
    ...     amount: int
    >>> Bid(7).to_json()
    {'type': 'bid', 'amount': 7}
    """

    TYPE: ClassVar[str] = ""

    def to_json(self) -> dict[str, JSON]:
        """The canonical JSON form: ``{"type": TYPE, field: value, ...}``.
        Tuples become lists."""
        out: dict[str, JSON] = {"type": self.TYPE}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def __str__(self) -> str:  # compact, for logs and the CLI
        args = " ".join(f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self))
        return f"{self.TYPE} {args}".strip()


A = TypeVar("A", bound=Action)


class ActionCodec:
    """Decodes the canonical JSON form of a title's actions back into typed
    :class:`Action` objects, checking every field's type.

    Raises :class:`MalformedAction` for an unknown ``type``, a missing or
    extra field, or a value of the wrong type. Semantics (is this company id
    known? is this move legal now?) are the state's business, not the codec's.
    """

    def __init__(self, action_classes: Iterable[type[Action]]) -> None:
        self._classes: dict[str, type[Action]] = {}
        self._fields: dict[str, list[tuple[str, Any, bool]]] = {}
        for cls in action_classes:
            if not cls.TYPE or cls.TYPE in self._classes:
                raise ValueError(f"action class {cls.__name__} needs a unique TYPE")
            self._classes[cls.TYPE] = cls
            hints = typing.get_type_hints(cls)
            self._fields[cls.TYPE] = [
                (f.name, hints[f.name], f.default is not dataclasses.MISSING)
                for f in dataclasses.fields(cls)
            ]

    @property
    def types(self) -> tuple[str, ...]:
        """The action types this codec knows, in registration order."""
        return tuple(self._classes)

    @property
    def classes(self) -> tuple[type[Action], ...]:
        """The action classes this codec knows, in registration order (their fields, types and
        docstrings are the source of the API's action schemas: :mod:`services.kernel.schema`)."""
        return tuple(self._classes.values())

    def decode(self, obj: JSON) -> Action:
        """Turn ``{"type": ..., fields...}`` (a dict, or its JSON text) into an Action."""
        if isinstance(obj, (str, bytes)):
            try:
                obj = jsontext.loads(obj, "action")
            except jsontext.BadJSONText as exc:
                raise MalformedAction(exc.reason, str(exc)) from None
        if not isinstance(obj, Mapping):
            raise MalformedAction("bad_action", "an action must be a JSON object")
        kind = obj.get("type")
        cls = self._classes.get(kind) if isinstance(kind, str) else None
        if cls is None or not isinstance(kind, str):
            raise MalformedAction(
                "unknown_action_type",
                f"unknown action type {kind!r}; expected one of {', '.join(self._classes)}",
            )
        spec = self._fields[kind]
        extra = set(obj) - {"type"} - {name for name, _, _ in spec}
        if extra:
            raise MalformedAction(
                "unexpected_field", f"{kind}: unexpected field(s) {', '.join(sorted(extra))}"
            )
        kwargs = {}
        for name, hint, optional in spec:
            if name not in obj:
                if optional:
                    continue
                raise MalformedAction("missing_field", f"{kind}: missing field {name!r}")
            kwargs[name] = _coerce(kind, name, hint, obj[name])
        return cls(**kwargs)


def _coerce(kind: str, name: str, hint: Any, value: JSON) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _coerce(kind, name, inner[0], value)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise MalformedAction("bad_field", f"{kind}.{name} must be a list")
        elem = args[0]
        return tuple(_coerce(kind, name, elem, v) for v in value)
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is str:
        if isinstance(value, str):
            return value
    elif hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    else:  # pragma: no cover - programming error in a title
        raise TypeError(f"unsupported action field type {hint!r}")
    raise MalformedAction(
        "bad_field", f"{kind}.{name} must be {getattr(hint, '__name__', hint)}, got {value!r}"
    )


# --------------------------------------------------------------------------- ranged actions


@typing.final  # never subclassed: ``type(e) is ActionRange`` tells the two kinds of entry apart
@dataclasses.dataclass(frozen=True, slots=True)
class ActionRange:
    """Several legal actions at once: ``action`` with its integer field ``field`` set to any
    of ``min, min + step, ..., max`` (both bounds inclusive, both legal).

    ``State.legal_actions`` returns it beside plain actions where ``apply`` accepts a whole
    range of one field (a train bought from another 18xx corporation for any price from 1 to
    the buyer's means, a bid in multiples of 5). ``action`` is itself the member at ``min``,
    so every field of a range is a concrete value; units are those of the field (francs for
    1894 prices).

    >>> @dataclasses.dataclass(frozen=True, slots=True)
    ... class Bid(Action):
    ...     TYPE: ClassVar[str] = "bid"
    ...     amount: int
    >>> bids = ActionRange.of(Bid(0), "amount", 25, 42, step=5)
    >>> bids.min, bids.max, len(bids), list(bids.values())
    (25, 40, 4, [25, 30, 35, 40])
    >>> bids.contains(Bid(30)), bids.contains(Bid(31)), bids.at(35)
    (True, False, Bid(amount=35))
    >>> bids.to_json()
    {'action': {'type': 'bid', 'amount': 25}, 'field': 'amount', 'min': 25, 'max': 40, 'step': 5}

    Raises (on construction):
        ValueError: ``field`` is not an ``int`` field of ``action``, ``action``'s value of it
            is not ``min``, ``step < 1``, ``max < min`` or ``max - min`` not a multiple of
            ``step``.
    """

    action: Action
    field: str
    min: int
    max: int
    step: int = 1

    def __post_init__(self) -> None:
        value = getattr(self.action, self.field, None)
        if type(value) is not int:
            raise ValueError(f"{self.action.TYPE} has no int field {self.field!r}")
        if value != self.min:
            raise ValueError(f"a range's action carries its minimum ({self.min}), not {value}")
        if self.step < 1 or self.max < self.min or (self.max - self.min) % self.step:
            raise ValueError(f"bad range {self.min}..{self.max} step {self.step}")

    @classmethod
    def of(cls, action: Action, field: str, lo: int, hi: int, step: int = 1) -> ActionRange | None:
        """The range of ``lo, lo + step, ...`` up to ``hi`` (``hi`` rounded down onto the
        steps) for ``action``'s ``field`` (whatever value ``action`` has there); ``None``
        when it is empty (``hi < lo``)."""
        if hi < lo:
            return None
        top = lo + (hi - lo) // step * step
        return cls(dataclasses.replace(action, **{field: lo}), field, lo, top, step)

    def __len__(self) -> int:
        """The number of concrete actions in the range."""
        return (self.max - self.min) // self.step + 1

    def values(self) -> range:
        """The field's legal values, lowest first."""
        return range(self.min, self.max + 1, self.step)

    def at(self, value: int) -> Action:
        """The concrete action with ``field = value``.

        Raises:
            ValueError: ``value`` is not in the range.
        """
        if not (self.min <= value <= self.max and (value - self.min) % self.step == 0):
            raise ValueError(f"{value} is not in {self.min}..{self.max} step {self.step}")
        return dataclasses.replace(self.action, **{self.field: value})

    def actions(self) -> Iterator[Action]:
        """Every concrete action of the range, lowest value first."""
        for value in self.values():
            yield dataclasses.replace(self.action, **{self.field: value})

    def contains(self, action: Action) -> bool:
        """Whether ``action`` is one of the range's concrete actions."""
        if type(action) is not type(self.action):
            return False
        value = getattr(action, self.field)
        if type(value) is not int or not self.min <= value <= self.max:
            return False
        if (value - self.min) % self.step:
            return False
        return dataclasses.replace(action, **{self.field: self.min}) == self.action

    def sample(self, rng: SeededRandom) -> Action:
        """A concrete action drawn uniformly from the range with ``rng``."""
        return self.at(self.min + rng.randbelow(len(self)) * self.step)

    def to_json(self) -> dict[str, JSON]:
        """``{"action": <action at min>, "field": ..., "min": ..., "max": ..., "step": ...}``."""
        return {
            "action": self.action.to_json(),
            "field": self.field,
            "min": self.min,
            "max": self.max,
            "step": self.step,
        }

    def __str__(self) -> str:  # for logs and the CLI: "buy_train train=2-1 price=1..630"
        span = f"{self.min}..{self.max}" + (f"/{self.step}" if self.step != 1 else "")
        return str(self.action).replace(f"{self.field}={self.min}", f"{self.field}={span}", 1)


LegalAction = Action | ActionRange
"""One entry of ``State.legal_actions``: a plain action or a range of them."""


def legal_count(legal: Sequence[LegalAction]) -> int:
    """The number of concrete actions the entries stand for (a range counts its size)."""
    return sum(len(e) if type(e) is ActionRange else 1 for e in legal)


def concrete_actions(legal: Iterable[LegalAction]) -> Iterator[Action]:
    """Every concrete action of the entries, in their order (a range lowest value first)."""
    for e in legal:
        if type(e) is ActionRange:
            yield from e.actions()
        else:
            yield e


def is_listed(legal: Iterable[LegalAction], action: Action) -> bool:
    """Whether ``action`` is a plain entry of ``legal`` or inside one of its ranges."""
    for e in legal:
        if type(e) is ActionRange:
            if e.contains(action):
                return True
        elif e == action:
            return True
    return False


def choose_uniform(legal: Sequence[LegalAction], rng: SeededRandom) -> Action:
    """A concrete action drawn uniformly among all the entries stand for: a range weighs as
    many times as it has values. Without ranges this is ``rng.choice(legal)`` (same draws).

    Raises:
        ValueError: ``legal`` is empty.
    """
    for e in legal:
        if type(e) is ActionRange:
            break
    else:  # no range (or nothing: randbelow(0) raises ValueError)
        plain = legal[rng.randbelow(len(legal))]
        assert type(plain) is not ActionRange  # the loop found none
        return plain
    k = rng.randbelow(legal_count(legal))
    for e in legal:
        size = len(e) if type(e) is ActionRange else 1
        if k < size:
            return e.at(e.min + k * e.step) if type(e) is ActionRange else e
        k -= size
    raise AssertionError("unreachable")  # pragma: no cover


def choose_per_entry(legal: Sequence[LegalAction], rng: SeededRandom) -> Action:
    """An entry drawn uniformly, then for a range a value drawn uniformly: every entry weighs
    the same whatever its size. Not uniform over concrete actions (that is
    :func:`choose_uniform`); the contract tests and the benchmarks play random games with it
    so that a range of hundreds of prices does not drown the other moves. Without ranges
    this is ``rng.choice(legal)`` (same draws).

    Raises:
        ValueError: ``legal`` is empty.
    """
    entry = legal[rng.randbelow(len(legal))]  # randbelow(0) raises ValueError
    return entry.sample(rng) if type(entry) is ActionRange else entry


def legal_from_json(codec: ActionCodec, obj: JSON) -> LegalAction:
    """Decode one entry's JSON form: an action's canonical JSON or an
    :meth:`ActionRange.to_json` object.

    Raises:
        MalformedAction: neither form, or a range that does not hold together.
    """
    if isinstance(obj, Mapping) and "action" in obj and "type" not in obj:
        extra = set(obj) - {"action", "field", "min", "max", "step"}
        if extra:
            raise MalformedAction("unexpected_field", f"range: unexpected {sorted(extra)}")
        fields = {k: obj.get(k) for k in ("field", "min", "max", "step")}
        if not isinstance(fields["field"], str) or not all(
            type(fields[k]) is int for k in ("min", "max", "step")
        ):
            raise MalformedAction("bad_range", "a range needs field (str), min, max, step (int)")
        field, low, high, step = (fields[k] for k in ("field", "min", "max", "step"))
        assert isinstance(field, str) and type(low) is type(high) is type(step) is int
        try:
            return ActionRange(codec.decode(obj["action"]), field, low, high, step)
        except ValueError as exc:
            raise MalformedAction("bad_range", str(exc)) from None
    return codec.decode(obj)


# --------------------------------------------------------------------------- results


@dataclasses.dataclass(frozen=True, slots=True)
class Result:
    """The outcome of a finished game.

    Attributes:
        scores: one score per seat, in the title's unit (dollars for Chicago
            Express, points for Russian Railroads, francs for 1894).
        ranks: one rank per seat, 1 = winner; tied seats share a rank
            ("1, 1, 3" competition ranking).
        end_reason: the rule that ended the game, e.g. ``"detroit_8"``.
    """

    scores: tuple[int | float, ...]
    ranks: tuple[int, ...]
    end_reason: str

    @classmethod
    def from_scores(
        cls, scores: Sequence[int | float], end_reason: str, tiebreak: Sequence[Any] | None = None
    ) -> Result:
        """Rank seats by score (higher is better), then by ``tiebreak`` when
        given (higher is better); equal keys share a rank."""
        keys = [(s, tiebreak[i] if tiebreak else 0) for i, s in enumerate(scores)]
        ranks = tuple(1 + sum(1 for other in keys if other > k) for k in keys)
        return cls(tuple(scores), ranks, end_reason)

    def to_json(self) -> dict[str, JSON]:
        return {
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "end_reason": self.end_reason,
        }


# --------------------------------------------------------------------------- options


class Options(BaseModel):
    """Base of every title's option model. Each field is one named, documented
    rule choice; its default is the spec's choice."""

    model_config = ConfigDict(extra="forbid", frozen=True)


O = TypeVar("O", bound=Options)


# --------------------------------------------------------------------------- game / state


class Game(ABC, Generic[O]):
    """A title: its id, rules version, player range and option schema.

    Subclasses set the class attributes and implement :meth:`_new_state`.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    rules_version: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    options_model: ClassVar[type[Options]]
    codec: ClassVar[ActionCodec]

    def parse_options(self, options: Mapping[str, Any] | Options | None = None) -> O:
        """Validate a mapping of options into the title's option model.

        Raises:
            InvalidOptions: with pydantic's explanation, for unknown names or bad values.
        """
        # options_model is the model O stands for; a ClassVar cannot name a type variable, so
        # the type checker is told here
        if isinstance(options, self.options_model):
            return cast(O, options)
        try:
            return cast(O, self.options_model.model_validate(dict(options or {})))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg']}" for e in exc.errors()
            )
            raise InvalidOptions(f"{self.id} options: {problems}") from None

    def parse_options_json(self, text: str) -> O:
        """Options given as JSON text (``""`` = defaults), as in the service APIs.

        Raises:
            InvalidOptions: not a JSON object, or options that do not validate.
        """
        try:
            obj = jsontext.loads(text, "options_json") if text else {}
        except jsontext.BadJSONText as exc:
            raise InvalidOptions(str(exc)) from None
        if not isinstance(obj, dict):
            raise InvalidOptions("options_json must be a JSON object")
        return self.parse_options(obj)

    def options_schema(self) -> dict[str, JSON]:
        """JSON Schema of the options, with each field's description and default."""
        return self.options_model.model_json_schema()

    def parse_action(self, obj: JSON) -> Action:
        """Decode an action's canonical JSON form. Raises :class:`MalformedAction`."""
        return self.codec.decode(obj)

    def new_state(
        self, num_players: int, seed: int, options: Mapping[str, Any] | Options | None = None
    ) -> State:
        """A new game at its first decision.

        Args:
            num_players: number of seats, ``min_players .. max_players``.
            seed: any integer; all randomness of the game derives from it.
            options: the title's options (see :meth:`options_schema`).

        Raises:
            InvalidOptions: bad player count or options.
        """
        if not isinstance(num_players, int) or not (
            self.min_players <= num_players <= self.max_players
        ):
            raise InvalidOptions(
                f"{self.id} takes {self.min_players} to {self.max_players} players, "
                f"got {num_players}"
            )
        if not isinstance(seed, int):
            raise InvalidOptions(f"seed must be an integer, got {seed!r}")
        return self._new_state(num_players, seed, self.parse_options(options))

    @abstractmethod
    def _new_state(self, num_players: int, seed: int, options: O) -> State: ...

    def describe(self, state: State, action: LegalAction) -> str:
        """The move ``action`` of ``state`` in words, in the title's own terms and with the
        real names of its data: ``"Bid $12 on PRR"``, ``"Lay tile 57 on H17 (Lille),
        rotation 2"``, ``"Place 2 workers on T-BLK-1 (2 black steps)"``. A range
        (:class:`ActionRange`) is described with its span: ``"Buy 2-train 2-1 from Nord for
        1-630 F"``.

        ``action`` is an entry of ``state.legal_actions(seat)`` for an active seat (the
        label is computed on the state *before* the move). Labels of the entries legal at
        once are unique and never empty (the generic contract test checks it), and never
        name anything hidden from other seats: a streamed move's label goes to every
        watcher. Pure and cheap: it reads the state, never changes it.

        This default gives the action's compact form (``"bid amount=12"``); every title
        overrides it.
        """
        return str(action)

    def describe_all(self, state: State, legal: Sequence[LegalAction]) -> list[str]:
        """:meth:`describe` of each entry of ``legal`` (one ``legal_actions`` answer), in
        order."""
        return [self.describe(state, entry) for entry in legal]

    def summarize_view(self, view: dict[str, JSON], num_players: int) -> list[str]:
        """One short line of text per seat, in seat order (cash, holdings, score, who is to
        act...), built from ``view`` alone (a value of ``State.view``), so it shows
        exactly what that view's viewer may see and never hidden information.

        This default names the seats only; every title overrides it.
        """
        return [f"Seat {s}" for s in range(num_players)]

    def seat_summaries(self, state: State, viewer: Seat | None) -> list[str]:
        """:meth:`summarize_view` of ``state.view(viewer)``: one line per seat as
        ``viewer`` (a seat, or ``None`` for a spectator) may see it."""
        return self.summarize_view(state.view(viewer), state.num_players)

    def state_from_view(self, view: dict[str, JSON], seat: Seat | None, seed: int) -> State:
        """Determinisation: a full :class:`State` consistent with everything
        ``seat`` sees in ``view`` (a value returned by ``State.view(seat)``),
        with whatever that seat cannot see (hidden cards, deck order, future
        draws) sampled from ``seed``.

        Bots use it: they only ever receive views from the rules service, and
        simulate on the returned state (the greedy and search policies). For a
        title without hidden information the result equals the real state in
        every public respect; in all titles these must hold::

            s = game.state_from_view(state.view(seat), seat, seed)
            s.view(seat) == state.view(seat)
            s.legal_actions(seat) == state.legal_actions(seat)   # when seat is active
            s.active_seats() == state.active_seats()

        So a view must carry everything public that the rules need (including
        the pending decision and its history within the round).

        Raises:
            MalformedAction: the view is not a view of this title.
        """
        raise NotImplementedError(f"{self.id} does not implement state_from_view")

    def replay(
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, Any] | Options | None,
        log: Iterable[tuple[Seat, Action | JSON]],
    ) -> State:
        """Rebuild a state from its log: ``(seat, action)`` pairs in order.
        Actions may be typed or in canonical JSON form.

        Raises:
            IllegalAction: the first entry the rules refuse.
        """
        state = self.new_state(num_players, seed, options)
        for seat, action in log:
            if not isinstance(action, Action):
                action = self.parse_action(action)
            state.apply(seat, action)
        return state


class State(ABC):
    """One position of a game. Mutable; :meth:`clone` gives an independent copy.

    Attributes:
        game: the :class:`Game` this state belongs to.
        num_players: number of seats.
        version: number of actions applied so far (0 for a new game).
    """

    game: Game[Any]
    num_players: int
    version: int

    @abstractmethod
    def active_seats(self) -> tuple[Seat, ...]:
        """Seats that may act now; more than one where the rules let several
        seats act. Empty when the game is over."""

    @abstractmethod
    def legal_actions(self, seat: Seat) -> list[LegalAction]:
        """Every action ``seat`` may take now, in a stable order. Empty for a
        seat that is not active.

        The whole truth: ``apply`` accepts exactly the actions listed here. An
        entry is a plain :class:`Action`, or an :class:`ActionRange` where
        ``apply`` accepts every value of one integer field between two bounds
        (a price, a bid); then every value in the range is accepted and none
        outside it. Enumerate with :func:`concrete_actions`, draw with
        :func:`choose_uniform`, test with :func:`is_listed`.
        """

    @abstractmethod
    def apply(self, seat: Seat, action: Action) -> list[Event]:
        """Check and apply ``action`` for ``seat``; ``version`` goes up by one.

        Returns:
            the events it caused, each a JSON-able dict with a ``"type"``.

        Raises:
            IllegalAction: the rules forbid it now (``not_your_turn``,
                ``game_over`` or a title-specific code); nothing changed.
            MalformedAction: the action names things that do not exist.
        """

    @abstractmethod
    def is_terminal(self) -> bool:
        """True once the game is over."""

    @abstractmethod
    def result(self) -> Result:
        """The final scores and ranks. Raises :class:`IllegalAction`
        (``game_not_over``) before the end."""

    @abstractmethod
    def view(self, seat: Seat | None) -> dict[str, JSON]:
        """What ``seat`` (or a spectator, ``None``) may see, as JSON: a dict whose
        ``"viewer"`` is ``seat`` (``None`` for a spectator), the one envelope of every title.
        Contains no hidden information of other seats and never the seed."""

    @abstractmethod
    def clone(self) -> State:
        """An independent deep copy: applying to one never changes the other."""

    @abstractmethod
    def to_json(self) -> dict[str, JSON]:
        """Canonical JSON of the whole state, hidden information included.
        Equal states give equal JSON. For the rules service and tests only."""

    # ------------------------------------------------------------ helpers for implementers

    def _check_turn(self, seat: Seat) -> None:
        """Raise ``game_over`` / ``not_your_turn`` as appropriate."""
        if self.is_terminal():
            raise IllegalAction("game_over", "the game is over; no more actions are accepted")
        if seat not in self.active_seats():
            raise IllegalAction(
                "not_your_turn",
                f"seat {seat} may not act now; active seats: {list(self.active_seats())}",
            )
