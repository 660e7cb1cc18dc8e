"""One module per channel, each defining its `RULE`; `domain.matching` is the registry."""
