"""One mailbox, one spelling: an address as people write it turned into the one string every ledger,
limit, match and dedup keys on.

`Bob <BOB@X.com>`, `<bob@x.com>`, `(a)bob@x.com`, `bob@x.com.` and `"bob"@x.com` all name the mailbox
`bob@x.com`: the display name, comments, needless quoting, the root's trailing dot and case are
dropped (mail systems treat a local part's case alike in practice, and `domain/ids.py` always
has). The syntax is checked by `email-validator` without any network look-up. The empty address
`<>` and anything holding a line break (which could add mail headers) name no mailbox.

This module reaches outside the standard library on purpose: parsing addresses well is a library's
job, and every edge that takes an address must agree on it.
"""

from __future__ import annotations

import re

from email_validator import EmailNotValidError, validate_email

from loopline.domain.errors import DomainError

LINE_BREAKS = frozenset("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_TRAILING_DOT = re.compile(r"\.(?=>?$)")
_ADDRESS_LIKE = re.compile(r"\S@\S|[<>]")


class NotAMailbox(DomainError):
    """The text names no mailbox Loopline can send to; the message says why."""


def mailbox(text: str) -> str:
    """The normalised mailbox `text` names, or NotAMailbox saying why it names none."""
    if any(c in LINE_BREAKS for c in text):
        raise NotAMailbox("an address is one line: a line break in it could add mail headers")
    address = _TRAILING_DOT.sub("", _without_comments(text).strip())
    if address.replace(" ", "") == "<>":
        raise NotAMailbox("<> is the empty address, nobody's mailbox; give the contact's own address")
    try:
        valid = validate_email(
            address, check_deliverability=False, allow_display_name=True, allow_quoted_local=True, allow_smtputf8=True,
        )
    except EmailNotValidError as error:
        raise NotAMailbox(f"{text.strip()[:100]!r} is not an email address: {error}") from None
    return valid.normalized.lower()


def looks_like_address(text: str) -> bool:
    """Whether `text` was meant as an address (an @ between words, or angle brackets), not a name or a handle."""
    return bool(_ADDRESS_LIKE.search(text))


def _without_comments(text: str) -> str:
    """`text` without its RFC 5322 comments (parenthesised, nestable, never inside a quoted string)."""
    kept: list[str] = []
    depth, quoted, escaped = 0, False, False
    for c in text:
        if escaped:
            escaped = False
            if depth == 0:
                kept.append(c)
            continue
        if c == "\\":
            escaped = True
            if depth == 0:
                kept.append(c)
        elif c == '"' and depth == 0:
            quoted = not quoted
            kept.append(c)
        elif c == "(" and not quoted:
            depth += 1
        elif c == ")" and not quoted and depth:
            depth -= 1
        elif depth == 0:
            kept.append(c)
    return "".join(kept)
