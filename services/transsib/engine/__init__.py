"""Russian Railroads (``transsib``) rules engine: pure Python, see ``../shared/rules/transsib.md``.

Modules by rule area: :mod:`.data` (tables), :mod:`.options`, :mod:`.actions`,
:mod:`.player`, :mod:`.track`, :mod:`.locos`, :mod:`.industry`, :mod:`.engineers`,
:mod:`.turn_order`, :mod:`.scoring`, :mod:`.placement` (spaces, costs, coins for
workers), :mod:`.frames` and :mod:`.decisions` (pending decisions: legal actions and
effects), :mod:`.state` (setup, rounds, effects, scoring flow), :mod:`.refusals`
(reasons for illegal actions), :mod:`.views` (views, JSON, determinisation).
"""

from services.transsib.engine.game import GAME, TranssibGame

__all__ = ["GAME", "TranssibGame"]
