"""Views, canonical JSON and determinisation (§3.1, §10.1, §15.1 for what is secret).

Secret in Russian Railroads:

* the order and contents of the face-down end bonus pile, and the 2 cards
  returned unseen to the box (§3.1 step 3);
* the end bonus cards a player holds (face down until the final scoring, §12.2, §15);
* the engineers returned to the box at setup (§3.1 step 9), and, when the option
  ``upcoming_engineers_visible`` is off, the upcoming engineers on the strip;
* the random generator's state (and the seed).

:func:`build_view` is the one place that decides what a seat sees: its own end
bonus cards (and the pile, while it is choosing one), counts of everything else
secret. Everything public that the rules need is in the view (including the
pending decisions), so :func:`state_from_view` rebuilds a full state from it,
sampling the secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kernel.engine import MalformedAction
from services.kernel.rng import SeededRandom
from services.transsib.engine import data as D
from services.transsib.engine import scoring as S
from services.transsib.engine.engineers import slot_kinds
from services.transsib.engine.frames import (
    PH_OVER,
    PHASE_NAMES,
    EndBonus,
    frame_from_json,
    frame_json,
)
from services.transsib.engine.options import compile_rules
from services.transsib.engine.player import NO_CAP, Player
from services.transsib.engine.state import TranssibState

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.game import TranssibGame

HIDDEN = "hidden"
"""Strip entry of an engineer the viewer may not see."""


def _mask_names(mask: int, names: tuple[str, ...]) -> list[str]:
    return [name for i, name in enumerate(names) if mask >> i & 1]


def _names_mask(names: list[str], table: tuple[str, ...] | dict[str, int]) -> int:
    index = table if isinstance(table, dict) else {n: i for i, n in enumerate(table)}
    out = 0
    for name in names:
        if name not in index:
            raise MalformedAction("bad_view", f"unknown name {name!r} in view")
        out |= 1 << index[name]
    return out


# --------------------------------------------------------------------------- canonical JSON


def state_json(s: TranssibState) -> dict[str, Any]:
    """Canonical JSON of the whole state, secrets included (equal states, equal JSON)."""
    return {
        "title": "transsib",
        "num_players": s.num_players,
        "version": s.version,
        "options": s.opts.model_dump(mode="json"),
        "rng": s.rng.state,
        "round": s.round,
        "rounds": s.rounds,
        "phase": PHASE_NAMES[s.phase],
        "order": s.order[:],
        "cur": s.cur,
        "passed": s.passed[:],
        "occ": s.occ[:],
        "occ_w": s.occ_w[:],
        "occ_c": s.occ_c[:],
        "rep": s.rep[:],
        "claims": s.claims[:],
        "strip": [D.ENGINEERS[e].id if e >= 0 else "" for e in s.strip],
        "box": [D.ENGINEERS[e].id for e in s.box],
        "gone": [D.ENGINEERS[e].id for e in s.gone],
        "supply": s.supply[:],
        "pool": s.pool[:],
        "doubler_supply": s.doubler_supply,
        "deck": [D.END_BONUS_IDS[c] for c in s.deck],
        "removed": [D.END_BONUS_IDS[c] for c in s.removed],
        "qcards": s.qcards[:],
        "start_cards": s.start_cards[:],
        "start_queue": s.start_queue[:],
        "stack": [frame_json(f) for f in s.stack],
        "gained": [frame_json(f) for f in s.gained],
        "eb_pending": s.eb_pending[:],
        "in_turn": s.in_turn,
        "turn_seat": s.turn_seat,
        "reloc_queue": [[seat, space] for seat, space in s.reloc_queue],
        "temp_on_space": s.temp_on_space,
        "players": [
            {**p.public_json(), "eb": [D.END_BONUS_IDS[c] for c in p.eb]} for p in s.players
        ],
        "final": s.final,
    }


# --------------------------------------------------------------------------- views


def _player_view(s: TranssibState, seat: int, p: Player, show_cards: bool) -> dict[str, Any]:
    rules = s.rules
    lines = []
    for i, line in enumerate(D.LINES):
        lines.append(
            {
                "line": line,
                "markers": p.pos[i * 5 : i * 5 + 5],
                "locos": [p.locos[sl] for sl in D.LINE_SLOTS[i]],
                "reach": p.reach(i),
                "doubled": bool(p.line_double >> i & 1),
                "points": S.line_score(rules, p, i),
            }
        )
    return {
        "seat": seat,
        "score": p.score,
        "coins": p.coins,
        "turn_order_card": p.card,
        "workers_free": p.own,
        "workers_placed": p.placed_own,
        "workers_owned": p.perm_own,
        "black_worker_free": p.black,
        "black_worker_placed": p.placed_black,
        "has_black_worker": p.has_black,
        "temp_workers_free": p.temp,
        "temp_workers_placed": p.placed_temp,
        "extra_workers": p.extra,
        "lines": lines,
        "unlocked": _mask_names(p.unlocked, D.COLOURS),
        "factories": p.factories[:],
        "industry": p.ind[:],
        "doublers": p.doublers,
        "engineers": [D.ENGINEERS[e].id for e in p.engineers],
        "engineers_used": [D.ENGINEERS[e].id for e in p.engineers if p.eng_used >> e & 1],
        "tokens_used": _mask_names(p.tokens_used, D.QUESTION_TOKENS),
        "revalued": p.revalued,
        "kiev_medal": p.medal,
        "specials_fired": p.fired,
        "industry_specials_fired": p.ind_fired,
        "end_bonus_count": len(p.eb),
        "end_bonus_cards": [D.END_BONUS_IDS[c] for c in p.eb] if show_cards else [],
        "round_points": S.round_points(rules, p),
    }


def _engineer_info(e: int) -> dict[str, Any]:
    eng = D.ENGINEERS[e]
    return {
        "number": eng.number,
        "stack": eng.stack,
        "var_workers": eng.var_workers,
        "var_coins": eng.var_coins,
        "own_workers": eng.own_workers,
        "effect": f"{eng.name}: {eng.text}",
        "status": eng.status,
    }


def build_view(s: TranssibState, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (``None`` = spectator) may see now, as JSON (fits ``transsib.View``)."""
    over = s.phase == PH_OVER
    kinds = slot_kinds(s.num_players)
    visible_upcoming = s.opts.upcoming_engineers_visible
    strip = []
    known: set[int] = set()
    for e, kind in zip(s.strip, kinds, strict=True):
        if e < 0:
            strip.append({"kind": kind, "engineer": ""})
        elif kind == "upcoming" and not visible_upcoming and not over:
            strip.append({"kind": kind, "engineer": HIDDEN})
        else:
            strip.append({"kind": kind, "engineer": D.ENGINEERS[e].id})
            known.add(e)
    known.add(D.LETTERLESS)
    known.update(s.gone)
    for p in s.players:
        known.update(p.engineers)
    spaces = []
    on_board = set(s.spaces)
    for sp in D.SPACES:
        entry: dict[str, Any] = {
            "id": sp.id,
            "on_board": sp.index in on_board,
            "seat": s.occ[sp.index],
            "workers": s.occ_w[sp.index],
            "coins": s.occ_c[sp.index],
        }
        if sp.repeatable:
            entry["seats"] = s.rep[:]
        spaces.append(entry)
    choosing = seat is not None and s.stack and s.stack[-1] == EndBonus(seat)
    view: dict[str, Any] = {
        "viewer": seat,
        "num_players": s.num_players,
        "version": s.version,
        "round": s.round,
        "rounds": s.rounds,
        "phase": PHASE_NAMES[s.phase],
        "active_seat": s.active,
        "order": s.order[:],
        "cur": s.cur,
        "passed": s.passed[:],
        "claims": s.claims[:],
        "spaces": spaces,
        "strip": strip,
        "engineers": {D.ENGINEERS[e].id: _engineer_info(e) for e in sorted(known)},
        "engineers_gone": [D.ENGINEERS[e].id for e in s.gone],
        "loco_supply": s.supply[:],
        "factory_pool": s.pool[:],
        "doubler_supply": s.doubler_supply,
        "question_cards": [c for c, there in zip(D.QUESTION_CARDS, s.qcards, strict=True) if there],
        "start_bonus_cards": s.start_cards[:],
        "start_queue": s.start_queue[:],
        "end_bonus_pile": len(s.deck),
        "end_bonus_choices": [D.END_BONUS_IDS[c] for c in s.deck] if choosing else [],
        "end_bonus_pending": s.eb_pending[:],
        "temp_workers_on_space": s.temp_on_space,
        "stack": [frame_json(f) for f in s.stack],
        "gained": [frame_json(f) for f in s.gained],
        "in_turn": s.in_turn,
        "turn_seat": s.turn_seat,
        "relocation_queue": [{"seat": q, "space": D.SPACES[sp].id} for q, sp in s.reloc_queue],
        "players": [_player_view(s, i, p, over or i == seat) for i, p in enumerate(s.players)],
        "options": s.opts.model_dump(mode="json"),
    }
    if over and s.final is not None:
        view["final"] = [
            {"end_bonus_points": sum(fb["end_bonus"].values()), "majority": fb["majority"]}
            for fb in s.final
        ]
        view["removed_end_bonus_cards"] = [D.END_BONUS_IDS[c] for c in s.removed]
    return view


