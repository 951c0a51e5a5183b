"""The operating round as ordered steps (designer's rules 7.3.1-7.3.8, the reference's step
order) and the one flow module that sequences steps and rounds (:mod:`..flow`)."""

from __future__ import annotations

import ast
from pathlib import Path

from services.kernel.engine import Action

from .. import GAME, flow
from ..actions import Pass
from ..operating_round.common import TRACK
from .flow_helpers import FINAL, MARKET, _imported

ENGINE = Path(__file__).resolve().parents[1]


def test_every_step_unit_meets_the_contract():
    """Each step of a turn is one unit with its name, flags, legal moves, apply and skip."""
    assert [u.NAME for u in flow.OPERATING_STEPS] == [
        "home",
        "redeem",
        "track",
        "token",
        "route",
        "dividend",
        "buy_train",
        "buy_company",
        "update",
    ]
    assert set(flow.STEPS) == {u.NAME for u in flow.OPERATING_STEPS} | {"replace", "teleport"}
    for name, unit in flow.STEPS.items():
        assert unit.NAME == name
        assert isinstance(unit.OWN_TURN, bool) and isinstance(unit.WAITS_FOR_TOKEN, bool)
        assert unit.HANDLES and all(issubclass(t, Action) for t in unit.HANDLES)
        assert callable(unit.legal) and callable(unit.apply) and callable(unit.skip)
    # the token-only steps are not the corporation's own decisions
    waiting = {n for n, u in flow.STEPS.items() if u.WAITS_FOR_TOKEN}
    own = {n for n, u in flow.STEPS.items() if u.OWN_TURN}
    assert waiting == {"home", "replace", "update"} and not waiting & own
    assert flow.INNER_STEPS == {"replace": TRACK, "teleport": TRACK}


def test_no_round_or_step_module_starts_another_from_inside_a_function():
    """Rounds hand over only through :mod:`..flow`: no import inside a function in the round
    and step modules, and none of them imports the flow."""
    files = [ENGINE / "auction.py", ENGINE / "stock_round.py", ENGINE / "flow.py"]
    files += sorted((ENGINE / "operating_round").glob("*.py"))
    assert len(files) > 12
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [n for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))]
                assert not inner, f"{path.name}: import inside {fn.name}()"
        if path.name != "flow.py":
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    assert node.module != "flow" and "flow" not in {a.name for a in node.names}


def _steps_per_turn(name: str) -> list[list[str]]:
    """Replay a recorded game; the steps each corporation's turn decided in, in order."""
    imp = _imported(name, None)
    st = GAME.new_state(imp.num_players, imp.seed, imp.options)
    turns: list[list[str]] = []
    key = None
    for seat, action in imp.log:
        if st.round == "operating" and not st.discard:
            k = (st.sr_number, st.or_num, st.or_pos)
            if k != key:
                turns.append([])
                key = k
            if not turns[-1] or turns[-1][-1] != st.step:
                turns[-1].append(st.step)
        st.apply(seat, action)
    assert st.is_terminal()
    return turns


def test_recorded_turns_run_their_steps_in_the_rulebook_order():
    """In both recorded games every turn's decisions follow 7.3.1 -> 7.3.8; the turns
    together decide in every step from the redemption to the train purchase."""
    order = [u.NAME for u in flow.OPERATING_STEPS]
    seen: set[str] = set()
    for name in (FINAL, MARKET):
        turns = _steps_per_turn(name)
        assert len(turns) > 50
        for steps in turns:
            seen.update(steps)
            # a step inside another (a split's own token, a teleport decision) belongs to it
            ranks = [order.index(s) for s in steps if s not in flow.INNER_STEPS]
            assert ranks == sorted(ranks), steps
    assert {"redeem", "track", "token", "route", "dividend", "buy_train"} <= seen


def test_a_pass_ends_the_step_and_the_flow_skips_those_with_nothing_to_do():
    """``pass`` in the track step moves on to the next step that needs a decision; the ones
    in between are skipped by their own ``skip``."""
    for name in (FINAL, MARKET):
        imp = _imported(name, None)
        st = GAME.new_state(imp.num_players, imp.seed, imp.options)
        for seat, action in imp.log:
            if st.round == "operating" and st.step == TRACK and not st.discard:
                ci = flow.operating_corp(st)
                probe = st.clone()
                probe.apply(seat, Pass())
                order = [u.NAME for u in flow.OPERATING_STEPS]
                if probe.round == "operating" and flow.operating_corp(probe) == ci:
                    skipped = order[order.index(TRACK) + 1 : order.index(probe.step)]
                    for step in skipped:
                        assert flow.STEPS[step].skip(probe.clone(), ci), step
                    assert not flow.STEPS[probe.step].skip(probe.clone(), ci)
                    return
            st.apply(seat, action)
    raise AssertionError("no track step in the recorded games")
