"""Keeps input that never became a message (bad JSON, failed validation) with its reason."""

from __future__ import annotations

import hashlib
from datetime import datetime

from loopline.domain import ids
from loopline.domain.inbound import RejectedInput
from loopline.processors.application import Loopline, UnitOfWork


def record_rejected_input(app: Loopline, *, source: str, position: str, raw: str, reason: str, now: datetime) -> None:
    """The same bad input at the same place is kept once, however often it is published."""
    fingerprint = hashlib.sha256(f"{source}\x1f{position}\x1f{raw}".encode()).hexdigest()
    reject_id = ids.rejected_input_id(fingerprint)
    uow = UnitOfWork(app)
    if uow.get(reject_id, RejectedInput) is None:
        uow.add(RejectedInput.record(id=reject_id, now=now, source=source, position=position, raw=raw, reason=reason))
        uow.commit()
