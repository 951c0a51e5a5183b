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
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from services.kernel.engine import Options
from services.transsib.engine import data as D

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.placement import SpaceRow, VariantTable


def _opt(default: Any, status: str, source: str, text: str, **limits: Any) -> Any:
    """A rule option field: ``text`` (the rule, spec section first) with ``[status]`` and
    the sources in its description and, as ``status`` and ``source``, in its JSON schema."""
    return Field(
        default,
        description=f"{text.split(':', 1)[0]} [{status}]:{text.split(':', 1)[1]} "
        f"Sources: {source}.",
        json_schema_extra={"status": status, "source": source},
        **limits,
    )


class TranssibOptions(Options):
    """Russian Railroads rule options; every default follows the best public source.

    Each field's description starts with the spec section and the tag (``[V]`` two
    independent sources agree, ``[P]`` one source, ``[U]`` only the Ultimate edition or a
    hint, ``[?]`` no source), then names the sources (short names of
    ``docs/transsib-sources.md``). The same tag and sources are in the field's JSON schema
    (``status``, ``source``), read by :func:`.provenance.option_statuses`. Where sources
    disagree the option stays and its default is the licensed Yucata version's reading.
    """

    # ---- §4.3 coins standing in for workers
    coins_substitute_workers: bool = _opt(
        True,
        "V",
        "POESIE ('je eine Muenze fuer einen Arbeiter'), CHEAT ('Place as many workers/money as "
        "needed'), CZ-P13 (p.13 heading)",
        "§4.3: a coin may stand in for a worker on an action space (1 coin = 1 worker); the "
        "coins go to the bank.",
    )
    coins_on_multi_worker_spaces: bool = _opt(
        True,
        "P",
        "CHEAT ('as many workers/money as needed'); no source forbids it",
        "§4.3: coins may also fill spaces needing 2 or 3 workers (False: only 1-worker spaces).",
    )
    coins_mixing_allowed: bool = _opt(
        True,
        "P",
        "CHEAT (same wording); no source forbids it",
        "§4.3: coins and workers may be mixed on one space (False: a multi-worker space "
        "takes all workers or all coins).",
    )
    # ---- §5.4 temporary workers
    temp_workers_space_in_2p: bool = _opt(
        True,
        "?",
        "none: EMIL lists no card for it, but EMIL also leaves out other unblockable spaces",
        "§5.4/§16: the turquoise-worker space (A-TEMP) exists on the 2-player board side.",
    )
    temp_workers_cost: int = _opt(
        1,
        "P",
        "ULT ('1 worker'); the space is the third auxiliary action: SEED p.12, JAUREI",
        "§5.4: workers needed on A-TEMP.",
        ge=1,
        le=3,
    )
    # ---- §5.5 / §11 turn order
    forbid_claiming_own_position: bool = _opt(
        True,
        "P",
        "MOHR (game_board.py refuses the own position with more than 2 players)",
        "§5.5: with 3-4 players you may not claim the turn position you already hold.",
    )
    two_player_first_may_take_o1: bool = _opt(
        True,
        "P",
        "MOHR (allowed with 2 players)",
        "§5.5: with 2 players the current first player may take O-1.",
    )
    pass_points: tuple[int, int, int, int] = _opt(
        tuple(D.RAW["turn_order"]["pass_points_by_card"]["value"]),
        "P",
        "LEVY ('the player going first receives no Victory Points but second place, third "
        "place and fourth place players earn bonuses of 2, 3 or 4 VPs'); ETOILE (the first "
        "gets nothing); ULT's 0/2/4/6 is its own guess",
        "§11.4: points on the backs of turn-order cards 1..4, scored when passing.",
    )
    pass_points_follow: Literal["turn_position", "dealt_card"] = _opt(
        "turn_position",
        "P",
        "LEVY (the points go by 'second place, third place and fourth place' in the round); "
        "BOYCE (its round scoring asks for the turn position); the dealt-card reading has no "
        "source (it was the default before issue 27)",
        "§11.4: 'turn_position' = the pass points follow the current turn position (the "
        "turn-order cards follow the order); 'dealt_card' = each player keeps the card dealt "
        "at setup all game.",
    )
    # ---- §14.2 last round
    last_round_tile: Literal["industry_3", "cover_only", "none"] = _opt(
        "industry_3",
        "U",
        "the tile exists and is used in the last round: SEED p.2, HDRO (V); what it covers "
        "and offers: ULT only",
        "§14.2: the last-round tile covers the turn-order spaces; 'industry_3' = it offers a "
        "1-worker space with 3 industry steps (LR-IND); 'cover_only' = it only covers them; "
        "'none' = no tile, turn order stays open.",
    )
    # ---- §12 "?" bonuses, Kiev medal
    question_bonus_choice: Literal["token_or_card", "token_only"] = _opt(
        "token_or_card",
        "U",
        "none says how a '?' space is resolved; tokens optional, cards competed: YUC",
        "§12.1: a '?' bonus lets you take one of your '?' tokens or one free '?' card "
        "('token_only': the cards are never offered).",
    )
    kiev_medal_points: int = _opt(
        D.RAW["kiev_medal"]["points_per_round"],
        "P",
        "HALES ('a bonus that could net you 20 points/turn')",
        "§12.3: points the activated Kiev medal scores at every later round scoring.",
        ge=0,
    )
    kiev_medal_condition: Literal["kiev_grey", "none", "kiev_end_track", "kiev_end_reach"] = _opt(
        D.RAW["kiev_medal"]["condition"],
        "P",
        "HALES (on the Kiev line, 'a higher-than-average score for grey by taking a bonus "
        "that could net you 20 points/turn'); the exact condition is not stated; 'none' was "
        "the default before issue 27 (the Ultimate analogue, ULT)",
        "§12.3: condition for the medal to score: 'kiev_grey' (you have grey track on Kiev), "
        "'none', 'kiev_end_track' (your track reaches Kiev's last space), 'kiev_end_reach' "
        "(track and locomotive reach it).",
    )
    # ---- §8 industry
    second_marker_activation_steps: int = _opt(
        2,
        "U",
        "ULT ('second wrench', 2 steps); the second marker starts on an arrow: SEED p.4",
        "§8.3: industry steps the second industry marker takes when the '?' token activates it.",
        ge=0,
        le=5,
    )
    industry_start_zero_field: bool = _opt(
        False,
        "P",
        "IT-SUM ('sulla prima casella del Tracciato Industria'); ULT has a separate START 0 "
        "field (the Ultimate board)",
        "§8.1: the markers start on a separate 0-point field before B1 (False: they start on B1).",
    )
    industry_board_points: tuple[int, int, int, int, int, int, int, int, int] = _opt(
        tuple(D.RAW["industry_track"]["board_field_points"]),
        "P",
        "BOYCE (1, 2, 3, 5, 10, 15, 20, 25, 30: nine values for SEED p.11's nine board "
        "fields); sources disagree: RYTHOS has an extra 4, ULT a blank field and 50 at the end; "
        "the Yucata page's values could not be read, so the base-game scorer's list is the "
        "default",
        "§8.1: points of the nine board fields B1..B9; a factory field scores the previous "
        "board field.",
    )
    industry_board_steps_may_be_lost: bool = _opt(
        False,
        "V",
        "YUC ('Aktionen auf dem Spielplan ... MUESSEN immer komplett ausgefuehrt werden'), "
        "SEED p.5 ('akci je treba provest v plnem rozsahu')",
        "§4.4 vs §8.2: whether an industry action space may be taken when not all of its "
        "steps can be made (False: competed actions must be performable in full; steps from "
        "factories, tokens and bonuses may always be lost, §8.2).",
    )
    track_board_steps_may_be_lost: bool = _opt(
        False,
        "V",
        "YUC, SEED p.5 (as industry_board_steps_may_be_lost)",
        "§4.4 vs §5.1: whether a competed track action (board space, public engineer, "
        "reused space) may be taken when not all of its steps can be made; the steps that "
        "cannot be made are lost (False: it must be fully usable).",
    )
    track_colour_order_strict: bool = _opt(
        True,
        "V",
        "SEED p.7 (a colour never catches up with nor overtakes the colour ahead), BGA "
        "('Only one track can be placed on each railroad space')",
        "§5.1: a colour's marker stays strictly behind the marker of the colour ahead on its "
        "line (False: it may catch up with it, moving onto its space, but never pass it; the "
        "shared space scores the rear colour; for editions that print the rule so).",
    )
    # ---- §4.4 order within a turn
    gained_actions_order: Literal["any", "fixed"] = _opt(
        "any",
        "V",
        "YUC ('Aktionen, die man waehrend des Zuges bekommt, darf man in beliebiger "
        "Reihenfolge ausfuehren', agreed with the author and publisher); the BGA Ultimate "
        "help says the same",
        "§4.4: 'any' = actions gained during a turn ('?' bonuses of special spaces) may be "
        "carried out in any order, e.g. before the remaining steps of the action that gained "
        "them; 'fixed' = each after the action that gained it is complete, in the order "
        "gained. End bonus cards are always chosen at the end of the turn.",
    )
    start_bonus_industry_steps: int = _opt(
        1,
        "U",
        "the card exists: RYTHOS (enum Industry); its number of steps: none",
        "§3.3: industry steps of the 'industry' starting card.",
        ge=1,
        le=3,
    )
    # ---- §9 doublers, black worker
    doubler_supply: int = _opt(
        D.RAW["components"]["doublers"],
        "V",
        "GG ('20 doubler tokens'), KURT, SEED p.2",
        "§9: doublers in the general supply.",
        ge=0,
    )
    doubler_supply_limited: bool = _opt(
        True,
        "?",
        "none (SEED p.3's 'deliberately limited' belongs to the rail markers)",
        "§9: the doubler supply is a hard limit.",
    )
    doubler_spaces: tuple[int, int, int, int, int, int, int, int] = _opt(
        tuple(D.RAW["doubler_space_to_transsib_space"]["value"]),
        "U",
        "8 spaces above the Trans-Siberian, from the left: SEED p.12, BGA (V); the space "
        "under each: ULT only",
        "§6.4: the Trans-Siberian space under each of the 8 doubler spaces, left to right.",
    )
    black_worker_black_track_only: bool = _opt(
        False,
        "U",
        "none (the worker stands on its '?' card: SEED p.3, KURT)",
        "§9: the black worker (from its '?' card) may only stand on black-track spaces "
        "(T-BLK-1, T-BLK-2).",
    )
    extra_workers_per_player: int = _opt(
        2,
        "V",
        "SEED pp.3-4 (2 of each colour stay in the supply), YUC ('can't get more than two "
        "extra workers'); 2-3 players: derived",
        "§2: permanent workers each player can still gain from the general supply (line specials).",
        ge=0,
        le=3,
    )
    # ---- §6.2 revaluation
    revaluation_lines: Literal["all", "transsib"] = _opt(
        "all",
        "P",
        "SPEC; BGA speaks of 'the brown, natural and white tracks', not of lines",
        "§6.2: the revaluation marker raises the colour values on all three lines "
        "('transsib': on the Trans-Siberian only).",
    )
    # ---- §10 engineers, §15 final scoring
    upcoming_engineers_visible: bool = _opt(
        True,
        "P",
        "SPEC; the upcoming engineers lie 'rubem nahoru' (SEED p.2) / 'con lato scuro' "
        "(IT-SUM); whether the dark side shows the engineer is not stated",
        "§3.1/§10.1: the upcoming engineers lie dark side up and can be seen (False: they "
        "stay secret until they move onto a variable space).",
    )
    engineer_majority_points_2p: tuple[int, int] = _opt(
        (40, 20),
        "U",
        "none for 2 players; 3-4 players 40/20: CHEAT, BGA",
        "§10.3/§16: engineer majority payout (most, second most) with 2 players.",
    )
    end_bonus_selection: Literal["choose", "draw_top"] = _opt(
        "choose",
        "P",
        "YUC ('ausgewaehlt'), ULT quoting the Ultimate rulebook p.46 ('choose an end bonus "
        "card'); whether the pile is looked through is not stated",
        "§15.1: an end bonus card is chosen from the face-down pile ('choose'; the pile is "
        "reshuffled afterwards) or drawn from the top ('draw_top').",
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
