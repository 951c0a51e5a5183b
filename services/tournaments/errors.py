"""The one error of the tournament cores: bad input, with a machine reason.

The service maps a :class:`TournamentError` to ``INVALID_ARGUMENT`` (or
``FAILED_PRECONDITION``) with a ``google.rpc.ErrorInfo`` whose ``reason`` is
:attr:`TournamentError.reason` and whose metadata is :attr:`TournamentError.metadata`.
Nothing is changed when one is raised: every function here returns new records.
"""

from __future__ import annotations


class TournamentError(ValueError):
    """Bad input to pairing, scoring or rating.

    ``reason`` is a snake_case code (``too_few_players``, ``table_size_out_of_range``,
    ``unknown_player``, ``duplicate_player``, ``bad_rank``, ``negative_score``,
    ``bad_weight``, ``no_design``...), ``message`` says which rule forbids the input,
    ``metadata`` carries the numbers (e.g. ``{"players": 2, "min_table": 3}``).
    """

    def __init__(self, reason: str, message: str, **metadata: object) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message
        self.metadata = {k: str(v) for k, v in metadata.items()}
