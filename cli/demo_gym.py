"""The demo's second part: a gym's month worked by the agent with simulated time (seed 002), then its scorecard."""

from __future__ import annotations

from typing import Any

GYM = "iron_temple"
MONTH = "2026-04"

Steps = list[tuple[str, list[dict[str, Any]] | str]]
"""Each step is a narration and either messages to publish or a time to tick to."""


def _command(ref: str, type_: str, at: str, **data: Any) -> dict[str, Any]:
    return {"kind": "command", "id": ref, "type": type_, "tenant": GYM, "at": at, "data": data}


def _signal(ref: str, type_: str, at: str, **data: Any) -> dict[str, Any]:
    return {"kind": "signal", "id": ref, "type": type_, "tenant": GYM, "at": at, "data": data}


def _task(ref: str, task_type: str, name: str, confidence: float, title: str) -> dict[str, Any]:
    contact = f"{name.lower()}@example.com"
    return _command(f"gym-{ref}", "task.create", "2026-04-06T08:30:00Z", task_id=ref, title=title, task_type=task_type,
                    contact=contact, to_name=name, confidence=confidence)


def _observed(ref: str, at: str, name: str, outcome: str, **value: float) -> dict[str, Any]:
    return _signal(ref, "outcome.observed", at, contact=f"{name.lower()}@example.com", outcome=outcome, **value)


def _reply(ref: str, at: str, name: str, body: str) -> dict[str, Any]:
    return _signal(ref, "email.received", at, sender=f"{name.lower()}@example.com", body=body)


GYM_MONTH: Steps = [
    ("A gym: Sam, the owner, hands the agent six members to work on", [
        _command("gym-cfg", "tenant.configure", "2026-04-06T08:00:00Z", name="Iron Temple", timezone="Europe/London",
                 owner_email="sam@irontemple.example", execution_mode="limited_auto",
                 profile={"display_name": "Iron Temple", "owner_first_name": "Sam", "sign_off": "Sam"}),
        _task("churn-maya", "churn_risk", "Maya", 0.9, "Bring Maya back"),
        _task("churn-leo", "churn_risk", "Leo", 0.6, "Check in on Leo"),
        _task("churn-ben", "churn_risk", "Ben", 0.9, "Bring Ben back"),
        _task("winback-cat", "win_back", "Cat", 0.9, "Win Cat back"),
        _task("pay-dan", "payment_recovery", "Dan", 0.95, "Dan's card was declined"),
        _task("lead-eve", "lead_followup", "Eve", 0.9, "Follow up Eve's enquiry"),
    ]),
    ("Sam approves the two tasks waiting for his review: Leo's (below the threshold) and Dan's payment", [
        _command("gym-ok-leo", "task.approve", "2026-04-06T08:45:00Z", task_id="churn-leo"),
        _command("gym-ok-dan", "task.approve", "2026-04-06T08:45:00Z", task_id="pay-dan"),
    ]),
    ("Monday: the agent's first touches go out, one per member", "2026-04-06T09:05:00Z"),
    ("Replies: Eve thanks Sam and is answered, Maya will come on Thursday (a verbal commitment), Ben says STOP", [
        _reply("mail-eve", "2026-04-06T17:00:00Z", "Eve", "Thanks, sounds good!"),
        _reply("mail-maya", "2026-04-06T18:30:00Z", "Maya", "Thanks Sam! I'll come to the Thursday evening class, see you then."),
        _reply("mail-ben", "2026-04-06T19:30:00Z", "Ben", "STOP"),
    ]),
    ("The gym's systems report outcomes: Dan's card went through ($89), Maya checked in on Thursday", [
        _observed("obs-dan", "2026-04-07T07:00:00Z", "Dan", "payment_succeeded", value=89),
        _observed("obs-maya", "2026-04-09T18:05:00Z", "Maya", "checkin"),
    ]),
    ("Day 3: the cadences' second touches", "2026-04-09T09:10:00Z"),
    ("Day 8: the third", "2026-04-14T09:15:00Z"),
    ("Eve books a trial class", [_observed("obs-eve", "2026-04-16T12:00:00Z", "Eve", "trial_booked")]),
    ("Day 15: Leo never answered, his task ends", "2026-04-21T09:00:00Z"),
    ("The month's last day", "2026-04-30T09:00:00Z"),
]
