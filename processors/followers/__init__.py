"""Followers: the long-running sources that read (the embedded log, the tick, the decisions to make, deliveries, parked
messages) and hand what they read to the bus; none applies anything itself."""
