"""The archive: finished games copied from Redis into the durable store."""
