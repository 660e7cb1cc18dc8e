"""Actions beyond email (issue 20 item 7, seed 002 §15, §31.3, §32) on the in-memory store: the safety profile holds
what needs the owner, one executor takes every action once per key under the send checks, and a staff to-do is
reminded until it is done."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from loopline.adapters.sms import SmsChannel
from loopline.adapters.webhook import WebhookChannel
from loopline.domain.conversation import conversation_of
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import ANY_HOUR, command, signal
from tests.unit.fakes import FakeChannel, FakeSms
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")
GATEWAY = "http://127.0.0.1:9/sms"


class Gym:
    def __init__(self, mode: str, **settings: Any) -> None:
        self.loopline = InMemoryLoopline()
        self.sms = FakeSms()
        self.loopline.delivery.add_channel(SmsChannel(self.sms))
        self.webhook = FakeChannel("webhook", accepts=WebhookChannel("http://127.0.0.1:9", "s").accepts)
        self.loopline.delivery.add_channel(self.webhook)
        self.count = 0
        self.send("tenant.configure", 0, execution_mode=mode, **{"sms_url": GATEWAY, **settings}, **ANY_HOUR)
        self.send("task.create", 0, task_id="ann", title="Bring Ann back", contact=ANN)

    def send(self, type_: str, hours: float, **data: Any) -> Any:
        self.count += 1
        [outcome] = self.loopline.publish(command(f"m{self.count}", type_, format_time(T0 + timedelta(hours=hours)),
                                                  GYM, **data))
        return outcome

    def act(self, hours: float, action: str, **params: Any) -> Any:
        return self.send("action.request", hours, task_id="ann", action=action, params=params)

    def webhook_calls(self) -> list[dict[str, Any]]:
        return [message for _, message in self.webhook.sent if message["kind"] == "call_webhook"]

    def task(self) -> Task:
        return self.loopline.task(GYM, "ann")

    def notices(self, kind: str) -> list[Task.UserNotified]:
        return [e for e in self.loopline.events() if isinstance(e, Task.UserNotified) and e.kind == kind]


@pytest.fixture
def limited() -> Iterator[Gym]:
    gym = Gym("limited_auto")
    yield gym
    gym.loopline.close()


def test_a_text_message_waits_in_review_until_the_owner_approves_it_then_goes_once(limited: Gym) -> None:
    held = limited.act(1, "send_sms", to="+1 415 555 0123", body="Your spot at 6pm is saved!")
    assert held.accepted and "held send_sms" in held.detail
    assert limited.task().status is TaskStatus.ESCALATED and not limited.sms.sent
    [review] = limited.notices("action_review")
    assert [a["command"] for a in review.actions] == ["action.approve", "action.reject", "task.cancel"]

    assert limited.send("action.approve", 2, task_id="ann").accepted
    assert limited.task().status is TaskStatus.EXECUTING
    [sms] = limited.sms.sent
    assert sms["to"] == "+14155550123" and sms["endpoint"] == GATEWAY and sms["body"] == "Your spot at 6pm is saved!"
    assert limited.send("action.approve", 3, task_id="ann").accepted is False  # nothing is held any more
    said = [turn.text for turn in conversation_of(limited.loopline.app.events.get(limited.task().id))
            if turn.author == "agent"]
    assert said == ["(by text message) Your spot at 6pm is saved!"]  # the model reads what the contact was sent


def test_the_same_key_takes_its_action_once(limited: Gym) -> None:
    hook = {"task_id": "ann", "action": "call_webhook", "params": {"event": "tag_member", "payload": {"tag": "vip"}},
            "key": "tag-ann"}
    assert limited.send("action.request", 1, **hook).detail.startswith("took call_webhook")
    again = limited.send("action.request", 2, **hook)
    assert again.accepted and "changed nothing" in again.warning
    [posted] = limited.webhook_calls()
    assert posted["to"] == "webhook" and posted["details"]["payload"] == {"tag": "vip"}


def test_a_text_message_counts_against_the_contacts_daily_limit_and_a_deferred_action_goes_when_it_frees_up(
        limited: Gym) -> None:
    limited.act(1, "send_sms", to="+14155550123", body="See you tonight")
    limited.send("action.approve", 1, task_id="ann")
    limited.act(2, "send_email", subject="Your plan", body="Here it is.")
    waits = limited.send("action.approve", 2, task_id="ann")
    assert "waits until" in waits.detail and not limited.loopline.emails()
    limited.loopline.tick(T0 + timedelta(days=1, hours=12))
    [(_, email)] = limited.loopline.emails()
    assert email["kind"] == "send_email" and email["details"]["subject"] == "Your plan"


def test_a_rejected_action_is_dropped_and_the_task_goes_on(limited: Gym) -> None:
    limited.act(1, "calendar_invite", title="Intro class", starts_at="2026-03-05T18:00:00Z")
    assert limited.send("action.reject", 2, task_id="ann", reason="she booked by phone").accepted
    assert limited.task().status is TaskStatus.EXECUTING
    limited.loopline.tick(T0 + timedelta(days=5))
    assert not limited.loopline.emails()


def test_manual_mode_holds_even_a_webhook_call_for_the_owner() -> None:
    manual = Gym("manual")
    try:
        assert "held call_webhook" in manual.act(1, "call_webhook", event="tag_member").detail
        assert not manual.webhook_calls()
        manual.send("action.approve", 2, task_id="ann")
        assert [call["details"]["event"] for call in manual.webhook_calls()] == ["tag_member"]
        manual.send("action.request", 3, task_id="ann", action="call_webhook", params={"event": "tag_vip"},
                    requested_by="owner")  # the owner's own request is their approval
        assert [call["details"]["event"] for call in manual.webhook_calls()] == ["tag_member", "tag_vip"]
    finally:
        manual.loopline.close()


def test_a_staff_todo_is_reminded_daily_from_its_due_time_until_it_is_done(limited: Gym) -> None:
    took = limited.act(1, "staff_todo", title="call Ann about her knee", assigned_to="Coach Mike",
                       due_at="2026-03-03T09:00:00Z")
    assert took.detail.startswith("took staff_todo")  # a to-do reaches the business's people: never held
    [todo] = limited.notices("staff_todo")
    assert "Coach Mike" in todo.message
    limited.loopline.tick(T0 + timedelta(days=1, minutes=30))
    limited.loopline.tick(T0 + timedelta(days=2, minutes=30))
    assert len(limited.notices("todo_reminder")) == 2
    assert limited.send("action.done", 50, task_id="ann", note="called her").accepted
    limited.loopline.tick(T0 + timedelta(days=5))
    reminders = limited.notices("todo_reminder")
    assert len(reminders) == 2 and "action.done" in reminders[0].message


@pytest.mark.parametrize(("action", "params", "names"), [
    ("send_sms", {"body": "hi"}, "params.to"),
    ("staff_todo", {"title": "x", "assigned_to": "y", "due_at": "soon"}, "params.due_at"),
])
def test_a_bad_request_is_refused_at_the_edge_naming_the_field(limited: Gym, action: str, params: dict,
                                                               names: str) -> None:
    with pytest.raises(Exception, match=names.replace(".", r"\.")):
        limited.act(1, action, **params)


def test_an_action_for_a_contact_is_refused_on_a_task_without_one(limited: Gym) -> None:
    limited.send("task.create", 1, task_id="order", title="Order new bands")
    refused = limited.send("action.request", 1, task_id="order", action="send_email",
                           params={"subject": "x", "body": "y"})
    assert not refused.accepted and "has no contact" in refused.detail


def test_a_text_message_is_refused_for_a_tenant_without_an_sms_gateway() -> None:
    gym = Gym("limited_auto", sms_url=None)
    try:
        refused = gym.act(1, "send_sms", to="+14155550123", body="hi")
        assert not refused.accepted and "no sms_url" in refused.detail
    finally:
        gym.loopline.close()


def test_a_text_message_on_a_task_loopline_works_counts_against_its_message_budget(limited: Gym) -> None:
    limited.send("task.create", 1, task_id="win", title="Win Ann back", task_type="win_back", contact=ANN,
                 confidence=0.95, draft={"subject": "We miss you", "body": "Come back?"})
    before = limited.loopline.task(GYM, "win").messages_used
    limited.send("action.request", 2, task_id="win", action="send_sms", params={"to": "+14155550123", "body": "Hi"})
    limited.send("action.approve", 2, task_id="win")
    assert limited.loopline.task(GYM, "win").messages_used == before + 1
    assert [sms["body"] for sms in limited.sms.sent] == ["Hi"]


def test_an_action_a_pause_holds_goes_at_the_first_tick_after_the_resume(limited: Gym) -> None:
    limited.send("tenant.pause", 1, reason="owner on holiday", by="Mike")
    limited.act(1, "send_sms", to="+14155550123", body="Welcome back")
    assert "waits for the pause to end" in limited.send("action.approve", 2, task_id="ann").detail
    limited.loopline.tick(T0 + timedelta(hours=3))
    assert not limited.sms.sent
    limited.send("tenant.resume", 4, reason="back")
    limited.loopline.tick(T0 + timedelta(hours=4, minutes=5))
    assert [sms["body"] for sms in limited.sms.sent] == ["Welcome back"]


def test_an_email_action_on_a_subtask_the_agent_works_counts_in_its_parents_family_budget(limited: Gym) -> None:
    limited.send("task.create", 1, task_id="win", title="Win Ann back", task_type="win_back", contact=ANN,
                 confidence=0.95, draft={"subject": "We miss you", "body": "Come back?"})
    limited.send("task.add_subtask", 1, parent_id="win", task_id="bob", title="ask Bob", contact="bob@example.com",
                 by="owner")
    limited.send("action.request", 2, task_id="bob", action="send_email", requested_by="owner",
                 params={"subject": "Coming?", "body": "Join Ann's class?"})
    assert limited.loopline.task(GYM, "bob").messages_used == 1
    assert limited.loopline.task(GYM, "win").subtasks["bob"]["messages"] == 1


def test_a_dry_run_tenants_webhook_call_is_recorded_and_never_reaches_the_receiver() -> None:
    dry = Gym("limited_auto", dry_run=True)
    try:
        assert dry.act(1, "call_webhook", event="tag_member").detail.startswith("took call_webhook")
        assert not dry.webhook_calls()
        [recorded] = [e for e in dry.loopline.events() if isinstance(e, Task.ActionRecorded)
                      and e.action == "call_webhook"]
        assert recorded.details["dry_run"] is True and recorded.summary.startswith("[dry run")
    finally:
        dry.loopline.close()


def test_a_reply_written_while_an_action_waited_for_approval_is_answered_and_still_told_to_the_owner(
        limited: Gym) -> None:
    limited.send("task.create", 0, task_id="win", title="Win Ann back", task_type="win_back", contact=ANN,
                 confidence=0.95, draft={"subject": "We miss you", "body": "Come back?"})
    limited.loopline.tick(T0 + timedelta(minutes=30))
    limited.send("action.request", 1, task_id="win", action="calendar_invite",
                 params={"title": "Intro class", "starts_at": "2026-03-05T18:00:00Z"})
    assert limited.loopline.task(GYM, "win").status is TaskStatus.ESCALATED
    at = format_time(T0 + timedelta(hours=2))
    limited.loopline.publish(signal("r1", "email.received", at, GYM, sender=ANN, subject="Re: We miss you",
                                    body="I am moving away, please cancel my membership"),
                             command("ok", "action.approve", at, GYM, task_id="win"))

    told = [message["kind"] for _, message in limited.loopline.owner.sent if message.get("to") == "user"]
    assert "escalation_reply" in told
    evaluated = [e for e in limited.loopline.events() if isinstance(e, Task.DecisionRequested)
                 and e.point == "evaluate_reply"]
    assert [e.request_ref for e in evaluated] == ["r1"]


def test_a_deferred_action_waits_while_its_task_is_with_the_owner_and_goes_after_the_guidance(limited: Gym) -> None:
    limited.send("action.request", 1, task_id="ann", action="send_sms", requested_by="owner",
                 params={"to": "+14155550123", "body": "See you tonight"})
    limited.send("action.request", 2, task_id="ann", action="send_email", requested_by="owner",
                 params={"subject": "Your plan", "body": "Here it is."})
    assert limited.send("task.update", 3, task_id="ann", status="escalated", notes="is she still a member?").accepted

    limited.loopline.tick(T0 + timedelta(days=1, hours=12))
    assert not limited.loopline.emails()
    limited.send("task.guidance", 37, task_id="ann", text="she is, go on")
    limited.loopline.tick(T0 + timedelta(days=1, hours=13, minutes=5))
    [(_, email)] = limited.loopline.emails()
    assert email["details"]["subject"] == "Your plan"


def test_a_subtasks_action_waits_while_its_parent_is_with_the_owner(limited: Gym) -> None:
    limited.send("task.create", 0, task_id="win", title="Win Ann back", task_type="win_back", contact=ANN,
                 confidence=0.95, draft={"subject": "We miss you", "body": "Come back?"})
    limited.send("task.add_subtask", 0, parent_id="win", task_id="bob", title="ask Bob", contact="bob@example.com",
                 by="owner")
    limited.send("task.update", 1, task_id="win", status="escalated", notes="is the class still on?")
    waits = limited.send("action.request", 2, task_id="bob", action="call_webhook", params={"event": "tag_member"})
    assert "waits" in waits.detail and not limited.webhook_calls()

    limited.send("task.guidance", 3, task_id="win", text="it is")
    limited.loopline.tick(T0 + timedelta(hours=3, minutes=5))
    assert [call["details"]["event"] for call in limited.webhook_calls()] == ["tag_member"]


def test_deciding_one_held_action_leaves_the_review_notice_of_another_still_delivered(limited: Gym) -> None:
    def request(ref: str, key: str, body: str) -> dict[str, Any]:
        return command(ref, "action.request", format_time(T0 + timedelta(hours=1)), GYM, task_id="ann",
                       action="send_sms", key=key, params={"to": "+14155550123", "body": body})

    limited.loopline.publish(request("r1", "sms-1", "See you at 6"), request("r2", "sms-2", "Bring a towel"),
                             command("d1", "action.approve", format_time(T0 + timedelta(hours=2)), GYM,
                                     task_id="ann", key="sms-1"))

    delivered = [message for _, message in limited.loopline.owner.sent if message["kind"] == "action_review"]
    assert ["sms-2" in message["text"] for message in delivered] == [True]
    assert delivered[0]["actions"][0]["data"] == {"task_id": "ann", "key": "sms-2"}


def test_a_staff_todo_ignored_past_its_last_reminder_escalates_its_task_to_the_owner_once(limited: Gym) -> None:
    limited.send("action.request", 1, task_id="ann", action="staff_todo", key="knee", params={
        "title": "call Ann about her knee", "assigned_to": "Coach Mike", "due_at": "2026-03-03T09:00:00Z"})
    for days in (1, 2, 3):  # reminded at its due time and a day apart: the last one on day 3
        limited.loopline.tick(T0 + timedelta(days=days, minutes=30))
    assert limited.task().status is TaskStatus.EXECUTING

    limited.loopline.tick(T0 + timedelta(days=4, minutes=30))  # three days ignored since it was due
    limited.loopline.tick(T0 + timedelta(days=4, minutes=40))  # the timer firing again escalates nothing more

    task = limited.task()
    assert task.status is TaskStatus.ESCALATED and task.escalation_reason is not None
    assert "'call Ann about her knee' for Coach Mike (key knee) is still not done" in task.escalation_reason
    [escalation] = limited.notices("escalation")
    assert "Left alone, you are reminded 8 Mar 2026" in escalation.message  # the handoff, with its timeouts


def test_a_staff_todo_done_after_its_last_reminder_does_not_escalate(limited: Gym) -> None:
    limited.act(1, "staff_todo", title="call Ann about her knee", assigned_to="Coach Mike",
                due_at="2026-03-03T09:00:00Z")
    for days in (1, 2, 3):
        limited.loopline.tick(T0 + timedelta(days=days, minutes=30))
    assert limited.send("action.done", 24 * 3 + 12, task_id="ann", note="called her").accepted
    limited.loopline.tick(T0 + timedelta(days=6))

    assert limited.task().status is TaskStatus.EXECUTING and not limited.notices("escalation")
