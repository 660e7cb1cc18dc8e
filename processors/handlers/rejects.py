"""Keeps input that never became a message (bad JSON, failed validation) with its reason."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from datetime import datetime

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.inbound import RejectedInput
from loopline.domain.masking import masked_line
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.bus import Fault, Handler
from loopline.processors.messages import Unreadable


def record_rejected_inputs(
    app: Loopline, rejects: Iterable[tuple[str, bytes, str]], *, source: str, now: datetime
) -> None:
    """Keeps each (position, raw, reason) in one transaction; the same bad input at the same place is
    kept once, however often it is published."""
    uow = UnitOfWork(app)
    for position, raw, reason in rejects:
        reject_input(uow, source=source, position=position, raw=raw, reason=reason, key=None, now=now)
    uow.commit()


def reject_input(
    uow: UnitOfWork, *, source: str, position: str, raw: str | bytes, reason: str, key: bytes | None, now: datetime
) -> None:
    """Adds the reject to a unit of work (a Kafka batch records its dead letters in its own transaction)."""
    # A refused `tenant.configure` holds the secrets it tried to set; a reject is read by anyone who reads `audit`.
    data = masked_line(raw.encode() if isinstance(raw, str) else raw)
    # Two parts, then SEP, then the bytes: version 1's fingerprints stay, and no source or position
    # can pass for another (see `ids.composite`).
    fingerprint = hashlib.sha256(f"{ids.composite(source, position)}{ids.SEP}".encode() + data).hexdigest()
    reject_id = ids.rejected_input_id(fingerprint)
    if uow.get(reject_id, RejectedInput) is not None:
        return
    try:
        text, encoding = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(data).decode(), "base64"
    uow.add(RejectedInput.record(
        id=reject_id, now=now, source=source, position=position, raw=text, encoding=encoding,
        key=key.decode("utf-8", "backslashreplace") if key is not None else None, reason=reason,
    ))


def raw_bytes(reject: RejectedInput.Recorded) -> bytes:
    """The rejected input's bytes as kept: as they came, but a refused `tenant.configure`'s secrets masked."""
    return base64.b64decode(reject.raw) if reject.encoding == "base64" else reject.raw.encode()


def _keep_unreadable(uow: UnitOfWork, unreadable: Unreadable) -> None:
    reject_input(uow, source=unreadable.source, position=unreadable.position, raw=unreadable.raw,
                 reason=unreadable.reason, key=unreadable.key, now=unreadable.at)


def _refused(uow: UnitOfWork, unreadable: Unreadable, error: DomainError) -> None:
    raise error  # keeping a reject asks nothing of the domain: a refusal here is a bug, and stops the batch


def _cannot_keep(uow: UnitOfWork, unreadable: Unreadable, fault: Fault) -> None:
    """An input that cannot even be kept as a reject has nowhere else to go: the batch stops, as on a storage failure."""
    raise fault.error


UNREADABLE: Handler[Unreadable] = Handler(apply=_keep_unreadable, refuse=_refused, park=_cannot_keep)
