"""Share certificate ids (``PLM_3``) for the 18xx.games interchange.

Our engine keeps percentages only; 18xx.games actions name certificates. The ledger follows
each certificate: where it is (a seat, ``"treasury"``, ``"pool"``, ``"redeemed"``) and, for
players, in which order they acquired it. On import it tells whether a bought share comes from
the Treasury or the pool; on export it picks the ids the 18xx.games UI would: the lowest
numbered Treasury share, the lowest numbered pool share, and for a sale the seller's shares in
the order he got them (the president's certificate last).

Certificate ``CORP_0`` is the president's (20%), ``CORP_1`` .. ``CORP_8`` are 10% shares.
At setup seats 0.. hold ``_8``, ``_7``, ``_6``, ``_5`` of both starting corporations and with
three players ``_5`` is in the pool. The names follow the reference engine (errata A2):

* buying NMinorS gives the highest-numbered Nord certificate still in the Treasury
  (``Nord_4`` when Nord is the drawn French starting corporation);
* the pool keeps its certificates in arrival order;
* when a president sells into his 20% certificate and the presidency passes, every named
  certificate goes to the pool, then the new president's first two 10% certificates; the
  new president takes the president's certificate and the seller gets back the unsold part
  as the certificate(s) at the front of the pool.
"""

from __future__ import annotations

from services.kernel.engine import Event

from ..data import CORPS

TREASURY, POOL, REDEEMED = "treasury", "pool", "redeemed"


class ShareLedger:
    """Where every certificate is (see the module docstring)."""

    __slots__ = ("where", "held", "pool")

    def __init__(self, num_players: int, starting: tuple[str, ...]) -> None:
        self.where: dict[str, dict[int, object]] = {
            c.sym: {k: TREASURY for k in range(9)} for c in CORPS
        }
        self.held: list[list[str]] = [[] for _ in range(num_players)]
        self.pool: dict[str, list[int]] = {c.sym: [] for c in CORPS}
        for corp in starting:
            for seat in range(num_players):
                self._give(corp, 8 - seat, seat)
            if num_players == 3:
                self.move(f"{corp}_5", POOL)

    # ---------------------------------------------------------------- moves

    def _give(self, corp: str, k: int, seat: int) -> None:
        self.where[corp][k] = seat
        self.held[seat].append(f"{corp}_{k}")

    def _take(self, corp: str, k: int) -> None:
        owner = self.where[corp][k]
        if isinstance(owner, int):
            self.held[owner].remove(f"{corp}_{k}")
        elif owner == POOL:
            self.pool[corp].remove(k)

    def move(self, share_id: str, to: object) -> None:
        """Move a certificate to a seat or to ``treasury``/``pool``/``redeemed``."""
        corp, k = split(share_id)
        self._take(corp, k)
        if isinstance(to, int):
            self._give(corp, k, to)
        else:
            self.where[corp][k] = to
            if to == POOL:
                self.pool[corp].append(k)

    def location(self, share_id: str) -> object:
        """Where a certificate is: a seat or ``treasury``/``pool``/``redeemed``."""
        corp, k = split(share_id)
        return self.where[corp][k]

    def ids_at(self, corp: str, place: object) -> list[int]:
        """Certificate numbers of ``corp`` at a place, ascending."""
        return sorted(k for k, w in self.where[corp].items() if w == place)

    def held_by(self, seat: int, corp: str) -> list[str]:
        """A player's certificates of ``corp`` in the order he got them."""
        return [s for s in self.held[seat] if s.startswith(corp + "_")]

    def swap_president(self, corp: str, old: int, new: int) -> None:
        """The new president takes ``CORP_0`` and gives two 10% shares to the old one."""
        given = [s for s in self.held_by(new, corp) if not s.endswith("_0")][:2]
        for s in given:
            self.move(s, old)
        self.move(f"{corp}_0", new)

    def sell(self, seat: int, corp: str, sids: list[str], percent: int, new_pres: int) -> None:
        """A player sells ``sids`` (``percent`` in all) to the pool. When the president's
        certificate is among them (the presidency passes to ``new_pres``), every named
        certificate goes to the pool, then the new president's first two 10% certificates;
        the new president takes the president's certificate and the seller gets the unsold
        part back from the front of the pool (errata A2)."""
        for sid in sids:
            self.move(sid, POOL)
        if f"{corp}_0" not in sids:
            return
        given = [s for s in self.held_by(new_pres, corp) if not s.endswith("_0")][:2]
        for sid in given:
            self.move(sid, POOL)
        self.move(f"{corp}_0", new_pres)
        named = 10 * (len(sids) + 1)
        for _ in range((named - percent) // 10):
            self.move(f"{corp}_{self.pool[corp][0]}", seat)

    def follow(self, events: list[Event], before: list[int], after: list[int]) -> None:
        """Certificate moves our engine makes without naming them: NMinorS's Nord share (the
        highest-numbered Nord certificate in the Treasury, errata A2) and presidency swaps
        (``before``/``after``: president seat per corporation around the action; a swap
        already recorded is not repeated)."""
        for ev in events:
            if ev.get("type") == "bought_private" and ev.get("company") == "NMinorS":
                if "player" in ev:
                    k = max(k for k in self.ids_at("Nord", TREASURY) if k)
                    self.move(f"Nord_{k}", ev["player"])
        for ci, old in enumerate(before):
            new = after[ci]
            corp = CORPS[ci].sym
            if old >= 0 and new != old and self.location(f"{corp}_0") != new:
                self.swap_president(corp, old, new)

    # ---------------------------------------------------------------- export choices

    def pick_buy(self, corp: str, source: str) -> str:
        """Export: the certificate a buy from ``source`` takes (lowest number, not the
        president's).
        """
        place = TREASURY if source == "treasury" else POOL
        ks = [k for k in self.ids_at(corp, place) if k != 0]
        if not ks:
            raise ValueError(f"the ledger has no {corp} certificate in the {place}")
        return f"{corp}_{ks[0]}"

    def pick_sell(self, seat: int, corp: str, count: int) -> list[str]:
        """Export: the certificates a sale of ``count`` shares gives (in order of acquisition)."""
        normal = [s for s in self.held_by(seat, corp) if not s.endswith("_0")]
        if len(normal) < count:  # part of the president's certificate goes (presidency moves)
            return normal + [f"{corp}_0"]
        return normal[:count]

    def pick_redeem(self, corp: str, count: int = 1) -> list[str]:
        """Export: the ``count`` pool certificates a redemption takes (lowest numbers)."""
        return [f"{corp}_{k}" for k in self.ids_at(corp, POOL)[:count]]


def split(share_id: str) -> tuple[str, int]:
    """``"PLM_3"`` -> ``("PLM", 3)``."""
    corp, _, k = share_id.rpartition("_")
    return corp, int(k)
