"""The base of every named domain exception; callers decide what one means."""


class DomainError(Exception):
    """A command broke a domain rule; the message says which and why."""
