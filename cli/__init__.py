"""The `loopline` command and the one composition root."""
