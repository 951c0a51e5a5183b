"""A small seeded random generator that is identical on every machine.

Python's :mod:`random` may change between versions; game logs must replay the
same way forever, so engines draw from :class:`SeededRandom` (SplitMix64, a
public-domain generator by Sebastiano Vigna). Its whole state is one integer,
so it clones and serialises trivially.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1


class SeededRandom:
    """SplitMix64.

    >>> r = SeededRandom(42)
    >>> [r.randbelow(6) for _ in range(5)]
    [1, 1, 0, 0, 4]
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next64(self) -> int:
        """The next 64-bit unsigned integer."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling, no modulo bias).

        Raises:
            ValueError: if ``n <= 0``.
        """
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def choice(self, seq: Sequence[T]) -> T:
        """A uniformly chosen element of a non-empty sequence."""
        return seq[self.randbelow(len(seq))]

    def shuffle(self, seq: MutableSequence[T]) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(seq) - 1, 0, -1):
            j = self.randbelow(i + 1)
            seq[i], seq[j] = seq[j], seq[i]

    def clone(self) -> SeededRandom:
        return SeededRandom(self.state)
