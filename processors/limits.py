"""Every bound the input edge enforces, in one place; the README's "Limits and bad input" lists them.

The read models store tenants and task ids in VARCHAR(200) columns and contacts in VARCHAR(200),
so ids stay well inside that; the other bounds keep one line from costing more than a line should.
"""

from __future__ import annotations

import re

MAX_LINE_BYTES = 256 * 1024
"""One message (a JSONL line or a Kafka record), in bytes."""

MAX_DEPTH = 32
"""Nesting of JSON objects and arrays, the envelope counting as 1; checked before the JSON parser recurses."""

MAX_INT_DIGITS = 18
"""Digits of a JSON integer (so it fits 64 bits), checked before it is converted."""

MAX_FLOAT_CHARS = 32
"""Characters of a JSON number with a fraction or exponent; it must also be finite."""

MAX_ID_CHARS = 128
"""Tenants, message ids, task ids, loop ids, wake ids."""

ID_ALPHABET = "A-Z a-z 0-9 . _ : @ + / = -"
ID_PATTERN = r"[A-Za-z0-9._:@+/=-]+"

MAX_SHORT_TEXT_CHARS = 200
"""Fields a read model stores in a bounded column (a task's contact)."""

MAX_TEXT_CHARS = 10_000
"""Any other string: titles, subjects, reasons, watch values, object keys."""

MAX_LONG_TEXT_CHARS = 100_000
"""Free text that may be long: `body`, `text`, `description`, `notes`, `summary` (still within the line limit)."""

LONG_TEXT_FIELDS = frozenset({"body", "text", "description", "notes", "summary"})

MAX_KEY_CHARS = 200
"""Keys of JSON objects (in `context`, `payload`, `match_fields`, …)."""

EARLIEST_YEAR = 2000
LATEST_YEAR = 2100
"""Times (`at`, deadlines) must fall in these years once converted to UTC."""

MAX_EXPIRES_IN_DAYS = 3650

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""Characters no text may hold: C0 and C1 controls (tab, newline and carriage return aside) and lone surrogates."""


def shown(text: str, width: int = 80) -> str:
    """User text inside a reason: bounded, and with anything unprintable escaped."""
    clipped = text if len(text) <= width else text[:width] + "…"
    return clipped.encode("unicode_escape").decode("ascii") if FORBIDDEN.search(clipped) else clipped
