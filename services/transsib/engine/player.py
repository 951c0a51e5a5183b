"""One player's board and supply (§3.2, §6), as a compact slotted object.

Units: positions are line spaces (1-based, 0 = marker not on the line);
industry positions are field indices (see :class:`~.options.Rules`), -1 = marker
inactive; locomotive slots hold locomotive numbers (0 = empty); factory gaps hold
the factory's locomotive number (0 = empty); coins are roubles; score is points.
"""

from __future__ import annotations

from typing import Any

from services.transsib.engine import data as D

NO_CAP: list[int] = []
"""The empty track-capacity cache ("not computed"; falsy). Shared and never written: the
cache is replaced by a fresh list when first needed (:mod:`.track`)."""


class Player:
    """A player's state.

    Attributes:
        pos: rail marker positions, ``pos[line * 5 + colour]`` (§5.1).
        unlocked: bit mask of the colours the player has (§6.3); black always.
        locos: locomotive numbers on the slots (TS, TS, StP, Kiev) (§7.2).
        factories: factory numbers in the 5 gaps, left to right (§7.4).
        ind: field of industry marker 0 and 1 (-1 = inactive) (§8).
        doublers: doublers on the doubler spaces (filled left to right) (§5.4).
        coins: roubles.
        own / placed_own / perm_own: own-colour workers free, on the board, owned.
        black / placed_black / has_black: the restricted black worker (§9), when the
            option restricts it; otherwise it is counted as an own worker.
        temp / placed_temp: turquoise workers held / placed this round (§5.4).
        extra: permanent workers gained during the game (black worker included).
        engineers: hired engineer indices, in hiring order (§10.2).
        eng_used: bit mask of own engineers used this round.
        tokens_used: bit mask of "?" tokens used (§12.2).
        revalued / medal: revaluation marker and Kiev medal active (§12).
        line_double: bit mask of lines whose whole score is doubled (§6.5 St Petersburg).
        fired: bit mask of fired line specials (index into ``data.SPECIALS``).
        ind_fired: bit mask of fired industry specials.
        eb: end bonus cards held (indices into ``data.END_BONUS_CARDS``), secret (§15).
        score: points.
        card: the turn-order card dealt at setup (1..4) (§3.2, §11.4).
    """

    __slots__ = (
        "pos",
        "unlocked",
        "locos",
        "factories",
        "ind",
        "doublers",
        "coins",
        "own",
        "placed_own",
        "perm_own",
        "black",
        "placed_black",
        "has_black",
        "temp",
        "placed_temp",
        "extra",
        "engineers",
        "eng_used",
        "tokens_used",
        "revalued",
        "medal",
        "line_double",
        "fired",
        "ind_fired",
        "eb",
        "score",
        "card",
        "cap",
        "indcap",
    )

    def __init__(self, workers: int, coins: int, card: int, start_field: int) -> None:
        self.pos = [0] * (len(D.LINES) * 5)
        for line in range(len(D.LINES)):
            self.pos[line * 5 + D.BLACK] = 1  # §3.2: a black marker on space 1 of each line
        self.unlocked = 1 << D.BLACK
        self.locos = [0] * D.NUM_LOCO_SLOTS
        self.locos[0] = 1  # §3.2: a #1 locomotive on the Trans-Siberian
        self.factories = [0] * D.NUM_GAPS
        self.ind = [start_field, -1]
        self.doublers = 0
        self.coins = coins
        self.own = workers
        self.placed_own = 0
        self.perm_own = workers
        self.black = 0
        self.placed_black = 0
        self.has_black = False
        self.temp = 0
        self.placed_temp = 0
        self.extra = 0
        self.engineers: list[int] = []
        self.eng_used = 0
        self.tokens_used = 0
        self.revalued = False
        self.medal = False
        self.line_double = 0
        self.fired = 0
        self.ind_fired = 0
        self.eb: list[int] = []
        self.score = 0
        self.card = card
        self.cap: list[int] = NO_CAP
        self.indcap = -1

    def clone(self) -> Player:
        """An independent copy (lists copied, caches shared until invalidated)."""
        q = Player.__new__(Player)
        q.pos = self.pos[:]
        q.unlocked = self.unlocked
        q.locos = self.locos[:]
        q.factories = self.factories[:]
        q.ind = self.ind[:]
        q.doublers = self.doublers
        q.coins = self.coins
        q.own = self.own
        q.placed_own = self.placed_own
        q.perm_own = self.perm_own
        q.black = self.black
        q.placed_black = self.placed_black
        q.has_black = self.has_black
        q.temp = self.temp
        q.placed_temp = self.placed_temp
        q.extra = self.extra
        q.engineers = self.engineers[:]
        q.eng_used = self.eng_used
        q.tokens_used = self.tokens_used
        q.revalued = self.revalued
        q.medal = self.medal
        q.line_double = self.line_double
        q.fired = self.fired
        q.ind_fired = self.ind_fired
        q.eb = self.eb[:]
        q.score = self.score
        q.card = self.card
        q.cap = NO_CAP  # caches are rebuilt lazily
        q.indcap = self.indcap
        return q

    def invalidate_track(self) -> None:
        """Forget cached track capacities (after any marker move or unlock)."""
        self.cap = NO_CAP

    def reach(self, line: int) -> int:
        """Spaces of ``line`` the locomotives reach (§7.2: the TS adds up its two)."""
        slots = D.LINE_SLOTS[line]
        locos = self.locos
        if len(slots) == 1:
            return locos[slots[0]]
        return sum(locos[s] for s in slots)

    def public_json(self) -> dict[str, Any]:
        """Everything about the player but the secret end bonus cards (used by
        ``to_json`` and the views)."""
        return {
            "pos": self.pos[:],
            "unlocked": self.unlocked,
            "locos": self.locos[:],
            "factories": self.factories[:],
            "ind": self.ind[:],
            "doublers": self.doublers,
            "coins": self.coins,
            "own": self.own,
            "placed_own": self.placed_own,
            "perm_own": self.perm_own,
            "black": self.black,
            "placed_black": self.placed_black,
            "has_black": self.has_black,
            "temp": self.temp,
            "placed_temp": self.placed_temp,
            "extra": self.extra,
            "engineers": self.engineers[:],
            "eng_used": self.eng_used,
            "tokens_used": self.tokens_used,
            "revalued": self.revalued,
            "medal": self.medal,
            "line_double": self.line_double,
            "fired": self.fired,
            "ind_fired": self.ind_fired,
            "score": self.score,
            "card": self.card,
        }
