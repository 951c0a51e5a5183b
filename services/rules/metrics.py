"""The rules service's Prometheus metrics."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

ACTIONS = Counter(
    "roundhouse_rules_actions_total", "Submitted actions by outcome", ["title", "outcome"]
)
SUBMIT_SECONDS = Histogram(
    "roundhouse_rules_submit_seconds",
    "SubmitAction latency",
    ["title"],
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
)
CACHED = Gauge("roundhouse_rules_cached_games", "Live game states held in memory", ["title"])
REBUILDS = Counter("roundhouse_rules_rebuilds_total", "Games rebuilt from their stream", ["title"])
WATCHERS = Gauge("roundhouse_rules_watchers", "Open WatchGame streams", ["title"])
REWINDS = Counter(
    "roundhouse_rules_rewinds_total", "Games whose stream lost entries the cache had", ["title"]
)
REPEATED_POSITIONS = Counter(
    "roundhouse_rules_repeated_positions_total",
    "Games whose position repeated the repetition guard's limit of times (a loop without progress)",
    ["title"],
)
