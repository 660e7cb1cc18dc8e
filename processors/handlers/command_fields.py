"""The types a message's fields take at the edge, with the bounds of `processors/limits.py`: an id, a time, text
that is never blank, a watch, a mailbox. Commands (`processors/handlers/commands_types.py`) and signals are declared with them."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo

from loopline.domain.mailbox import LINE_BREAKS, NotAMailbox, looks_like_address, mailbox
from loopline.processors import limits
from loopline.processors.limits import shown

_ID = re.compile(limits.ID_PATTERN)
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([Zz]|[+-]\d{2}:\d{2})")


STORED = {"stored": True}
"""The validation context of `data` read back from the log: it passed the edge when appended, so its ids are
taken as stored (they name what the store already keeps), while times and named values are still typed."""


def _id(value: Any, info: ValidationInfo) -> str:
    if isinstance(value, str) and info.context == STORED:
        return value
    if not isinstance(value, str) or len(value) > limits.MAX_ID_CHARS or not _ID.fullmatch(value):
        raise ValueError(f"an id is 1 to {limits.MAX_ID_CHARS} characters of {limits.ID_ALPHABET}")
    if not value.strip("."):
        # A page's address holds ids as path segments, and `.` or `..` (even as %2e%2e) would leave theirs.
        raise ValueError(f"an id is not only dots ({value!r}): it names a page's address, where dots alone mean "
                         "another place; add a letter or digit")
    return value


def parse_timestamp(value: Any) -> datetime:
    """An RFC 3339 string with a time zone, in the accepted years once in UTC; never an epoch number."""
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise ValueError("must be an RFC 3339 time with a time zone, such as 2026-03-13T10:00:00Z")
    try:
        local = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value} is not a date and time that exists") from None
    try:
        moment: datetime | None = local.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:30:00+01:00 is before the first datetime in UTC
        moment = None
    if moment is None or not limits.EARLIEST_YEAR <= moment.year <= limits.LATEST_YEAR:
        raise ValueError(f"must fall in the years {limits.EARLIEST_YEAR} to {limits.LATEST_YEAR} (UTC)")
    return moment


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


def _mailbox(value: str) -> str:
    try:
        return mailbox(value)
    except NotAMailbox as error:
        raise ValueError(str(error)) from None


def watched_mailbox(field: str, value: str) -> str:
    """A watch's address as its mailbox; an error names the watch's field."""
    try:
        return mailbox(value)
    except NotAMailbox as error:
        raise ValueError(f"{field}: {error}") from None


def _contact(value: str) -> str:
    """An address is kept as its normalised mailbox (one contact, however it is spelled); a name as it is given."""
    if looks_like_address(value) or any(c in LINE_BREAKS for c in value):
        return _mailbox(value)
    return value


def _watch(value: Any) -> dict[str, Any]:
    """A watch names each field's expected value as a string; `match_fields` maps payload fields to strings."""
    if not isinstance(value, dict) or not value:
        raise ValueError("must be an object of the fields to watch")
    for key, item in value.items():
        if key == "match_fields":
            if not isinstance(item, dict) or not all(_is_text(k) and _is_text(v) for k, v in item.items()):
                raise ValueError("match_fields: must be an object of payload fields to non-empty strings")
        elif not _is_text(item):
            raise ValueError(f"{shown(key)}: must be a non-empty string")
    return value


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


Id = Annotated[str, BeforeValidator(_id)]
Timestamp = Annotated[datetime, BeforeValidator(parse_timestamp)]
Text = Annotated[str, AfterValidator(_not_blank)]
ShortText = Annotated[str, Field(max_length=limits.MAX_SHORT_TEXT_CHARS), AfterValidator(_not_blank)]
Watch = Annotated[dict[str, Any], BeforeValidator(_watch)]
Mailbox = Annotated[str, AfterValidator(_not_blank), AfterValidator(_mailbox)]
"""An email address, normalised (`domain/mailbox.py`): what ledgers, limits, matching and dedup key on."""
Contact = Annotated[ShortText, AfterValidator(_contact)]
"""Who a task is with: an address (normalised as a `Mailbox`) or a name."""
MatchFields = dict[Text, Text]


class Strict(BaseModel):
    """No coercion: a string is never read as a number, nor a boolean as a number; named values
    (enums) are still given as their JSON strings. Frozen: what a handler is given, it cannot change."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def unknown_keys(data: Any, known: tuple[str, ...], what: str) -> Any:
    """Names the keys of `data` that are none of `known`, for a `mode="before"` validator."""
    if isinstance(data, dict):
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown {what}(s) {', '.join(map(shown, unknown))}; known: {', '.join(known)}")
    return data
