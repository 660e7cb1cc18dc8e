"""What each agent action implies should happen next (seed 000, "Automatic open loop detection")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

DEADLINE_ACTIONS = ("draft_followup_email", "send_reminder", "notify_user", "cancel_task", "escalate_to_loop")
WAKE_TASK = "wake_task"
"""The deadline action of a wake-up's condition loop ("in 3 days unless they reply first"): only
`task.wake` registers it, so it is not one of the actions a loop may name."""


@dataclass(frozen=True)
class Expectation:
    action: str
    expects: str
    channel: str
    default_deadline: timedelta
    if_unresolved: str


# The six rows of the seed's table; the channel is where the expected signal arrives.
EXPECTATIONS: dict[str, Expectation] = {
    row.action: row
    for row in (
        Expectation("send_email", "Reply from recipient", "email", timedelta(days=3), "draft_followup_email"),
        Expectation("create_calendar_invite", "Acceptance from invitees", "calendar", timedelta(hours=24), "notify_user"),
        Expectation("send_contract", "Signed return or acknowledgment", "webhook", timedelta(days=7), "send_reminder"),
        Expectation("open_pull_request", "Review from team", "github", timedelta(days=2), "send_reminder"),
        Expectation("send_slack_dm", "Response from recipient", "slack", timedelta(hours=4), "notify_user"),
        Expectation("create_todo", "Completion or acknowledgment", "webhook", timedelta(days=2), "send_reminder"),
    )
}


def expected_watch(action: str, details: Mapping[str, Any]) -> dict[str, Any]:
    """The watch an action implies, from the channel fields recorded with it."""
    if action == "send_email":
        watch = {"sender": details.get("to")}
        if details.get("thread_id"):
            watch["thread_id"] = details["thread_id"]
        return watch
    if action == "create_calendar_invite":
        return {"event_type": "invite_accepted", "event_id": details.get("event_id")}
    if action == "open_pull_request":
        return {"event_type": "pull_request_review", "repo": details.get("repo"), "resource_id": details.get("resource_id")}
    if action == "send_slack_dm":
        return {"slack_user_id": details.get("slack_user_id"), "channel_id": details.get("channel_id"), "after_ts": details.get("ts")}
    trigger = "document_signed" if action == "send_contract" else "todo_completed"
    return {
        "source": details.get("source", "loopline"),
        "trigger_name": details.get("trigger_name", trigger),
        "match_fields": {"resource_id": details.get("resource_id")} if details.get("resource_id") else {},
    }
