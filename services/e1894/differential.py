"""Differential test of our 1894 against another engine that replays 18xx.games JSON.

``roundhouse e1894 differential --games N --reference-cmd "CMD"`` exports ``N`` bot games of ours
in the 18xx.games format (distinct seeds ``S, S+1, ...``; 3 and 4 players; ``random``,
``greedy`` and ``mixed`` bots by default, ``search`` on request, rotating over the mix), runs
``CMD FILE`` on each, and compares the other engine's verdict and result with ours.

The reference command's contract (any engine able to replay 18xx.games JSON can be plugged in):

* it is run as ``CMD FILE`` (``CMD`` is split like a shell command line, ``FILE`` appended);
* it prints one JSON object on a line of stdout (the last such line counts):

  - accepted: ``{"ok": true, "result": {"<player id>": score, ...}, "finished": bool, ...}``;
  - refused: ``{"ok": false, "action_index": i, "action_id": id, "error": "..."}``, where
    ``action_index`` is the 0-based position in the file's ``actions`` and ``action_id`` its
    ``id`` (either may be ``null`` when unknown);

* it exits non-zero on a refusal. ``ok`` decides when present; without a JSON line, or without
  ``ok``, exit code 0 with a ``result`` means accepted and anything else refused.

``roundhouse e1894 replay`` honours the same contract, so our own engine can be the reference.

Every game ends in one of five :class:`Status` values: accepted with the same result, accepted
with a different result (scores, or the game's being finished), refused at a known defect of the
reference (its signature in :data:`~.reference_defects.KNOWN_DEFECTS`: action type, message
pattern, position condition), refused otherwise (either refusal with the first divergent action:
index, action JSON, the reference's message), or our export failed (the exception).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from services.bots.policies import POLICY_NAMES

from .botgames import play_bots
from .engine.interchange.exporter import export_game
from .reference_defects import KNOWN_DEFECTS, known_defect

MIXED = "mixed"
"""Bot kind whose seats alternate ``greedy`` and ``random`` (game ``i``'s first seat is greedy
when ``i`` is even)."""

SEARCH = "search"
"""Bot kind with one seat of a deterministic search bot (:data:`SEARCH_SEAT`, seat ``i mod n``
in game ``i``) and the other seats alternating ``greedy`` and ``random`` (greedy first)."""
SEARCH_SEAT = "search-easy@6"
"""The search seat of a ``search`` game: ``search-easy``'s knobs with 6 iterations a decision
and no clock (:func:`~.botgames.seat_policy`), so ``export_command`` rebuilds the game; about
10 s a game on one core (a clock-bound tier would make the export irreproducible)."""

BOT_KINDS = (*POLICY_NAMES, MIXED, SEARCH)
"""Every bot kind a run may use (the registered policies, search tiers included, mixed and
search)."""
DEFAULT_KINDS = ("random", "greedy", MIXED)
"""The kinds a run rotates over unless ``bots`` says otherwise."""
CONTEXT_ACTIONS = 3
"""How many actions before the first divergent one a report keeps."""


class Status(enum.StrEnum):
    """Outcome of one game."""

    SAME = "same"
    """The reference accepted every action and its result equals ours."""
    DIFFERENT = "different"
    """The reference accepted every action but its result (or finished flag) differs."""
    KNOWN_DEFECT = "known_defect"
    """The reference refused an action at a known defect of its own (the signature of an
    entry of :data:`~.reference_defects.KNOWN_DEFECTS`)."""
    REFUSED = "refused"
    """The reference refused an action otherwise (or failed to give a verdict)."""
    EXPORT_FAILED = "export_failed"
    """Our bot game or its export raised; the reference was not run."""


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """One game of a differential run.

    Attributes:
        index: 0-based position in the run.
        seed: the game's seed (also seeds its bots, see :func:`~.botgames.play_bots`).
        players: 3 or 4.
        kind: a policy name (``random``, ``greedy``, a search tier), ``mixed`` or ``search``.
        policies: the policy name of each seat.
    """

    index: int
    seed: int
    players: int
    kind: str
    policies: tuple[str, ...]

    @property
    def name(self) -> str:
        """File stem, e.g. ``e1894-0007-s8-4p-mixed``."""
        return f"e1894-{self.index:04d}-s{self.seed}-{self.players}p-{self.kind}"

    @property
    def export_command(self) -> str:
        """The ``roundhouse e1894 export`` command that writes the same file."""
        return (
            f"roundhouse e1894 export --players {self.players} --seed {self.seed} "
            f"--bots {','.join(self.policies)}"
        )


def plan_games(
    games: int,
    *,
    players: Sequence[int] = (3, 4),
    bots: Sequence[str] = DEFAULT_KINDS,
    seed: int = 1,
) -> list[GameSpec]:
    """The games of a run: game ``i`` has seed ``seed + i``, bot kind ``bots[i % len(bots)]``
    and ``players[(i // len(bots)) % len(players)]`` seats, so every combination recurs.

    Raises:
        ValueError: ``games`` < 1, an empty list, a player count outside 3-4, or an unknown kind.
    """
    if games < 1:
        raise ValueError(f"--games must be at least 1, got {games}")
    if not players or any(n not in (3, 4) for n in players):
        raise ValueError(f"1894 is for 3 or 4 players, got {list(players)}")
    unknown = [b for b in bots if b not in BOT_KINDS]
    if not bots or unknown:
        raise ValueError(f"unknown bot kinds {unknown}; known: {', '.join(BOT_KINDS)}")
    specs = []
    for i in range(games):
        kind = bots[i % len(bots)]
        n = players[(i // len(bots)) % len(players)]
        if kind == MIXED:
            policies = tuple("greedy" if (s + i) % 2 == 0 else "random" for s in range(n))
        elif kind == SEARCH:
            others = ["greedy" if s % 2 == 0 else "random" for s in range(n - 1)]
            others.insert(i % n, SEARCH_SEAT)
            policies = tuple(others)
        else:
            policies = (kind,) * n
        specs.append(GameSpec(i, seed + i, n, kind, policies))
    return specs


@dataclasses.dataclass
class Verdict:
    """What the reference command said about one file.

    Attributes:
        ok: every action accepted.
        result: ``{player id: score}`` when accepted.
        finished: the reference's finished flag, ``None`` when it does not say.
        action_index, action_id, error: the refused action and the reference's message.
        exit_code: the command's exit code.
        line: the JSON object printed (``None`` when there was none).
    """

    ok: bool
    result: dict[str, int] | None = None
    finished: bool | None = None
    action_index: int | None = None
    action_id: int | None = None
    error: str | None = None
    exit_code: int = 0
    line: dict[str, Any] | None = None


def parse_verdict(stdout: str, stderr: str, exit_code: int) -> Verdict:
    """The verdict of a reference run from its output (see the module docstring's contract)."""
    line = None
    for text in reversed(stdout.splitlines()):
        text = text.strip()
        if text.startswith("{"):
            try:
                obj = json.loads(text)
            except ValueError:
                continue
            if isinstance(obj, dict):
                line = obj
                break
    if line is None:
        tail = (stderr.strip() or stdout.strip())[-500:]
        return Verdict(
            ok=False,
            error=f"no JSON line on stdout (exit code {exit_code}): {tail}",
            exit_code=exit_code,
        )
    ok = line["ok"] if "ok" in line else exit_code == 0 and "result" in line
    result = line.get("result")
    finished = line.get("finished")
    return Verdict(
        ok=bool(ok),
        result={str(k): int(v) for k, v in result.items()} if isinstance(result, dict) else None,
        finished=finished if isinstance(finished, bool) else None,
        action_index=_int_or_none(line.get("action_index")),
        action_id=_int_or_none(line.get("action_id")),
        error=None if ok else str(line.get("error") or line.get("reason") or "refused"),
        exit_code=exit_code,
        line=line,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclasses.dataclass
class Outcome:
    """The outcome of one game: :class:`Status`, both sides' results and, for a refused game,
    the first divergent action (``divergence``: ``action_index``, ``action_id``, ``action``,
    ``error``, ``previous_actions``)."""

    spec: GameSpec
    status: Status
    ours: dict[str, Any] | None = None
    reference: dict[str, Any] | None = None
    divergence: dict[str, Any] | None = None
    export_error: str | None = None
    file: str | None = None
    seconds_export: float = 0.0
    seconds_reference: float = 0.0

    @property
    def cause(self) -> str:
        """A grouping key: the refused action's type and the reference's message with its
        numbers blanked (``"run_routes: Blocking step Buy Trains cannot process ... at #"``)."""
        if self.status == Status.EXPORT_FAILED:
            return f"export: {(self.export_error or '').splitlines()[0]}"
        if self.status == Status.DIFFERENT:
            return "different result"
        if self.status in (Status.REFUSED, Status.KNOWN_DEFECT) and self.divergence:
            kind = (self.divergence.get("action") or {}).get("type", "?")
            return f"{kind}: {re.sub(r'[0-9]+', '#', self.divergence.get('error') or '')[:120]}"
        return self.status.value

    def to_json(self) -> dict[str, Any]:
        """The outcome as a JSON object (one entry of the report's ``games``)."""
        out = {"name": self.spec.name, **dataclasses.asdict(self.spec)}
        out["export_command"] = self.spec.export_command
        out.update(
            status=self.status.value,
            cause=self.cause,
            ours=self.ours,
            reference=self.reference,
            divergence=self.divergence,
            export_error=self.export_error,
            file=self.file,
            seconds_export=round(self.seconds_export, 3),
            seconds_reference=round(self.seconds_reference, 3),
        )
        return out


Exporter = Callable[[GameSpec, dict[str, Any]], dict[str, Any]]
"""``(spec, options) -> 18xx.games JSON`` of the spec's bot game."""


def export_bot_game(spec: GameSpec, options: dict[str, Any]) -> dict[str, Any]:
    """The 18xx.games JSON of the spec's bot game (the default :data:`Exporter`)."""
    log = play_bots(spec.players, spec.seed, ",".join(spec.policies), options)
    return export_game(spec.players, spec.seed, options, log)


def compare(data: dict[str, Any], verdict: Verdict) -> tuple[Status, dict[str, Any] | None]:
    """Our exported game ``data`` against an accepted or refused verdict: the status and, for
    a refusal, the divergence (the action at ``action_index``, or found by ``action_id``)."""
    if not verdict.ok:
        actions = data.get("actions") or []
        index = verdict.action_index
        if index is None and verdict.action_id is not None:
            ids = [a.get("id") for a in actions]
            index = ids.index(verdict.action_id) if verdict.action_id in ids else None
        action = actions[index] if index is not None and 0 <= index < len(actions) else None
        previous = actions[max(0, index - CONTEXT_ACTIONS) : index] if action is not None else []
        action_id = verdict.action_id
        if action_id is None and action is not None:
            action_id = action.get("id")
        defect = known_defect(actions, index, verdict.error or "")
        status = Status.REFUSED if defect is None else Status.KNOWN_DEFECT
        return status, {
            "action_index": index,
            "action_id": action_id,
            "action": action,
            "error": verdict.error,
            "previous_actions": previous,
            "defect": None if defect is None else {"key": defect.key, "write_up": defect.write_up},
        }
    ours = {str(k): int(v) for k, v in (data.get("result") or {}).items()} or None
    finished = data.get("status") == "finished"
    same = verdict.result == ours and (verdict.finished is None or verdict.finished == finished)
    return (Status.SAME if same else Status.DIFFERENT), None


def run_game(
    spec: GameSpec,
    reference_cmd: str,
    *,
    options: dict[str, Any] | None = None,
    keep_dir: str | None = None,
    timeout: float = 600.0,
    exporter: Exporter = export_bot_game,
) -> Outcome:
    """Export one game, run the reference on it and compare.

    The file of a game that is not accepted with the same result is copied to ``keep_dir``
    (``<spec.name>.json``) when given. Never raises for a game's failure: an exception of the
    export is :attr:`Status.EXPORT_FAILED`, a command that cannot start, crashes or runs past
    ``timeout`` seconds is :attr:`Status.REFUSED` with the reason.
    """
    options = options or {}
    t0 = time.perf_counter()
    try:
        data = exporter(spec, options)
    except Exception as exc:  # noqa: BLE001 - any failure of ours is a finding, never fatal
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        return Outcome(
            spec,
            Status.EXPORT_FAILED,
            export_error=f"{type(exc).__name__}: {exc} ({where})",
            seconds_export=time.perf_counter() - t0,
        )
    seconds_export = time.perf_counter() - t0
    ours = {
        "result": data.get("result"),
        "finished": data.get("status") == "finished",
        "game_end_reason": data.get("game_end_reason"),
        "actions": len(data.get("actions") or []),
    }
    with tempfile.TemporaryDirectory(prefix="e1894-diff-") as tmp:
        path = Path(tmp) / f"{spec.name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        t1 = time.perf_counter()
        verdict = _run_reference(reference_cmd, path, timeout)
        seconds_reference = time.perf_counter() - t1
        status, divergence = compare(data, verdict)
        kept = None
        if keep_dir and status != Status.SAME:
            Path(keep_dir).mkdir(parents=True, exist_ok=True)
            kept = str(Path(keep_dir) / path.name)
            shutil.copyfile(path, kept)
    reference = verdict.line if verdict.line is not None else {"error": verdict.error}
    if isinstance(reference, dict):
        reference = {k: v for k, v in reference.items() if k != "action"}
        reference["exit_code"] = verdict.exit_code
    return Outcome(
        spec,
        status,
        ours=ours,
        reference=reference,
        divergence=divergence,
        file=kept,
        seconds_export=seconds_export,
        seconds_reference=seconds_reference,
    )


def _run_reference(reference_cmd: str, path: Path, timeout: float) -> Verdict:
    argv = [*shlex.split(reference_cmd), str(path)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Verdict(ok=False, error=f"reference command ran past {timeout:g} s", exit_code=-1)
    except OSError as exc:
        return Verdict(ok=False, error=f"reference command cannot start: {exc}", exit_code=-1)
    return parse_verdict(proc.stdout, proc.stderr, proc.returncode)


@dataclasses.dataclass
class Report:
    """A differential run: its settings, per-status counts and every game's :class:`Outcome`."""

    reference_cmd: str
    specs: list[GameSpec]
    outcomes: list[Outcome]
    seconds: float

    @property
    def counts(self) -> dict[str, int]:
        """``{status value: games}`` for every :class:`Status` (zeros included)."""
        c = Counter(o.status.value for o in self.outcomes)
        return {s.value: c.get(s.value, 0) for s in Status}

    @property
    def causes(self) -> list[tuple[str, int]]:
        """Causes (:attr:`Outcome.cause`) of the games not accepted with the same result, most
        frequent first."""
        c = Counter(o.cause for o in self.outcomes if o.status != Status.SAME)
        return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))

    def to_json(self) -> dict[str, Any]:
        """The report file's JSON: ``reference_cmd``, ``games``, ``counts``, ``causes``,
        ``known_defects`` (the signatures' keys, summaries and write-ups), ``seconds`` and
        ``outcomes`` (one :meth:`Outcome.to_json` per game, in run order)."""
        return {
            "reference_cmd": self.reference_cmd,
            "games": len(self.specs),
            "counts": self.counts,
            "causes": [{"cause": k, "games": n} for k, n in self.causes],
            "known_defects": [
                {"key": d.key, "summary": d.summary, "write_up": d.write_up} for d in KNOWN_DEFECTS
            ],
            "seconds": round(self.seconds, 1),
            "outcomes": [o.to_json() for o in sorted(self.outcomes, key=lambda o: o.spec.index)],
        }


def run_differential(
    specs: Sequence[GameSpec],
    reference_cmd: str,
    *,
    workers: int = 1,
    options: dict[str, Any] | None = None,
    keep_dir: str | None = None,
    timeout: float = 600.0,
    exporter: Exporter = export_bot_game,
    on_done: Callable[[Outcome], None] | None = None,
) -> Report:
    """Run :func:`run_game` on every spec, ``workers`` games at a time (processes; 1 = in this
    process), calling ``on_done`` as each game ends. ``exporter`` must be a module-level
    function when ``workers`` > 1 (it is sent to the worker processes).

    Raises:
        ValueError: ``workers`` < 1 or an empty ``reference_cmd``.
    """
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    if not shlex.split(reference_cmd):
        raise ValueError("--reference-cmd is empty")
    kwargs = {"options": options, "keep_dir": keep_dir, "timeout": timeout, "exporter": exporter}
    t0 = time.perf_counter()
    outcomes: list[Outcome] = []
    if workers == 1:
        for spec in specs:
            outcomes.append(run_game(spec, reference_cmd, **kwargs))
            if on_done:
                on_done(outcomes[-1])
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_game, spec, reference_cmd, **kwargs) for spec in specs]
            for future in as_completed(futures):
                outcomes.append(future.result())
                if on_done:
                    on_done(outcomes[-1])
    outcomes.sort(key=lambda o: o.spec.index)
    return Report(reference_cmd, list(specs), outcomes, time.perf_counter() - t0)


def run_with_progress(
    specs: Sequence[GameSpec],
    reference_cmd: str,
    *,
    console: Console,
    report_path: str | None = None,
    log_path: str | None = None,
    **kwargs: Any,
) -> Report:
    """:func:`run_differential` with a rich progress bar on ``console`` (a
    :class:`rich.console.Console`), then the counts, the causes and each refused game's first
    divergent action; writes :meth:`Report.to_json` to ``report_path`` when given, and appends
    each game's :meth:`Outcome.to_json` as one JSON line to ``log_path`` as soon as the game
    ends (a long run's partial results survive an interruption)."""
    counts: Counter[str] = Counter()
    log = Path(log_path).open("a", encoding="utf-8") if log_path else None
    columns = (
        TextColumn("[bold]differential"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    # auto_refresh off: no refresh thread alive while the worker processes are forked
    with Progress(*columns, console=console, transient=False, auto_refresh=False) as progress:
        task = progress.add_task("", total=len(specs))
        progress.refresh()

        def done(outcome: Outcome) -> None:
            if log is not None:
                log.write(json.dumps(outcome.to_json()) + "\n")
                log.flush()
            counts[outcome.status.value] += 1
            text = " ".join(f"{s.value} {counts[s.value]}" for s in Status if counts[s.value])
            progress.update(task, advance=1, description=text, refresh=True)

        try:
            report = run_differential(specs, reference_cmd, on_done=done, **kwargs)
        finally:
            if log is not None:
                log.close()

    table = Table(title=f"{len(specs)} games against: {reference_cmd}")
    table.add_column("outcome")
    table.add_column("games", justify="right")
    labels = {
        Status.SAME: "accepted, same result",
        Status.DIFFERENT: "accepted, different result",
        Status.KNOWN_DEFECT: "refused at a known reference defect",
        Status.REFUSED: "refused otherwise",
        Status.EXPORT_FAILED: "our export failed",
    }
    for status in Status:
        table.add_row(labels[status], str(report.counts[status.value]))
    console.print(table)
    if report.causes:
        causes = Table(title="first divergences by cause")
        causes.add_column("games", justify="right")
        causes.add_column("cause", overflow="fold")
        for cause, n in report.causes:
            causes.add_row(str(n), cause)
        console.print(causes)
    for o in report.outcomes:
        if o.status in (Status.REFUSED, Status.KNOWN_DEFECT) and o.divergence:
            d = o.divergence
            known = d.get("defect")
            note = (
                f" [yellow](known defect {known['key']}: {known['write_up']})[/yellow]"
                if known
                else ""
            )
            console.print(
                f"[bold]{o.spec.name}[/bold] action {d['action_index']} (id {d['action_id']}): "
                f"{json.dumps(d['action'])}\n    [red]{d['error']}[/red]{note}",
                highlight=False,
            )
        elif o.status == Status.EXPORT_FAILED:
            console.print(f"[bold]{o.spec.name}[/bold] export failed: {o.export_error}")
        elif o.status == Status.DIFFERENT:
            console.print(
                f"[bold]{o.spec.name}[/bold] different result: ours {json.dumps(o.ours)}, "
                f"reference {json.dumps(o.reference)}",
                highlight=False,
            )
    if report_path:
        Path(report_path).write_text(json.dumps(report.to_json(), indent=1) + "\n", "utf-8")
        console.print(f"report: {report_path}")
    return report
