"""Clocks and dropped seats (issue 12): time controls, the pure clock, the
clock keeper service and the per-seat takeover weights."""
