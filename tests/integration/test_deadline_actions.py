"""What a loop's deadline does when it passes unanswered (its `if_unresolved` action), and the proactive
run's clamp, through the application on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopline.runtime.system import System
from tests.conftest import command, publish
from tests.integration.helpers import (
    T0,
    loop_row,
    loop_rows,
    nda_awaiting_signature,
    outbox,
    run_row,
    task_row,
    tick,
)

DEADLINE = "2026-03-15T10:00:00Z"


def _task_with_loop(system: System, if_unresolved: str, *extra: dict) -> None:
    publish(system, *nda_awaiting_signature("m", DEADLINE, if_unresolved), *extra)


def test_unresolved_notify_user_asks_the_user_what_next(system: System, home: Path) -> None:
    _task_with_loop(system, "notify_user")

    tick(system, DEADLINE)

    assert loop_row(system, "nda/signature")["resolved_by"] == "expired"
    assert [(line["to"], line["kind"], line["text"]) for line in outbox(home)] == [
        ("user", "loop_expired", "'Get the NDA signed': I have been waiting for Signed NDA since 13 Mar 2026 10:00 UTC, "
                                 "and nothing came by 15 Mar 2026 10:00 UTC. What should I do next?")
    ]
    assert task_row(system, "nda")["status"] == "executing"


def test_unresolved_send_reminder_reminds_the_contact_waits_again_and_tells_the_user(system: System, home: Path) -> None:
    publish(
        system,
        command("m1", "task.create", T0, task_id="nda", title="Get the NDA signed"),
        command("m2", "action.record", T0, task_id="nda", action="send_contract", to="legal@acme.com",
                resource_id="doc-7"),
    )

    tick(system, "2026-03-20T10:00:00Z")

    assert loop_row(system, "nda/send_contract/1")["resolved_by"] == "expired"
    reminder, notice = outbox(home)
    assert (reminder["to"], reminder["kind"]) == ("legal@acme.com", "send_reminder")
    assert reminder["details"]["subject"] == "A reminder about the document to sign"
    assert reminder["details"]["body"] == (
        "Hello,\n\nA quick reminder about the document to sign, which I sent 7 days ago. "
        "Could you sign and return it, or let me know it arrived?\n\nThanks!"
    )
    assert (notice["to"], notice["kind"]) == ("user", "reminder_sent")
    assert notice["text"] == (
        "'Get the NDA signed': still waiting for the signed document (or an acknowledgment) I sent to legal@acme.com "
        "since 13 Mar 2026 10:00 UTC. I sent legal@acme.com a reminder and will tell you if nothing comes by "
        "27 Mar 2026 10:00 UTC."
    )
    again = loop_row(system, "nda/send_contract/1/reminder")
    assert (again["resolved"], again["if_unresolved"], again["deadline"]) == (False, "notify_user", "2026-03-27T10:00:00Z")
    assert task_row(system, "nda")["status"] == "waiting"  # on the reminder's answer


def test_unresolved_send_reminder_with_nobody_to_remind_asks_the_user(system: System, home: Path) -> None:
    _task_with_loop(system, "send_reminder")

    tick(system, DEADLINE)

    assert loop_row(system, "nda/signature")["resolved_by"] == "expired"
    assert [(line["to"], line["kind"], line["text"]) for line in outbox(home)] == [
        ("user", "reminder_needed", "'Get the NDA signed': I have been waiting for Signed NDA since 13 Mar 2026 10:00 UTC, "
         "and nothing came by 15 Mar 2026 10:00 UTC. I have nobody's address to send a reminder to: please nudge "
         "them, or tell me what to do next.")
    ]
    assert [row["loop_id"] for row in loop_rows(system)] == ["nda/signature"]


def test_unresolved_cancel_task_cancels_the_task_and_its_other_loops(system: System, home: Path) -> None:
    _task_with_loop(
        system, "cancel_task",
        command("m3", "action.record", T0, task_id="nda", action="send_email", to="legal@acme.com"),
    )

    tick(system, DEADLINE)

    assert loop_row(system, "nda/signature")["resolved_by"] == "expired"
    assert loop_row(system, "nda/send_email/1")["resolved_by"] == "cancelled"
    task = task_row(system, "nda")
    assert (task["status"], task["open_loops"]) == ("cancelled", 0)
    assert [(line["kind"], line["text"]) for line in outbox(home)] == [
        ("task_cancelled", "Stopped tracking 'Get the NDA signed': no sign of Signed NDA by 15 Mar 2026 10:00 UTC, "
                           "and that wait was set to cancel the task.")
    ]


def test_unresolved_escalate_to_loop_tells_the_user_at_once_and_the_proactive_run_wakes_the_task(
    system: System, home: Path
) -> None:
    _task_with_loop(system, "escalate_to_loop")
    tick(system, "2026-03-14T16:00:00Z")  # the run's first wake-up; the next is a day later, after DEADLINE + 4 h

    tick(system, DEADLINE)

    assert loop_row(system, "nda/signature")["resolved_by"] == "expired"
    run = run_row(system)
    assert run["pending_escalations"] == 1
    assert run["next_run_at"] == "2026-03-15T14:00:00Z"
    told = [(line["to"], line["kind"], line["text"]) for line in outbox(home)]
    assert told == [
        ("user", "escalation", "'Get the NDA signed' needs your decision: no sign of Signed NDA by 15 Mar 2026 10:00 UTC"),
    ]

    tick(system, "2026-03-15T14:00:00Z")

    assert run_row(system)["pending_escalations"] == 0
    assert [(line["to"], line["kind"], line["text"]) for line in outbox(home)][1:] == [
        ("agent", "task_wakeup", "no sign of Signed NDA by 15 Mar 2026 10:00 UTC"),  # the task's wake-up context
    ]


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ("2026-03-13T12:01:00Z", "2026-03-13T12:30:00Z"),  # one minute ahead: at least 30 minutes
        ("2026-05-01T00:00:00Z", "2026-03-20T12:00:00Z"),  # weeks ahead: at most 7 days
        ("2026-03-14T08:00:00Z", "2026-03-14T08:00:00Z"),  # in range: as asked
    ],
)
def test_scheduling_the_next_proactive_run_is_clamped_to_30_minutes_and_7_days(
    system: System, asked: str, expected: str
) -> None:
    publish(system, command("m1", "task.create", T0, task_id="t1", title="Anything"))

    schedule = command("m2", "run.schedule", "2026-03-13T12:00:00Z", reason="check inbox")
    schedule["data"]["at"] = asked  # `at` is also the envelope's time
    publish(system, schedule)

    run = run_row(system)
    assert run["next_run_at"] == expected
    assert run["next_run_reason"] == "check inbox"