# --------------------------------------------------------------------------- determinisation


def state_from_view(
    game: TranssibGame, view: dict[str, Any], seat: int | None, seed: int
) -> TranssibState:
    """Rebuild a full state from ``view`` (seen by ``seat``), sampling the secrets
    (other players' end bonus cards, the pile, the box) from ``seed``.

    Raises:
        MalformedAction: the view is not a transsib view.
    """
    try:
        return _from_view(game, view, seat, seed)
    except MalformedAction:
        raise
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise MalformedAction("bad_view", f"not a transsib view: {exc!r}") from None


def _from_view(game: TranssibGame, v: dict[str, Any], seat: int | None, seed: int) -> TranssibState:
    opts = game.parse_options(v["options"])
    rules = compile_rules(opts)
    n = int(v["num_players"])
    rng = SeededRandom(seed)
    s = TranssibState.__new__(TranssibState)
    s.game = game
    s.num_players = n
    s.version = int(v["version"])
    s.rules = rules
    s.opts = opts
    s.round = int(v["round"])
    s.rounds = int(v["rounds"])
    s.phase = PHASE_NAMES.index(v["phase"])
    s.order = [int(x) for x in v["order"]]
    s.cur = int(v["cur"])
    s.passed = [bool(x) for x in v["passed"]]
    s.occ = [-1] * D.NUM_SPACES
    s.occ_w = [0] * D.NUM_SPACES
    s.occ_c = [0] * D.NUM_SPACES
    s.rep = []
    for entry in v["spaces"]:
        idx = D.SPACE_INDEX[entry["id"]]
        s.occ[idx] = int(entry["seat"])
        s.occ_w[idx] = int(entry["workers"])
        s.occ_c[idx] = int(entry["coins"])
        if "seats" in entry:
            s.rep = [int(x) for x in entry["seats"]]
    s.claims = [int(x) for x in v["claims"]]
    s.supply = [int(x) for x in v["loco_supply"]]
    s.supply_total = sum(s.supply)
    s.pool = [int(x) for x in v["factory_pool"]]
    s.pool_total = sum(s.pool)
    s.doubler_supply = int(v["doubler_supply"])
    s.qcards = [c in v["question_cards"] for c in D.QUESTION_CARDS]
    s.start_cards = list(v["start_bonus_cards"])
    s.start_queue = [int(x) for x in v["start_queue"]]
    s.stack = [frame_from_json(f) for f in v["stack"]]
    s.gained = [frame_from_json(f) for f in v["gained"]]
    s.eb_pending = [int(x) for x in v["end_bonus_pending"]]
    s.in_turn = bool(v["in_turn"])
    s.turn_seat = int(v["turn_seat"])
    s.reloc_queue = [(int(q["seat"]), D.SPACE_INDEX[q["space"]]) for q in v["relocation_queue"]]
    s.temp_on_space = bool(v["temp_workers_on_space"])
    s.final = None

    # players (public part)
    players = []
    for pv in v["players"]:
        p = Player.__new__(Player)
        p.pos = [0] * (len(D.LINES) * 5)
        p.locos = [0] * D.NUM_LOCO_SLOTS
        for i, lv in enumerate(pv["lines"]):
            p.pos[i * 5 : i * 5 + 5] = [int(x) for x in lv["markers"]]
            for sl, number in zip(D.LINE_SLOTS[i], lv["locos"], strict=True):
                p.locos[sl] = int(number)
        p.line_double = sum(1 << i for i, lv in enumerate(pv["lines"]) if lv["doubled"])
        p.unlocked = _names_mask(pv["unlocked"], D.COLOURS)
        p.factories = [int(x) for x in pv["factories"]]
        p.ind = [int(x) for x in pv["industry"]]
        p.doublers = int(pv["doublers"])
        p.coins = int(pv["coins"])
        p.own = int(pv["workers_free"])
        p.placed_own = int(pv["workers_placed"])
        p.perm_own = int(pv["workers_owned"])
        p.black = int(pv["black_worker_free"])
        p.placed_black = int(pv["black_worker_placed"])
        p.has_black = bool(pv["has_black_worker"])
        p.temp = int(pv["temp_workers_free"])
        p.placed_temp = int(pv["temp_workers_placed"])
        p.extra = int(pv["extra_workers"])
        p.engineers = [D.ENGINEER_INDEX[e] for e in pv["engineers"]]
        p.eng_used = _names_mask(pv["engineers_used"], D.ENGINEER_INDEX)
        p.tokens_used = _names_mask(pv["tokens_used"], D.QUESTION_TOKENS)
        p.revalued = bool(pv["revalued"])
        p.medal = bool(pv["kiev_medal"])
        p.fired = int(pv["specials_fired"])
        p.ind_fired = int(pv["industry_specials_fired"])
        p.eb = []
        p.score = int(pv["score"])
        p.card = int(pv["turn_order_card"])
        p.cap = NO_CAP
        p.indcap = -1
        players.append(p)
    s.players = players

    # secrets: end bonus cards
    eb_index = {cid: i for i, cid in enumerate(D.END_BONUS_IDS)}
    known_cards: set[int] = set()
    own_cards: dict[int, list[int]] = {}
    for i, pv in enumerate(v["players"]):
        if pv["end_bonus_cards"]:
            own_cards[i] = [eb_index[c] for c in pv["end_bonus_cards"]]
            known_cards.update(own_cards[i])
    choices = [eb_index[c] for c in v["end_bonus_choices"]]
    known_cards.update(choices)
    unknown = [c for c in range(len(D.END_BONUS_IDS)) if c not in known_cards]
    rng.shuffle(unknown)
    for i, pv in enumerate(v["players"]):
        if i in own_cards:
            players[i].eb = own_cards[i]
        else:
            k = int(pv["end_bonus_count"])
            players[i].eb = sorted(unknown[:k])
            del unknown[:k]
    pile = int(v["end_bonus_pile"])
    if choices:
        s.deck = choices
    else:
        s.deck = unknown[:pile]
        del unknown[:pile]
    if "removed_end_bonus_cards" in v:
        s.removed = [eb_index[c] for c in v["removed_end_bonus_cards"]]
    else:
        s.removed = sorted(unknown)

    # secrets: engineers (hidden strip slots and the box)
    kinds = slot_kinds(n)
    layout = D.PLAYER_COUNT[n]["engineer_strip"]
    s.gone = [D.ENGINEER_INDEX[e] for e in v["engineers_gone"]]
    seen = {D.LETTERLESS, *s.gone}
    for p in players:
        seen.update(p.engineers)
    strip: list[int] = []
    hidden_slots = []
    for i, entry in enumerate(v["strip"]):
        eid = entry["engineer"]
        if eid == "":
            strip.append(-1)
        elif eid == HIDDEN:
            strip.append(-2)
            hidden_slots.append(i)
        else:
            strip.append(D.ENGINEER_INDEX[eid])
            seen.add(D.ENGINEER_INDEX[eid])
    pools: dict[str, list[int]] = {"A": [], "B": []}
    for e in D.ENGINEERS:
        if e.index not in seen and e.stack in pools:
            pools[e.stack].append(e.index)
    for pile_ in pools.values():
        rng.shuffle(pile_)
    for i in hidden_slots:
        origin = i - (s.round - 1)
        letter = layout[origin] if 0 <= origin < len(layout) and layout[origin] else "B"
        if not pools[letter]:
            letter = "A" if letter == "B" else "B"
        strip[i] = pools[letter].pop()
    s.strip = strip
    s.box = sorted(pools["A"] + pools["B"])
    if len(kinds) != len(strip):
        raise MalformedAction("bad_view", "engineer strip has the wrong length")

    s.rng = SeededRandom(rng.next64())
    s.refresh_caches()
    if s.phase == PH_OVER:
        s.final = [
            {"end_bonus": {"total": int(f["end_bonus_points"])}, "majority": int(f["majority"])}
            for f in v.get("final", [])
        ]
    else:
        s.active = int(v["active_seat"])
    return s
