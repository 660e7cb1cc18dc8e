"""A reminder to a contact passes the same send checks as every other email (seed 002 §7; issue 19's
"reminders skip the limits"): held until the limit frees up, or handed to the owner when it never does."""

from __future__ import annotations

from datetime import datetime, timezone

from loopline.domain.open_loop import OpenLoop
from loopline.domain.task import Task
from tests.conftest import command, signal
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


def test_a_hand_registered_watch_spelled_another_way_reminds_on_the_same_ledger_and_hears_the_reply() -> None:
    """Two loops wait on one mailbox, one registered by hand with a display name and capitals: with a weekly
    limit of 1, one reminder goes out (to the mailbox), and the contact's reply resolves the hand-registered loop."""
    loopline = InMemoryLoopline()
    contracts(loopline, "legal@acme.com", member_weekly_limit=1)
    loopline.publish(command("w", "loop.register", T0, TENANT, loop_id="sign-back", task_id="nda0", channel="email",
                             watch={"sender": "Legal Team <LEGAL@acme.com.>"}, deadline="2026-03-20T10:00:00Z",
                             if_unresolved="send_reminder"))

    loopline.tick(DUE)
    assert [message["to"] for _, message in loopline.emails()] == ["legal@acme.com"]

    loopline.publish(signal("r", "email.received", "2026-03-20T11:00:00Z", TENANT, sender="legal@acme.com",
                            subject="Re: NDA", body="Signed, attached."))
    resolved = [e for e in loopline.events() if isinstance(e, OpenLoop.Resolved)]
    assert "sign-back" in {loop.loop_ref for loop in resolved}
