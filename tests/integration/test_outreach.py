"""The outreach pipeline through the embedded system with the offline policy (issue 11's done-when, gym pack):
a ready acting task is worked at the next tick, follows its cadence, stops for a reply, and ends with an outcome."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import outbox, tick

GYM = "gym"
SAM = "sam@example.com"
DAY0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def at(days: float, minutes: int = 0) -> str:
    return format_time(DAY0 + timedelta(days=days, minutes=minutes))


def configure(system: System, **settings: Any) -> None:
    publish(system, command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto",
                            profile={"display_name": "Iron Temple", "sign_off": "Coach Dana"}, **settings))


def create(system: System, task_id: str, *, task_type: str = "churn_risk", contact: str = SAM,
           confidence: float = 0.8, **data: Any) -> None:
    report = publish(system, command(f"create-{task_id}", "task.create", at(0), GYM, task_id=task_id,
                                     title=f"Keep {contact} training", task_type=task_type, contact=contact,
                                     confidence=confidence, to_name="Sam", **data))
    assert report.rejected == [] and report.parked == []


def task(system: System, task_id: str) -> Task:
    found = system.app.repository.get(ids.task_id(GYM, task_id))
    assert isinstance(found, Task)
    return found


def emails_to(home: Path, contact: str = SAM) -> list[dict[str, Any]]:
    return [m for m in outbox(home) if m.get("kind") == "send_email" and m.get("to") == contact]


def owner_notices(home: Path, kind: str) -> list[dict[str, Any]]:
    return [m for m in outbox(home) if m.get("to") == "user" and m.get("kind") == kind]


def sent_days(system: System, task_id: str) -> list[int]:
    return [(e.timestamp - DAY0).days for e in system.app.events.get(ids.task_id(GYM, task_id))
            if isinstance(e, Task.TouchSent)]


def reply(system: System, ref: str, days: float, body: str, sender: str = SAM) -> None:
    report = publish(system, signal(ref, "email.received", at(days), GYM, sender=sender, subject="Re: Checking in",
                                    body=body))
    assert report.rejected == [] and report.parked == []


def test_churn_risk_follows_the_standard_cadence_and_ends_unresponsive_after_three_messages(system: System) -> None:
    configure(system)
    create(system, "confident")
    create(system, "unsure", contact="jo@example.com", confidence=0.5)
    home = system.settings.home
    for day in range(14):
        tick(system, at(day, 60))
    assert task(system, "unsure").status == "pending_review"  # below churn_risk's 0.75: it waits for the owner
    for day in range(14, 17):
        tick(system, at(day, 60))

    assert [m["details"]["touch"] for m in emails_to(home)] == [1, 2, 3]
    assert sent_days(system, "confident") == [0, 3, 8]
    assert [m["details"]["decided_by"] for m in emails_to(home)] == ["offline offline-policy-v1"] * 3
    assert all("Sam" in m["details"]["body"] and "Coach Dana" in m["details"]["body"] for m in emails_to(home))
    worked = task(system, "confident")
    assert (worked.status, worked.outcome, worked.messages_used) == ("cancelled", "unresponsive", 3)
    assert task(system, "unsure").status == "expired"  # never approved: it expired unworked
    assert emails_to(home, "jo@example.com") == []


def test_first_touch_is_the_creation_draft_sent_at_the_next_tick(system: System) -> None:
    configure(system)
    create(system, "drafted", draft={"subject": "We miss you", "body": "Hi Sam, how are things?"})
    assert emails_to(system.settings.home) == []

    tick(system, at(0, 1))
    [first] = emails_to(system.settings.home)
    assert (first["details"]["subject"], first["details"]["body"]) == ("We miss you", "Hi Sam, how are things?")
    assert first["details"]["decided_by"] == "creation draft"
    tick(system, at(0, 2))  # a repeated tick sends nothing more
    assert len(emails_to(system.settings.home)) == 1


def test_a_reply_stops_the_cadence_and_is_evaluated(system: System) -> None:
    configure(system)
    create(system, "t1")
    tick(system, at(0, 60))
    reply(system, "sam-1", 1, "Thanks, sounds good")

    home = system.settings.home
    assert [m["details"]["touch"] for m in emails_to(home)] == [1, 1]  # touch 1, then the reply to Sam
    answer = emails_to(home)[1]["details"]
    assert answer["subject"].startswith("Re: ") and "Thanks for getting back to me" in answer["body"]
    for day in (3, 8, 13):
        tick(system, at(day, 60))
    assert len(emails_to(home)) == 2  # no cadence touch after a reply
    decided = [e for e in system.app.events.get(ids.task_id(GYM, "t1")) if isinstance(e, Task.DecisionRecorded)]
    assert [(d.point, d.decision, d.adapter) for d in decided] == [
        ("draft_message", "draft", "offline"), ("evaluate_reply", "reply", "offline")]

    reply(system, "sam-2", 13.5, "See you Thursday!")  # the conversation goes on: this reply is evaluated too
    closed = task(system, "t1")
    assert (closed.status, closed.outcome, closed.turns_used) == ("completed", "verbal_commitment", 2)


def test_a_committed_reply_closes_the_task_with_an_outcome_of_its_type(system: System) -> None:
    configure(system)
    create(system, "t1")
    tick(system, at(0, 60))
    reply(system, "sam-1", 2, "See you Thursday at the 6am class")

    closed = task(system, "t1")
    assert (closed.status, closed.outcome) == ("completed", "verbal_commitment")
    assert len(emails_to(system.settings.home)) == 1


def test_an_unsure_evaluation_escalates_and_sends_nothing(system: System) -> None:
    configure(system)
    create(system, "t1")
    tick(system, at(0, 60))
    reply(system, "sam-1", 2, "Hmm, the weather lately.")  # no keyword: the offline policy is unsure

    escalated = task(system, "t1")
    assert escalated.status == "escalated" and "owner should read it" in escalated.escalation_reason
    assert len(emails_to(system.settings.home)) == 1


def test_a_reply_wakes_a_dormant_task(system: System) -> None:
    configure(system)
    create(system, "back", task_type="win_back")
    for day in (0, 3, 13, 30):  # slow_burn's touches, then its budget's last day
        tick(system, at(day, 60))
    dormant = task(system, "back")
    assert (dormant.status, dormant.messages_used) == ("dormant", 3)
    tick(system, at(40, 60))
    assert len(emails_to(system.settings.home)) == 3  # dormant: nothing is sent

    reply(system, "sam-late", 41, "Thanks, sounds good")
    woken = task(system, "back")
    decided = [e.point for e in system.app.events.get(woken.id) if isinstance(e, Task.DecisionRecorded)]
    assert decided[-1] == "evaluate_reply"  # woken and evaluated
    # The evaluation wants to answer, but the 3 messages are spent: the owner decides, nothing is sent.
    assert woken.status == "escalated" and "message budget (3) is spent" in woken.escalation_reason
    assert len(emails_to(system.settings.home)) == 3


def test_a_reply_to_a_cancelled_task_tells_the_owner_and_reopens_nothing(system: System) -> None:
    configure(system)
    create(system, "t1")
    for day in (0, 3, 8, 15):
        tick(system, at(day, 60))
    assert task(system, "t1").status == "cancelled"

    reply(system, "sam-late", 20, "Sorry, I was travelling! Back next week.")
    late = owner_notices(system.settings.home, "late_reply")
    assert len(late) == 1 and "travelling" in late[0]["text"] and "Nothing was reopened" in late[0]["text"]
    assert task(system, "t1").status == "cancelled"
    assert len(emails_to(system.settings.home)) == 3


def test_a_tick_steps_at_most_twenty_tasks_of_a_tenant_critical_first_and_the_rest_at_the_next(
        system: System) -> None:
    configure(system, daily_send_limit=100)
    draft = {"subject": "We miss you", "body": "Hi, how are things?"}
    low = [f"low{i}" for i in range(20)]
    critical = [f"critical{i}" for i in range(5)]
    for ref in low:
        create(system, ref, contact=f"{ref}@example.com", draft=draft, priority="low")
    for ref in critical:
        create(system, ref, contact=f"{ref}@example.com", draft=draft, priority="critical")

    tick(system, at(0, 1))
    first = {m["to"].split("@")[0] for m in outbox(system.settings.home) if m.get("kind") == "send_email"}
    assert len(first) == 20 and set(critical) <= first
    tick(system, at(0, 3))
    sent = [m["to"] for m in outbox(system.settings.home) if m.get("kind") == "send_email"]
    assert len(sent) == 25 and len(set(sent)) == 25


def test_a_reply_that_says_wait_resumes_the_cadence_after_the_wait(system: System) -> None:
    configure(system)
    create(system, "t1")
    tick(system, at(0, 60))
    reply(system, "sam-1", 1, "Maybe, I am busy this week")  # the offline policy waits 3 days

    waiting = task(system, "t1")
    assert waiting.status == "waiting" and waiting.next_touch_at == DAY0 + timedelta(days=4)
    tick(system, at(3, 60))
    assert len(emails_to(system.settings.home)) == 1
    tick(system, at(4, 60))
    assert [m["details"]["touch"] for m in emails_to(system.settings.home)] == [1, 2]


def test_a_reply_while_a_limit_holds_the_next_touch_back_is_evaluated_and_stops_it(system: System) -> None:
    # Weekly limit 1: touch 2 of day 3 is drafted and deferred to day 7. Sam answers on day 4, in that gap.
    configure(system, member_weekly_limit=1)
    create(system, "held")
    tick(system, at(0, 60))
    tick(system, at(3, 60))
    held = task(system, "held")
    assert held.deferred is not None and len(emails_to(system.settings.home)) == 1
    reply(system, "r-gap", 4, "Thanks! I'll come in Tuesday for the 6am class.")
    for day in (7, 8, 12):
        tick(system, at(day, 60))

    answered = task(system, "held")
    assert (answered.status, answered.outcome) == ("completed", "verbal_commitment")
    assert [m["details"]["touch"] for m in emails_to(system.settings.home)] == [1]  # the held touch never went out
