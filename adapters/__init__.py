"""Real implementations of the ports: event store, log, read-model database, drafting, channels, clock."""
