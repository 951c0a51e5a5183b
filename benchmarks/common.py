"""Shared pieces of the benchmarks."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class Measurement:
    """One benchmark figure against its target.

    ``higher_is_better`` says which side of ``target`` passes.
    """

    name: str
    value: float
    unit: str
    target: float
    higher_is_better: bool = True
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.value >= self.target if self.higher_is_better else self.value <= self.target

    @property
    def value_text(self) -> str:
        return f"{self.value:,.1f} {self.unit}"

    @property
    def target_text(self) -> str:
        return f"{'>=' if self.higher_is_better else '<='} {self.target:,.0f} {self.unit}"
