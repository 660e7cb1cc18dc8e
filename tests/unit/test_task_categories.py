"""Task categories beyond one task per contact (seed 002 §31.4, §31.6, §31.7) on the in-memory store: a batch makes one
task per contact, each through every limit a task created alone passes; a recurring template makes one task per firing
of its cron, counted, and ends at its max_instances; a research task writes its report into its memory and closes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain import ids
from loopline.domain.cron import InvalidCron, next_firing, parse_cron
from loopline.domain.recurrence import Recurrence
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.ports import Decision, DecisionRequest
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T09:00:00Z")  # a Monday
"""A Monday."""


def at(hours: float) -> str:
    return format_time(T0 + timedelta(hours=hours))


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto",
                            timezone="Europe/Berlin"))
    yield running
    running.close()


def members(n: int) -> list[dict[str, str]]:
    return [{"contact": f"m{i}@example.com", "to_name": f"Member {i}"} for i in range(1, n + 1)]


def batch(loopline: InMemoryLoopline, ref: str, contacts: list[dict[str, str]], hours: float = 0) -> object:
    [outcome] = loopline.publish(command(
        ref, "task.batch", at(hours), GYM, batch_id="spring", task_type="win_back", title="We miss you",
        contacts=contacts, confidence=0.95, context={"campaign": "spring"},
    ))
    return outcome


def test_a_batch_makes_one_task_per_contact_each_with_the_batch_in_its_context(loopline: InMemoryLoopline) -> None:
    outcome = batch(loopline, "b1", members(3))
    assert outcome.accepted and outcome.detail == "batch spring: created 3 tasks of 3"
    for i in (1, 2, 3):
        task = loopline.task(GYM, f"spring/{i}")
        assert (task.contact, task.title, task.task_type) == (f"m{i}@example.com", f"We miss you: Member {i}", "win_back")
        assert task.context == {"campaign": "spring", "batch_id": "spring"}
        assert task.is_acting


def test_a_batch_sent_again_creates_nothing_twice(loopline: InMemoryLoopline) -> None:
    batch(loopline, "b1", members(2))
    again = batch(loopline, "b2", members(2), hours=1)
    assert again.warning is not None and "created 0 tasks of 2" in again.warning
    created = [e for e in loopline.events() if isinstance(e, Task.Created)]
    assert len(created) == 2


def test_every_contact_limit_still_holds_in_a_batch(loopline: InMemoryLoopline) -> None:
    """A suppressed contact gets no task, one with an open task of the type has the batch's context merged into it,
    and the tenant's daily task limit holds the tasks past it: the batch says which and why."""
    loopline.publish(command("cfg2", "tenant.configure", at(0), GYM, daily_task_limit=3))
    loopline.publish(signal("u1", "contact.unsubscribed", at(0), GYM, contact="m1@example.com"))
    loopline.publish(command("c1", "task.create", at(0), GYM, task_id="own", title="Win back 2", task_type="win_back",
                             contact="m2@example.com", confidence=0.95))
    outcome = batch(loopline, "b1", members(5), hours=1)
    assert outcome.accepted and outcome.warning is not None
    assert outcome.warning.startswith("batch spring: created 2 tasks of 5; not created: spring/1: ")
    assert "spring/2: merged into active task own" in outcome.warning
    assert "spring/5: task spring/5 was not created" in outcome.warning and "daily_task_limit" in outcome.warning
    assert [loopline.task(GYM, f"spring/{i}").contact for i in (3, 4)] == ["m3@example.com", "m4@example.com"]
    assert loopline.task(GYM, "own").context["batch_id"] == "spring"


def test_a_batch_of_more_than_50_contacts_is_refused_naming_the_limit() -> None:
    too_many = command("b1", "task.batch", at(0), GYM, batch_id="big", task_type="win_back", title="Hi",
                       contacts=members(51))
    with pytest.raises(InvalidMessage, match="data.contacts: 51 contacts, more than the batch_contacts limit of 50"):
        parse_message(json.dumps(too_many))
    parse_message(json.dumps({**too_many, "data": {**too_many["data"], "contacts": members(50)}}))


def recur(loopline: InMemoryLoopline, ref: str = "r1", **data: object) -> object:
    [outcome] = loopline.publish(command(
        ref, "task.recur", at(0), GYM, template_id="brief", cron="0 8 * * 1",
        template={"title": "Weekly coach briefing", "context": {"scope": "all"}},
        **data,
    ))
    return outcome


def recurrence(loopline: InMemoryLoopline) -> Recurrence:
    found = UnitOfWork(loopline.app).get(ids.recurrence_id(GYM, "brief"), Recurrence)
    assert found is not None
    return found


