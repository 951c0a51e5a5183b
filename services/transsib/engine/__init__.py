"""Russian Railroads (``transsib``) rules engine: pure Python (the Russian Railroads rules
summary; the open questions in ``docs/transsib-assumptions.md``).

Modules by rule area: :mod:`.data` (tables), :mod:`.options`, :mod:`.actions`,
:mod:`.player`, :mod:`.track`, :mod:`.locos`, :mod:`.industry`, :mod:`.engineers`,
:mod:`.turn_order`, :mod:`.scoring`, :mod:`.placement` (spaces, costs, coins for
workers), :mod:`.frames` (pending decisions as named records) and :mod:`.decisions`
(their legal actions and what each action does), :mod:`.effects` (the interpreter of
action-space effects: one table row per op), :mod:`.flow` (rounds, turns, relocation,
scoring), :mod:`.state` (the contract and setup), :mod:`.refusals` (reasons for illegal
actions), :mod:`.view` (views, JSON, determinisation), :mod:`.reading` (the read-only
API for heuristics).
"""

from services.transsib.engine.game import GAME, TranssibGame

__all__ = ["GAME", "TranssibGame"]
