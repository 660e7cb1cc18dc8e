"""The runtime: the composition root, the system's drain, tick and rebuild, and the `loopline run` worker process model."""
