"""Where in the turn structure a state is (spec §4-§10), as small integer codes.

``BIDDING`` is shared by the three kinds of auction: the opening auction (§4), an ordinary
auction after the Auction dial (§6) and the Wabash auction of the first Chicago phase (§9).
Dividend and Chicago phases need no decision and are resolved inside ``apply``.
"""

from __future__ import annotations

BIDDING = 0
"""An auction is running; the active seat bids or passes (§4, §6, §9)."""
DIAL = 1
"""The turn player must advance one dial not in its red zone (§5)."""
AUCTION = 2
"""Auction dial chosen: put a share up (``auction``) or ``decline`` (§5, §6)."""
EXPAND = 3
"""Expand dial chosen: ``build`` (up to 3), ``done`` or ``decline`` (§7)."""
DEVELOP = 4
"""Develop dial chosen: ``develop`` or ``decline`` (§8)."""
OVER = 5
"""The game has ended (§11)."""

PHASE_NAMES = ("bidding", "choose_dial", "auction", "expand", "develop", "game_over")
PHASE_TITLES = {
    "bidding": "auction bidding",
    "choose_dial": "choosing an action dial",
    "auction": "putting a share up for auction",
    "expand": "building track",
    "develop": "developing a city",
    "game_over": "game over",
}
"""What a person reads for each phase name of the view (the board's status line)."""

KIND_NONE = 0
KIND_OPENING = 1
"""The opening auction of one share each of PRR, B&O, C&O, NYC (§4)."""
KIND_NORMAL = 2
"""An auction after the Auction dial (§6)."""
KIND_WABASH = 3
"""The Wabash share auction of the first Chicago phase (§9.2)."""
AUCTION_KIND_NAMES = ("none", "opening", "dial", "wabash")
