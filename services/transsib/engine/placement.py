"""Action spaces, their costs and the placements of the action phase (§4.2, §4.3, §5, §16).

* which spaces are on the board this round (board side, options, last-round tile);
* what each costs (workers, coins besides; engineer spaces: printed on the tile);
* which numbers of coins may stand in for workers (§4.3 and its options);
* the placements (and pass) the player to move may choose, each checked to be
  performable in full (§4.4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action
from services.transsib.engine import actions as A
from services.transsib.engine import data as D
from services.transsib.engine import effects as E
from services.transsib.engine import industry as IND
from services.transsib.engine import track as T
from services.transsib.engine.engineers import variable_slots

if TYPE_CHECKING:  # pragma: no cover
    from services.transsib.engine.state import TranssibState

_SPACES = D.SPACES
_PLACE = A.PLACE
_PASS = A.PASS
_BLACK_TRACK = D.BLACK_TRACK_SPACES

VariantTable = tuple[tuple[tuple[Action, ...], ...], ...]
"""``table[coins held, max 4][free workers, max 3]``: ``place`` actions (:func:`variant_table`)."""
SpaceRow = tuple[
    int, bool, VariantTable, bool, int, int, int, tuple[tuple[E.Feasible, int, int, int], ...], bool
]
"""One row of the per-round space table (:func:`build_spaces`): space index, repeatable,
variant table, black worker allowed, check kind (0 none, 1 track, 2 industry, 3 general),
steps needed, colour mask, the program's checks, the hiring space."""


def build_spaces(
    s: TranssibState, n: int, last: bool, var_slots: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[SpaceRow, ...]]:
    opts = s.opts
    out: list[int] = []
    for sp in _SPACES:
        if n == 2 and sp.in_2p is False:
            continue
        if sp.index == D.TEMP_SPACE and n == 2 and not opts.temp_workers_space_in_2p:
            continue
        if sp.area == "turn_order" and last and opts.last_round_tile != "none":
            continue
        if sp.area == "last_round" and not (last and opts.last_round_tile == "industry_3"):
            continue
        if sp.area == "engineer" and D.VAR_SPACES.index(sp.index) >= len(var_slots):
            continue
        out.append(sp.index)
    info: list[SpaceRow] = []
    for idx in out:
        sp = _SPACES[idx]
        cost = space_cost(s, idx) if sp.area != "hire" else (sp.workers, sp.coins, ())
        if cost is None:
            continue
        w, m, prog = cost
        # feasibility check kind: 0 none, 1 track only, 2 industry only, 3 general (the
        # program's checks that can fail, from the effects table)
        need = mask = 0
        checks = E.program_checks(prog)
        if not checks:
            kind = 0
        elif len(prog) == 1 and prog[0][0] == D.OP_TRACK:
            kind = 1
            _op, steps, mask, up_to = prog[0]
            need = 1 if up_to or opts.track_board_steps_may_be_lost else steps
        elif len(prog) == 1 and prog[0][0] == D.OP_INDUSTRY:
            kind = 2
            need = prog[0][1]
        else:
            kind = 3
        info.append(
            (
                idx,
                sp.repeatable,
                variant_table(s, sp.id, w, m),
                idx in _BLACK_TRACK,
                kind,
                need,
                mask,
                checks,
                sp.area == "hire",
            )
        )
    return tuple(out), tuple(info)


def variant_table(s: TranssibState, sid: str, w: int, m: int) -> VariantTable:
    """``table[coins held, max 4][free workers, max 3]``: the ``place`` actions for a
    space needing ``w`` workers and ``m`` coins besides (one per allowed number of
    coins standing in for workers, §4.3); cached on the rules."""
    key = (sid, w, m)
    cache = s.rules.variant_cache
    table = cache.get(key)
    if table is None:
        table = tuple(
            tuple(
                tuple(_PLACE[(sid, c)] for c in coin_variants(s, w, m, coins, avail))
                for avail in range(4)
            )
            for coins in range(5)
        )
        cache[key] = table
    return table


def space_cost(s: TranssibState, idx: int) -> tuple[int, int, D.Program] | None:
    """(workers, extra coins, program) of an available board space now, or None
    if it holds no engineer (engineer spaces) / nothing to hire."""
    sp = _SPACES[idx]
    area = sp.area
    if area == "engineer":
        slot = variable_slots(s.num_players)[D.VAR_SPACES.index(idx)]
        e = s.strip[slot]
        if e < 0:
            return None
        eng = D.ENGINEERS[e]
        return eng.var_workers, eng.var_coins, eng.program
    if area == "hire":
        if s.strip[-1] < 0:
            return None
        return sp.workers, sp.coins, ()
    if idx == D.TEMP_SPACE:
        return s.opts.temp_workers_cost, 0, sp.program
    return sp.workers, sp.coins, sp.program


def coin_variants(s: TranssibState, w: int, m: int, coins: int, avail: int) -> list[int]:
    """The numbers of coins that may stand in for workers on a space needing ``w``
    workers and ``m`` coins besides, given the player's coins and free workers
    (§4.3 and its options)."""
    if coins < m:
        return []
    opts = s.opts
    max_sub = 0
    if w and opts.coins_substitute_workers and (w == 1 or opts.coins_on_multi_worker_spaces):
        max_sub = min(w, coins - m)
    out = []
    for c in range(max_sub + 1):
        if 0 < c < w and not opts.coins_mixing_allowed:
            continue
        if avail >= w - c:
            out.append(c)
    return out


def main_legal(s: TranssibState, seat: int) -> list[Action]:
    """Placements (§4.2) and pass for the player to move in the action phase."""
    p = s.players[seat]
    occ = s.occ
    acts: list[Action] = []
    coins = p.coins
    cc = coins if coins < 4 else 4
    base_avail = p.own + p.temp
    black = p.black
    aa = base_avail if base_avail < 3 else 3
    hire_open = s.strip[-1] >= 0
    lag = s.rules.track_gap
    ind_need = 1 if s.opts.industry_board_steps_may_be_lost else 0
    for idx, rep, vt, black_ok, kind, need, mask, checks, hire in s.space_info:
        if occ[idx] >= 0 and not rep:
            continue
        if black_ok and black:
            avail = base_avail + black
            variants = vt[cc][avail if avail < 3 else 3]
        else:
            variants = vt[cc][aa]
        if not variants:
            continue
        if hire and not hire_open:
            continue
        if kind == 1:
            if not T.can_make(p, mask, need, lag):
                continue
        elif kind == 2:
            if IND.capacity(s.rules, p) < (ind_need or need):
                continue
        elif kind == 3:
            for feasible, a, b, c in checks:
                if not feasible(s, seat, p, a, b, c):
                    break
            else:
                acts.extend(variants)
            continue
        acts.extend(variants)
    if p.engineers:
        used = p.eng_used
        for e in p.engineers:
            if used >> e & 1:
                continue
            eng = D.ENGINEERS[e]
            acts.extend(variant_table(s, eng.id, eng.own_workers, 0)[cc][aa])
    acts.append(_PASS)
    return acts