def test_a_recurring_template_creates_an_instance_at_each_firing_until_its_max_instances(
        loopline: InMemoryLoopline) -> None:
    outcome = recur(loopline, max_instances=2)
    # Mondays at 08:00 in Berlin (UTC+1 in March): the first after Monday 09:00 UTC is a week later, 07:00 UTC.
    first = datetime(2026, 3, 9, 7, 0, tzinfo=timezone.utc)
    assert outcome.accepted and recurrence(loopline).next_at == first
    again = recur(loopline, "r2", max_instances=3)
    assert again.warning is not None and "already exists with cron '0 8 * * 1' and 2 instances" in again.warning
    loopline.tick(first - timedelta(minutes=1))
    assert recurrence(loopline).instances == 0
    loopline.tick(first)
    loopline.tick(first + timedelta(hours=1))  # the same firing swept again makes nothing more
    task = loopline.task(GYM, "brief/1")
    assert (task.title, task.context) == ("Weekly coach briefing #1",
                                          {"scope": "all", "template_id": "brief", "instance": 1})
    assert recurrence(loopline).instances == 1 and recurrence(loopline).next_at == first + timedelta(days=7)
    loopline.tick(first + timedelta(days=7))
    assert loopline.task(GYM, "brief/2").title == "Weekly coach briefing #2"
    assert recurrence(loopline).has_ended
    ended = [e for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == "recurrence_ended"]
    assert len(ended) == 1 and "the last of the 2 instances" in ended[0].message
    loopline.tick(first + timedelta(days=21))
    assert not [e for e in loopline.events() if isinstance(e, Task.Created) and e.ref == "brief/3"]
    audit = [DESCRIPTIONS[type(e)](e)[0] for e in loopline.events() if isinstance(e, Recurrence.Event)]
    assert audit[0].startswith("recurring template brief: one ad_hoc task at each '0 8 * * 1' (Europe/Berlin), at most 2")
    assert audit[1:] == ["instance 1 of template brief", "instance 2 of template brief", "recurring template brief ended"]


def test_a_stopped_template_creates_no_more_instances(loopline: InMemoryLoopline) -> None:
    recur(loopline)
    first = recurrence(loopline).next_at
    assert first is not None
    loopline.tick(first)
    [stopped] = loopline.publish(command("s1", "recurrence.stop", at(24 * 8), GYM, template_id="brief",
                                         reason="the coaches meet on Tuesdays now"))
    assert stopped.detail == "template brief stopped after 1 instance"
    loopline.tick(first + timedelta(days=14))
    assert recurrence(loopline).has_ended and recurrence(loopline).instances == 1
    [unknown] = loopline.publish(command("s2", "recurrence.stop", at(24 * 15), GYM, template_id="nope", reason="x"))
    assert not unknown.accepted and "has no recurring template 'nope'" in str(unknown.detail)


def test_an_instance_for_a_suppressed_contact_is_counted_not_created_and_the_template_goes_on(
        loopline: InMemoryLoopline) -> None:
    loopline.publish(signal("u1", "contact.unsubscribed", at(0), GYM, contact="m1@example.com"))
    loopline.publish(command("r1", "task.recur", at(0), GYM, template_id="nudge", cron="0 9 * * *", template={
        "title": "Daily nudge", "task_type": "churn_risk", "contact": "m1@example.com", "confidence": 0.9}))
    loopline.tick(T0 + timedelta(days=1))
    template = UnitOfWork(loopline.app).get(ids.recurrence_id(GYM, "nudge"), Recurrence)
    assert template is not None and template.instances == 1 and not template.has_ended
    [fired] = [e for e in loopline.events() if isinstance(e, Recurrence.InstanceCreated)]
    assert not fired.created and "suppressed" in fired.result
    assert not [e for e in loopline.events() if isinstance(e, Task.Created)]


def test_a_recurring_template_refuses_more_than_52_instances_naming_the_limit() -> None:
    message = command("r1", "task.recur", at(0), GYM, template_id="t", cron="0 8 * * 1", max_instances=53,
                      template={"title": "Weekly"})
    with pytest.raises(InvalidMessage, match="53 is more than the recurrence_instances limit of 52"):
        parse_message(json.dumps(message))


@pytest.mark.parametrize(("expression", "after", "expected"), [
    ("0 8 * * 1", "2026-03-02T09:00:00+00:00", "2026-03-09T08:00:00+00:00"),
    ("*/15 * * * *", "2026-03-02T09:07:00+00:00", "2026-03-02T09:15:00+00:00"),
    ("30 6 1 * *", "2026-03-02T09:00:00+00:00", "2026-04-01T06:30:00+00:00"),
    ("0 9 1 * 5", "2026-03-02T09:00:00+00:00", "2026-03-06T09:00:00+00:00"),  # either day field, as cron reads them
    ("0 0 29 2 *", "2026-03-02T09:00:00+00:00", "2028-02-29T00:00:00+00:00"),
    ("0 12 * * 0", "2026-03-02T09:00:00+00:00", "2026-03-08T12:00:00+00:00"),
])
def test_the_next_firing_of_a_cron_expression(expression: str, after: str, expected: str) -> None:
    assert next_firing(parse_cron(expression), datetime.fromisoformat(after), "UTC") == datetime.fromisoformat(expected)


