"""Run every benchmark (``make bench``) and print a table of results.

Each ``benchmarks/bench_*.py`` module defines ``BENCHMARKS``: a list of
zero-argument callables returning a :class:`benchmarks.common.Measurement`.
Usage: ``python -m benchmarks.run [substring ...]`` runs only benchmarks whose
module or name contains one of the substrings. The figures are recorded by
hand in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from rich.console import Console
from rich.table import Table

import benchmarks


def main(argv: list[str] | None = None) -> int:
    filters = list(sys.argv[1:] if argv is None else argv)
    table = Table(title="Roundhouse benchmarks")
    for col in ("benchmark", "value", "target", "ok", "detail"):
        table.add_column(col)
    console = Console(width=200)
    failed = 0
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for bench in module.BENCHMARKS:
            label = f"{info.name}.{bench.__name__}"
            if filters and not any(f in label for f in filters):
                continue
            console.print(f"running {label} ...")
            m = bench()
            failed += not m.ok
            table.add_row(m.name, m.value_text, m.target_text, "yes" if m.ok else "NO", m.detail)
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
