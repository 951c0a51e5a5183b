"""Rule options of Russian Railroads (transsib).

Every rule the spec (``transsib.md``) tags as uncertain ([U] unverified, [?] unknown, and
[P] where the spec says the value is in doubt) that is a single value is one field here; its
default is the spec's best value (read from ``data/transsib.json`` where the data file holds
it) and its description names the tag and the spec section. Whole tables the spec leaves open
(engineers, factory actions, "?" tokens and cards, end bonus cards, special spaces) are data
entries with their tag in ``data/transsib.json``. ``docs/transsib-assumptions.md`` lists both.

:class:`Rules` is the options compiled into the lookup tables the hot paths use; it is built
once per distinct options value and shared by every state that uses it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from services.kernel.engine import Options
from services.transsib.engine import data as D

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.placement import SpaceRow, VariantTable


class TranssibOptions(Options):
    """Russian Railroads rule options; every default follows the spec."""

    # ---- §4.3 coins standing in for workers
    coins_substitute_workers: bool = Field(
        True,
        description="§4.3 [P]: a coin may stand in for a worker on an action space (1 coin = "
        "1 worker); the coins go to the bank.",
    )
    coins_on_multi_worker_spaces: bool = Field(
        True,
        description="§4.3 [U]: coins may also fill spaces needing 2 or 3 workers "
        "(False: only 1-worker spaces).",
    )
    coins_mixing_allowed: bool = Field(
        True,
        description="§4.3 [U]: coins and workers may be mixed on one space "
        "(False: a multi-worker space takes all workers or all coins).",
    )
    # ---- §5.4 temporary workers
    temp_workers_space_in_2p: bool = Field(
        True,
        description="§5.4/§16 [?]: the turquoise-worker space (A-TEMP) exists on the "
        "2-player board side.",
    )
    temp_workers_cost: int = Field(1, ge=1, le=3, description="§5.4 [P]: workers needed on A-TEMP.")
    # ---- §5.5 / §11 turn order
    forbid_claiming_own_position: bool = Field(
        True,
        description="§5.5 [P]: with 3-4 players you may not claim the turn position you "
        "already hold.",
    )
    two_player_first_may_take_o1: bool = Field(
        True,
        description="§5.5 [P]: with 2 players the current first player may take O-1.",
    )
    pass_points: tuple[int, int, int, int] = Field(
        tuple(D.RAW["turn_order"]["pass_points_by_card"]["value"]),
        description="§11.4 [U]: points on the backs of turn-order cards 1..4, scored when passing.",
    )
    pass_points_follow: Literal["dealt_card", "turn_position"] = Field(
        "dealt_card",
        description="§11.4 [U]: 'dealt_card' = each player keeps the card dealt at setup all "
        "game; 'turn_position' = the card (and its pass points) follow the current turn "
        "position.",
    )
    # ---- §14.2 last round
    last_round_tile: Literal["industry_3", "cover_only", "none"] = Field(
        "industry_3",
        description="§14.2 [U]: the last-round tile covers the turn-order spaces; "
        "'industry_3' = it offers a 1-worker space with 3 industry steps (LR-IND); "
        "'cover_only' = it only covers them; 'none' = no tile, turn order stays open.",
    )
    # ---- §12 "?" bonuses, Kiev medal
    question_bonus_choice: Literal["token_or_card", "token_only"] = Field(
        "token_or_card",
        description="§12.1 [U]: a '?' bonus lets you take one of your '?' tokens or one free "
        "'?' card ('token_only': the cards are never offered).",
    )
    kiev_medal_points: int = Field(
        D.RAW["kiev_medal"]["points_per_round"],
        ge=0,
        description="§12.3 [U]: points the activated Kiev medal scores at every later round "
        "scoring.",
    )
    kiev_medal_condition: Literal["none", "kiev_end_track", "kiev_end_reach"] = Field(
        "none",
        description="§12.3 [U]: condition for the medal to score: 'none' (Ultimate analogue), "
        "'kiev_end_track' (your track reaches Kiev's last space), 'kiev_end_reach' (track and "
        "locomotive reach it).",
    )
    # ---- §8 industry
    second_marker_activation_steps: int = Field(
        2,
        ge=0,
        le=5,
        description="§8.3 [U]: industry steps the second industry marker takes when the '?' "
        "token activates it (Ultimate: 2).",
    )
    industry_start_zero_field: bool = Field(
        False,
        description="§8.1 [U]: the markers start on a separate 0-point field before B1 "
        "(False: they start on B1, the spec's reading).",
    )
    industry_board_points: tuple[int, int, int, int, int, int, int, int, int] = Field(
        tuple(D.RAW["industry_track"]["board_field_points"]),
        description="§8.1 [P, sources disagree]: points of the nine board fields B1..B9; a "
        "factory field scores the previous board field.",
    )
    industry_board_steps_may_be_lost: bool = Field(
        False,
        description="§4.4 vs §8.2 [?]: whether an industry action space may be taken when not "
        "all of its steps can be made (False: competed actions must be performable in full, "
        "§4.4; steps from factories, tokens and bonuses may always be lost, §8.2).",
    )
    track_board_steps_may_be_lost: bool = Field(
        False,
        description="§4.4 vs §5.1 [?]: whether a competed track action (board space, public "
        "engineer, reused space) may be taken when not all of its steps can be made; the "
        "steps that cannot be made are lost (False: it must be fully usable, §4.4, §5.1 "
        "'you may not take that action'). Mirrors industry_board_steps_may_be_lost.",
    )
    track_colour_order_strict: bool = Field(
        True,
        description="§5.1 [V base game; editions differ]: a colour's marker stays strictly "
        "behind the marker of the colour ahead on its line, never catching up with or "
        "overtaking it (False: it may catch up with it, moving onto its space, but never "
        "pass it; the shared space scores the rear colour).",
    )
    # ---- §4.4 order within a turn
    gained_actions_order: Literal["any", "fixed"] = Field(
        "any",
        description="§4.4 [V, Yucata clarifications agreed with the author and publisher for "
        "the licensed online version]: 'any' = actions gained during a turn ('?' bonuses of "
        "special spaces) may be carried out in any order, e.g. before the remaining steps of "
        "the action that gained them; 'fixed' = each is carried out only after the action "
        "that gained it is complete, in the order gained (the engine's earlier reading). "
        "End bonus cards are always chosen at the end of the turn.",
    )
    start_bonus_industry_steps: int = Field(
        1, ge=1, le=3, description="§3.3 [U]: industry steps of the 'industry' starting card."
    )
    # ---- §9 doublers, black worker
    doubler_supply: int = Field(
        D.RAW["components"]["doublers"],
        ge=0,
        description="§9 [V count]: doublers in the general supply.",
    )
    doubler_supply_limited: bool = Field(
        True, description="§9 [?]: the doubler supply is a hard limit."
    )
    doubler_spaces: tuple[int, int, int, int, int, int, int, int] = Field(
        tuple(D.RAW["doubler_space_to_transsib_space"]["value"]),
        description="§6.4 [U]: the Trans-Siberian space under each of the 8 doubler spaces, "
        "left to right.",
    )
    black_worker_black_track_only: bool = Field(
        False,
        description="§9 [U]: the black worker (from its '?' card) may only stand on "
        "black-track spaces (T-BLK-1, T-BLK-2).",
    )
    extra_workers_per_player: int = Field(
        2,
        ge=0,
        le=3,
        description="§2 [P]: permanent workers each player can still gain from the general "
        "supply (line specials).",
    )
    # ---- §6.2 revaluation
    revaluation_lines: Literal["all", "transsib"] = Field(
        "all",
        description="§6.2 [P]: the revaluation marker raises the colour values on all three "
        "lines ('transsib': on the Trans-Siberian only).",
    )
    # ---- §10 engineers, §15 final scoring
    upcoming_engineers_visible: bool = Field(
        True,
        description="§3.1/§10.1 [P]: the upcoming engineers lie dark side up and can be "
        "seen (False: they stay secret until they move onto a variable space).",
    )
    engineer_majority_points_2p: tuple[int, int] = Field(
        (40, 20),
        description="§10.3/§16 [U]: engineer majority payout (most, second most) with "
        "2 players (3-4 players: 40/20, [V]).",
    )
    end_bonus_selection: Literal["choose", "draw_top"] = Field(
        "choose",
        description="§15.1 [U]: an end bonus card is chosen from the face-down pile "
        "('choose', Yucata 'ausgewaehlt'; the pile is reshuffled afterwards) or drawn from "
        "the top ('draw_top').",
    )

    @field_validator("pass_points", "industry_board_points", "doubler_spaces")
    @classmethod
    def _non_negative(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(x < 0 for x in v):
            raise ValueError("values must be >= 0")
        return v

    @field_validator("doubler_spaces")
    @classmethod
    def _on_the_line(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 1 <= x <= D.LINE_LENGTH[D.TS] for x in v):
            raise ValueError("doubler spaces must be Trans-Siberian spaces 1..15")
        if len(set(v)) != len(v):
            # §6.4: each doubler space sits above its own Trans-Siberian space; a repeated
            # space would score that space three times or more
            raise ValueError("each doubler space sits above a different Trans-Siberian space")
        return v


class Rules:
    """Options compiled into the lookup tables the engine uses (immutable, shared).

    Attributes:
        options: the validated :class:`TranssibOptions`.
        programs: effect programs by key (space id, ``factory:N``, engineer id,
            ``token:ID``, ``card:ID``, ``start:ID``).
        field_points: points of each industry field (index = field; factory fields score the
            previous board field), starting field included.
        fields: ``B``/``F`` per field (a leading ``S`` start field when enabled).
        gap_fields: field index of each factory gap.
        start_field: the field both markers start on.
        track_gap: 1 when rail markers stay strictly behind the marker ahead, else 0.
        gained_any_order: whether gained "?" bonuses may be taken at any decision (§4.4).
    """

    __slots__ = (
        "options",
        "programs",
        "field_points",
        "fields",
        "gap_fields",
        "gap_of_field",
        "start_field",
        "industry_specials",
        "doubler_ts_space",
        "variant_cache",
        "space_cache",
        "track_gap",
        "gained_any_order",
    )

    def __init__(self, options: TranssibOptions) -> None:
        self.options = options
        programs: dict[str, D.Program] = {s.id: s.program for s in D.SPACES if s.program}
        programs["A-TEMP"] = ((D.OP_TEMP_WORKERS, D.TEMP_WORKERS, 0, 0),)
        for n in range(1, D.MAX_LOCO + 1):
            programs[f"factory:{n}"] = D.FACTORY_PROGRAMS[n]
        for e in D.ENGINEERS:
            programs[e.id] = e.program
        for tid, prog in zip(D.QUESTION_TOKENS, D.QUESTION_TOKEN_PROGRAMS, strict=True):
            programs[f"token:{tid}"] = prog
        for cid, prog in zip(D.QUESTION_CARDS, D.QUESTION_CARD_PROGRAMS, strict=True):
            programs[f"card:{cid}"] = prog
        for cid, prog in D.START_BONUS_PROGRAMS.items():
            if cid == "industry":
                prog = ((D.OP_INDUSTRY, options.start_bonus_industry_steps, 0, 0),)
            programs[f"start:{cid}"] = prog
        programs["second_marker"] = (
            ((D.OP_INDUSTRY, options.second_marker_activation_steps, 0, 0),)
            if options.second_marker_activation_steps
            else ()
        )
        self.programs = programs
        fields = list(D.INDUSTRY_STRUCTURE)
        points: list[int] = []
        board = iter(options.industry_board_points)
        last = 0
        for kind in fields:
            if kind == "B":
                last = next(board)
            points.append(last)
        offset = 0
        if options.industry_start_zero_field:
            fields.insert(0, "S")
            points.insert(0, 0)
            offset = 1
        self.fields = tuple(fields)
        self.field_points = tuple(points)
        self.gap_fields = tuple(i for i, k in enumerate(fields) if k == "F")
        self.gap_of_field = tuple(
            self.gap_fields.index(i) if k == "F" else -1 for i, k in enumerate(fields)
        )
        self.start_field = 0
        self.industry_specials = tuple((f + offset, kind) for f, kind in D.INDUSTRY_SPECIALS)
        self.doubler_ts_space = tuple(options.doubler_spaces)
        self.track_gap = 1 if options.track_colour_order_strict else 0
        """Spaces a rail marker stays behind the marker ahead at least (``lag`` in
        :mod:`.track`)."""
        self.gained_any_order = options.gained_actions_order == "any"
        self.variant_cache: dict[tuple[str, int, int], VariantTable] = {}
        """(space id, workers, coins) -> place actions by coins held and free workers."""
        self.space_cache: dict[
            tuple[int, bool, tuple[int, ...]], tuple[tuple[int, ...], tuple[SpaceRow, ...]]
        ] = {}
        """(players, last round, variable engineers) -> (spaces, per-round space table)."""


@lru_cache(maxsize=64)
def compile_rules(options: TranssibOptions) -> Rules:
    """The :class:`Rules` of an options value (cached: options are frozen and hashable)."""
    return Rules(options)
