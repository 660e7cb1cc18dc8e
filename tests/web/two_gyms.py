"""Two gyms' worth of dashboard data on an embedded home, played through the same messages an owner's systems would
publish: A has a task waiting for review, a task escalated with a question, a task whose whole timeline is written
(touch, reply, close), a payment recovered with revenue and an email whose reply is awaited (an open loop); B has a
task of its own waiting for review and one escalated."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.runtime.system import System
from tests.conftest import ANY_HOUR, command, publish, signal

A, B = "gym_a", "gym_b"
REVIEW, ESCALATED, TIMELINE, PAYMENT, LOOP = "review-nina", "churn-leo", "churn-maya", "pay-omar", "meet-rahul"
B_REVIEW, B_ESCALATED = "review-bea", "churn-bo"
B_IDS = (B_REVIEW, B_ESCALATED)
A_IDS = (REVIEW, ESCALATED, TIMELINE, PAYMENT, LOOP)
A_TITLES = ("Check in on Nina", "Check in on Leo", "Bring Maya back", "Omar's card was declined",
            "Schedule meeting with Rahul")
A_CONTACTS = ("nina@example.com", "leo@example.com", "maya@example.com", "omar@example.com", "rahul@company.com")


def _profile(name: str) -> dict[str, Any]:
    return {"name": name, "timezone": "UTC", "owner_email": f"owner@{name.lower().replace(' ', '')}.example",
            "execution_mode": "limited_auto", **ANY_HOUR,
            "profile": {"display_name": name, "owner_first_name": "Sam", "typical_greeting": "Hey",
                        "sign_off": "See you on the floor, Sam"}}


def seed(system: System, now: datetime) -> None:
    """Plays the two tenants' morning, ending an hour before `now` (the scorecard's current period, whatever its
    length, then holds the outcomes unless the run starts in a period's first hour: the previous period's bars show
    them then)."""
    at = [(now - timedelta(hours=5) + timedelta(minutes=step)).astimezone(timezone.utc).isoformat()
          .replace("+00:00", "Z") for step in range(0, 300, 10)]
    publish(system,
            command("a-1", "tenant.configure", at[0], A, **_profile("Gym A")),
            command("b-1", "tenant.configure", at[0], B, **_profile("Gym B")),
            command("a-2", "task.create", at[1], A, task_id=TIMELINE, title=A_TITLES[2], task_type="churn_risk",
                    contact="maya@example.com", to_name="Maya", confidence=0.9),
            command("a-3", "task.create", at[1], A, task_id=ESCALATED, title=A_TITLES[1], task_type="churn_risk",
                    contact="leo@example.com", to_name="Leo", confidence=0.9),
            command("a-4", "task.create", at[1], A, task_id=REVIEW, title=A_TITLES[0], task_type="churn_risk",
                    contact="nina@example.com", to_name="Nina", confidence=0.6),
            command("a-5", "task.create", at[1], A, task_id=PAYMENT, title=A_TITLES[3],
                    task_type="payment_recovery", contact="omar@example.com", to_name="Omar", confidence=0.95),
            command("a-6", "task.approve", at[2], A, task_id=PAYMENT),
            command("a-7", "task.create", at[1], A, task_id=LOOP, title=A_TITLES[4]),
            command("a-8", "action.record", at[2], A, task_id=LOOP, action="send_email", to=A_CONTACTS[4],
                    thread_id="thread-rahul", subject="Meeting next week?"),
            command("b-2", "task.create", at[1], B, task_id=B_REVIEW, title="Check in on Bea", task_type="churn_risk",
                    contact="bea@example.com", to_name="Bea", confidence=0.6),
            command("b-3", "task.create", at[1], B, task_id=B_ESCALATED, title="Check in on Bo", task_type="churn_risk",
                    contact="bo@example.com", to_name="Bo", confidence=0.9))
    system.tick(datetime.fromisoformat(at[3]))
    publish(system,
            signal("a-mail-1", "email.received", at[6], A, sender="maya@example.com",
                   body="Thanks Sam! I'll come to the Thursday evening class, see you then."),
            signal("a-mail-2", "email.received", at[6], A, sender="leo@example.com",
                   body="Sounds good, but can I bring a friend?"),
            signal("b-mail-1", "email.received", at[6], B, sender="bo@example.com", body="Is the pool open on Sunday?"),
            signal("a-out-1", "outcome.observed", at[8], A, contact="maya@example.com", outcome="checkin"),
            signal("a-out-2", "outcome.observed", at[8], A, contact="omar@example.com",
                   outcome="payment_succeeded", value=89))
