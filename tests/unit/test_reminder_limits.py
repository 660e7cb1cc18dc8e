"""A reminder to a contact passes the same send checks as every other email (seed 002 §7; issue 19's
"reminders skip the limits"): held until the limit frees up, or handed to the owner when it never does."""

from __future__ import annotations

from datetime import datetime, timezone

from loopline.domain.task import Task
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

TENANT = "acme"
T0 = "2026-03-13T10:00:00Z"
DUE = datetime(2026, 3, 20, 10, 0, tzinfo=timezone.utc)  # the send_contract loops' 7-day deadline


def contracts(loopline: InMemoryLoopline, *contacts: str, **limits: int) -> None:
    loopline.publish(command("cfg", "tenant.configure", "2026-03-12T10:00:00Z", TENANT, **limits))
    for n, contact in enumerate(contacts):
        loopline.publish(
            command(f"c{n}", "task.create", T0, TENANT, task_id=f"nda{n}", title=f"NDA {n}"),
            command(f"a{n}", "action.record", T0, TENANT, task_id=f"nda{n}", action="send_contract", to=contact,
                    resource_id=f"doc-{n}"),
        )


def notices(loopline: InMemoryLoopline, kind: str) -> list[str]:
    return [e.message for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == kind]


def test_a_reminder_the_daily_limit_holds_goes_out_the_next_day() -> None:
    loopline = InMemoryLoopline()
    contracts(loopline, "legal@acme.com", "ops@acme.com", daily_send_limit=1)

    loopline.tick(DUE)
    assert [message["to"] for _, message in loopline.emails()] == ["legal@acme.com"]

    loopline.tick(datetime(2026, 3, 21, 10, 0, tzinfo=timezone.utc))
    assert [message["to"] for _, message in loopline.emails()] == ["legal@acme.com", "ops@acme.com"]
    assert all(message["kind"] == "send_reminder" for _, message in loopline.emails())


def test_a_reminder_a_limit_of_0_holds_for_good_is_the_owners_to_send() -> None:
    loopline = InMemoryLoopline()
    contracts(loopline, "legal@acme.com", member_weekly_limit=0)

    loopline.tick(DUE)

    assert loopline.emails() == []
    [asked] = notices(loopline, "reminder_needed")
    assert "held back" in asked and "legal@acme.com" in asked
    assert notices(loopline, "reminder_sent") == []
