"""Handlers: what each kind of message does inside a step of the bus (commands, signals, timer firings, model answers)."""