@pytest.mark.parametrize("expression", ["0 8 * *", "60 8 * * 1", "0 8 * * mon", "0 8-6 * * *", "*/0 * * * *"])
def test_a_cron_expression_out_of_its_bounds_is_refused(expression: str) -> None:
    with pytest.raises(InvalidCron):
        parse_cron(expression)


class RecordingPolicy(OfflinePolicy):
    """The offline policy, remembering what it was asked."""

    def __init__(self) -> None:
        self.requests: list[DecisionRequest] = []

    def decide(self, request: DecisionRequest) -> Decision:
        self.requests.append(request)
        return super().decide(request)


@pytest.fixture
def offline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline(model=RecordingPolicy())
    yield running
    running.close()


@pytest.mark.parametrize(("context", "outcome"), [
    ({"members": 120, "at_risk": 14}, "report_produced"), (None, "insufficient_data"),
])
def test_a_research_task_writes_its_report_into_task_memory_and_closes_with_its_outcome(
        offline: InMemoryLoopline, context: dict[str, int] | None, outcome: str) -> None:
    offline.publish(command("c1", "task.create", at(0), GYM, task_id="march", title="March churn",
                            task_type="monthly_churn_analysis", confidence=0.96, context=context))
    task = offline.task(GYM, "march")
    assert (task.status, task.outcome) == ("completed", outcome)
    [report] = [e for e in offline.events() if isinstance(e, Task.WorkflowOutputRecorded)]
    assert report.workflow == "deliverable" and report.output.startswith("# Monthly Churn Analysis\n\n")
    assert ("| at_risk | 14 |" in report.output) == (context is not None)
    assert not offline.emails()
    [asked] = offline.model.requests
    assert asked.point == "write_report" and "Produce the deliverable: A report containing: total members" in (
        asked.prompt.messages[0]["content"])


def test_a_staff_todo_task_assigns_its_to_do_and_closes_when_it_is_marked_done(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("c1", "task.create", at(0), GYM, task_id="call-ann", title="Call Ann about her knee",
                             task_type="staff_call_member", contact="ann@example.com", confidence=0.9))
    loopline.publish(command("a1", "task.approve", at(1), GYM, task_id="call-ann"))
    todo = [e for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == "staff_todo"]
    assert len(todo) == 1 and "to-do for owner: Call Ann about her knee" in todo[0].message
    loopline.tick(T0 + timedelta(days=1, hours=2))
    assert [e for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == "todo_reminder"]
    [done] = loopline.publish(command("d1", "action.done", at(30), GYM, task_id="call-ann", note="back Monday"))
    assert done.accepted and "closed as completed" in str(done.detail)
    task = loopline.task(GYM, "call-ann")
    assert (task.status, task.outcome) == ("completed", "completed")
    assert not loopline.emails()


def automation(loopline: InMemoryLoopline, ref: str, **context: object) -> Task:
    loopline.publish(command(f"c-{ref}", "task.create", at(0), GYM, task_id=ref, title="Tag the at-risk members",
                             task_type="system_automation", confidence=0.96, context=context))
    return loopline.task(GYM, ref)


def test_an_automation_task_carries_out_its_action_and_closes_executed(loopline: InMemoryLoopline) -> None:
    task = automation(loopline, "tag", action="call_webhook", params={"event": "tag_at_risk", "payload": {"n": 14}})
    assert (task.status, task.outcome) == ("completed", "executed")
    [taken] = [e for e in loopline.events() if isinstance(e, Task.ActionRecorded)]
    assert (taken.action, taken.performed_by) == ("call_webhook", "loopline")
    assert not loopline.emails()


def test_an_automation_without_an_action_it_can_run_goes_to_the_owner(loopline: InMemoryLoopline) -> None:
    task = automation(loopline, "tag", action="tag_members")
    assert (task.status, task.escalation_cause) == ("escalated", "no_automation")
    assert "action 'tag_members' is not one of" in str(task.escalation_reason)


def test_an_automation_the_owner_must_approve_runs_on_approval(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("cfg-manual", "tenant.configure", at(0), GYM, execution_mode="manual"))
    task = automation(loopline, "tag", action="call_webhook", params={"event": "tag_at_risk"})
    assert task.outcome is None and not task.is_closed
    [approved] = loopline.publish(command("ok", "action.approve", at(1), GYM, task_id="tag"))
    assert approved.accepted, approved.detail
    assert (loopline.task(GYM, "tag").status, loopline.task(GYM, "tag").outcome) == ("completed", "executed")
