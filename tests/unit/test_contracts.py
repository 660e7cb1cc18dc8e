"""Actions and commands as contracts: one table per registry, validated at the edge, typed after it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from loopline.adapters.messages import ACTION_SCHEMAS, SCHEMAS, InvalidMessage, parse_message
from loopline.domain import ids
from loopline.domain.expectations import EXPECTATIONS, LOOPLINE_ONLY_ACTIONS, ConflictingFields, DeadlineAction
from loopline.domain.status import TaskStatus
from loopline.domain.timers import TimerBucket, TimerKind
from loopline.domain.wording import NEXT_STEP
from loopline.processors.handlers import commands_types as typed
from loopline.processors.handlers.command_routes import COMMANDS, command_from_data
from loopline.processors.handlers.deadline_actions import ACTIONS
from loopline.processors.handlers.timer_firings import TIMERS
from tests.conftest import command, signal

AT = "2026-03-13T10:00:00Z"

# One valid message per command type; `test_every_command_type_has_an_example` keeps it complete.
EXAMPLES: dict[str, dict[str, Any]] = {
    "task.create": {"task_id": "t1", "title": "Call Rahul", "expires_in_days": 3, "confidence": 0.4,
                    "context": {"conversation_id": "c1"}, "draft": {"subject": "Meeting?", "body": "Does Friday work?"},
                    "to_name": "Rahul"},
    "action.record": {"task_id": "t1", "action": "send_email", "to": "rahul@company.com", "thread_id": "th1",
                      "subject": "Meeting?", "message_id": "<m1@mail>", "deadline": "2026-03-15T10:00:00Z",
                      "if_unresolved": "notify_user"},
    "loop.register": {"loop_id": "l1", "task_id": "t1", "channel": "email", "watch": {"sender": "a@b.c"},
                      "deadline": "2026-03-20T10:00:00Z", "if_unresolved": "send_reminder"},
    "loop.resolve": {"loop_id": "l1", "reason": "answered by phone"},
    "task.update": {"task_id": "t1", "status": "waiting", "notes": "asked Rahul"},
    "task.complete": {"task_id": "t1", "summary": "booked"},
    "task.cancel": {"task_id": "t1", "reason": "not needed"},
    "task.approve": {"task_id": "t1", "draft": {"subject": "Back on Saturday?", "body": "Hi Ann, the 9am is yours."}},
    "task.reject": {"task_id": "t1", "reason": "no", "rejection_type": "tone"},
    "task.guidance": {"task_id": "t1", "text": "try Friday"},
    "task.reply": {"task_id": "t1", "body": "Yes, the discount is still on. See you Saturday!"},
    "task.takeover": {"task_id": "t1", "reason": "called her and booked her in"},
    "task.override_outcome": {"task_id": "t1", "outcome": "retained", "reason": "she checked in", "by": "Mike"},
    "task.reopen": {"task_id": "t1", "reason": "she has not come in yet"},
    "task.rate": {"task_id": "t1", "rating": "down", "why": "wrong_member", "note": "her sister checked in"},
    "task.add_subtask": {"parent_id": "t1", "task_id": "t1-tag", "title": "Tag Rahul", "requirement": "optional",
                         "depends_on": ["t1-call"], "starts_at": "2026-03-20T09:00:00Z",
                         "budget": {"messages": 0, "days": 2}, "by": "owner"},
    "run.schedule": {"at": "2026-03-14T08:00:00Z", "reason": "morning brief"},
    "tenant.goal": {"key": "retention", "goal": "Keep churn under 3% a month", "active": True},
    "tenant.memory": {"key": "busy-days", "note": "Saturdays are the busiest; no outreach then"},
    "task.wake": {"task_id": "t1", "when": {"channel": "email", "watch": {"sender": "a@b.c"},
                                            "deadline": "2026-03-16T10:00:00Z", "if_unresolved": "cancel_task"}},
    "workflow.output": {"task_id": "t1", "workflow": "triage", "output": {"triaged": 4}},
    "question.ask": {"question_id": "q1", "task_id": "t1", "asker": "Build agent", "stuck_on": "Which OAuth provider",
                     "question": "Auth0, Firebase or our own?", "options": ["Auth0", "Firebase", "Custom"],
                     "blocked_tasks": ["t2"]},
    "question.answer": {"question_id": "q1", "answer": "B, lock-in is fine for now"},
    "tenant.configure": {"timezone": "Europe/Berlin", "execution_mode": "limited_auto", "member_weekly_limit": 2,
                         "profile": {"sign_off": "Coach Mike", "class_types": ["WOD"], "contact_info": {"phone": "555"}}},
    "contact.resubscribe": {"contact": "Ann <Ann@Example.com>", "reason": "she wrote asking to hear from us again"},
    "tenant.pause": {"reason": "owner on holiday", "by": "Mike"},
    "tenant.resume": {"reason": "back from holiday"},
    "system.pause": {"reason": "a template went out wrong", "by": "on-call"},
    "system.resume": {"reason": "template fixed"},
    "task.batch": {"batch_id": "b1", "task_type": "win_back", "title": "Come back",
                   "contacts": [{"contact": "Ann <Ann@Example.com>", "to_name": "Ann"}, {"contact": "bo@example.com"}]},
    "task.recur": {"template_id": "weekly-brief", "cron": "0 8 * * 1", "max_instances": 12,
                   "template": {"title": "Weekly churn brief", "task_type": "monthly_churn_analysis"}},
    "recurrence.stop": {"template_id": "weekly-brief", "reason": "the coaches meet on Tuesdays now"},
    "action.request": {"task_id": "t1", "action": "send_sms", "params": {"to": "+14155550123", "body": "See you at 6!"},
                       "key": "t1-sms-1"},
    "action.approve": {"task_id": "t1", "key": "t1-sms-1"},
    "action.reject": {"task_id": "t1", "reason": "she prefers email"},
    "action.done": {"task_id": "t1", "note": "called her, she is back on Monday"},
    "proposal.approve": {"proposal_id": "gap-stalled-t1"},
    "proposal.reject": {"proposal_id": "gap-stalled-t1", "rejection_type": "never", "reason": "I call her myself"},
    "routine.create": {"routine_id": "ci-check", "action": "call_webhook", "kind": "scheduled", "task_id": "t1",
                       "interval_minutes": 30, "max_runs": 48, "notify": "on_change"},
    "routine.adopt": {"routine_id": "ci-check", "task_id": "t1"},
    "routine.pause": {"routine_id": "ci-check", "reason": "the CI is down for maintenance"},
    "routine.resume": {"routine_id": "ci-check"},
    "routine.run_now": {"routine_id": "ci-check", "reason": "the owner pushed a fix"},
    "task.pause": {"task_id": "ann", "reason": "the owner calls Ann herself this week"},
    "task.resume": {"task_id": "ann"},
    "task.run_now": {"task_id": "ann", "reason": "the class is full on Saturday: write today", "by": "Sam"},
    "routine.disable": {"routine_id": "ci-check", "reason": "the branch was merged"},
    "routine.report": {"routine_id": "ci-check", "duration_seconds": 42, "outcome": "success",
                       "output": "all 212 checks green"},
}


def parse(command_type: str, **data: Any) -> Any:
    return parse_message(json.dumps({**command("m1", command_type, AT), "data": data}))


def test_every_command_type_has_an_example_and_a_schema() -> None:
    assert set(EXAMPLES) == set(COMMANDS)
    assert {type_ for kind, type_ in SCHEMAS if kind == "command"} == set(COMMANDS)


@pytest.mark.parametrize("command_type", sorted(EXAMPLES))
def test_each_command_becomes_its_frozen_typed_command_and_the_log_rebuilds_the_same(command_type: str) -> None:
    message = parse(command_type, **EXAMPLES[command_type])
    assert isinstance(message.command, COMMANDS[command_type].command)
    with pytest.raises(ValidationError, match="frozen"):
        message.command.task_id = "other"
    # what the router rebuilds from the JSON the embedded log stored is the same command
    stored = json.loads(json.dumps(message.data))
    assert command_from_data(command_type, stored) == message.command


def test_typed_fields_carry_times_and_named_values_not_strings() -> None:
    action = parse("action.record", **EXAMPLES["action.record"]).command
    assert action.deadline == datetime(2026, 3, 15, 10, tzinfo=timezone.utc)
    assert action.if_unresolved is DeadlineAction.NOTIFY_USER
    assert dict(action.details) == {"to": "rahul@company.com", "thread_id": "th1", "subject": "Meeting?",
                                    "message_id": "<m1@mail>"}
    wake = parse("task.wake", **EXAMPLES["task.wake"]).command
    assert isinstance(wake.when, typed.WakeCondition) and wake.when.if_unresolved is DeadlineAction.CANCEL_TASK
    assert parse("task.update", **EXAMPLES["task.update"]).command.status is TaskStatus.WAITING


def test_unknown_action_is_rejected_naming_every_known_action() -> None:
    with pytest.raises(InvalidMessage) as rejected:
        parse("action.record", task_id="t1", action="send_emial", to="rahul@company.com")
    reason = str(rejected.value)
    assert reason.startswith("data.action: unknown action 'send_emial'; known actions:")
    assert all(action in reason for action in EXPECTATIONS)
    assert '"expect": false' in reason and "loop.register" in reason


def test_custom_action_is_accepted_only_when_it_expects_nothing() -> None:
    custom = parse("action.record", task_id="t1", action="post_to_forum", expect=False, url="https://forum/1").command
    assert (custom.action, custom.expect, dict(custom.details)) == ("post_to_forum", False, {"url": "https://forum/1"})
    with pytest.raises(InvalidMessage, match="unknown action 'post_to_forum'"):
        parse("action.record", task_id="t1", action="post_to_forum", expect=True)


def test_loop_overrides_on_an_action_that_expects_nothing_are_refused() -> None:
    with pytest.raises(InvalidMessage, match="deadline, if_unresolved would be ignored"):
        parse("action.record", task_id="t1", action="send_email", to="a@b.c", expect=False,
              deadline="2026-03-20T10:00:00Z", if_unresolved="notify_user")


@pytest.mark.parametrize("action", sorted(EXPECTATIONS))
def test_each_action_requires_exactly_its_contracts_required_fields(action: str) -> None:
    row = EXPECTATIONS[action]
    required = {spec.name for spec in row.fields if spec.required}
    schema_fields = ACTION_SCHEMAS[action].model_fields
    assert {spec.name for spec in row.fields} <= set(schema_fields)
    assert {name for name, info in schema_fields.items() if info.is_required()} == {"task_id", "action", *required}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"action": "send_email"}, "data.to: Field required"),
        ({"action": "send_email", "to": "a@b.c", "repo": "x/y"}, "data.repo: Extra inputs are not permitted"),
        ({"action": "send_slack_dm", "slack_user_id": "U1", "channel_id": "D1", "after": "1"},
         "data.after: Extra inputs are not permitted"),
        ({"action": "send_slack_dm", "slack_user_id": "U1", "channel_id": "D1", "ts": "1.0", "after_ts": "2.0"},
         "ts and after_ts both set the watch's after_ts"),
        ({"action": "send_email", "to": "a@b.c", "if_unresolved": "shrug"},
         "data.if_unresolved: Input should be 'draft_followup_email', 'send_reminder', 'notify_user'"),
        ({"action": "open_pull_request", "repo": "acme/api"}, "data.resource_id: Field required"),
    ],
)
def test_a_field_that_would_be_ignored_or_is_missing_is_named(data: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidMessage, match=reason.replace(".", r"\.").replace("(", r"\(")):
        parse("action.record", task_id="t1", **data)


def test_slack_ts_becomes_the_watchs_after_ts() -> None:
    assert EXPECTATIONS["send_slack_dm"].watch({"slack_user_id": "U1", "channel_id": "D1", "ts": "17.5"}) == {
        "slack_user_id": "U1", "channel_id": "D1", "after_ts": "17.5",
    }


def test_contract_match_fields_and_resource_id_both_narrow_the_webhook_watch() -> None:
    watch = EXPECTATIONS["send_contract"].watch({"resource_id": "doc-1", "match_fields": {"envelope_id": "env-9"}})
    assert watch == {"source": "loopline", "trigger_name": "document_signed",
                     "match_fields": {"resource_id": "doc-1", "envelope_id": "env-9"}}
    with pytest.raises(ConflictingFields):
        EXPECTATIONS["send_contract"].watch({"resource_id": "doc-1", "match_fields": {"resource_id": "doc-2"}})
    todo = EXPECTATIONS["create_todo"].watch({"source": "linear", "trigger_name": "done", "match_fields": {"id": "7"}})
    assert todo == {"source": "linear", "trigger_name": "done", "match_fields": {"id": "7"}}


def test_signals_keep_extra_payload_fields_but_type_the_matched_ones() -> None:
    review = parse_message(json.dumps(signal("g1", "github.event", AT, event_type="pull_request_review",
                                             repo="acme/api", resource_id="42", state="approved")))
    assert review.data["state"] == "approved" and review.command is None
    with pytest.raises(InvalidMessage, match="data.event_type"):
        parse_message(json.dumps(signal("g2", "github.event", AT, event_type="pr_opened", repo="a", resource_id="1")))
    with pytest.raises(InvalidMessage, match="data.ts"):
        parse_message(json.dumps(signal("s1", "slack.message", AT, slack_user_id="U1", channel_id="D1", ts=17)))


def test_every_timer_kind_has_a_handler_and_an_unknown_kind_is_refused_when_filed() -> None:
    assert set(TIMERS) == set(TimerKind)
    bucket = TimerBucket.open(id=ids.timer_bucket_id(datetime(2026, 3, 13, 10, tzinfo=timezone.utc), 0),
                              hour=datetime(2026, 3, 13, 10, tzinfo=timezone.utc), shard=0, now=datetime(2026, 3, 13, tzinfo=timezone.utc))
    with pytest.raises(ValueError, match="loop_deadlin"):
        bucket.set_timer(kind="loop_deadlin", target_id=ids.loop_id("u", "l1"), due=datetime(2026, 3, 13, 10, tzinfo=timezone.utc),
                         now=datetime(2026, 3, 13, tzinfo=timezone.utc))


def test_every_deadline_action_a_loop_may_name_has_a_handler() -> None:
    assert set(ACTIONS) == {*DeadlineAction, *LOOPLINE_ONLY_ACTIONS} == set(NEXT_STEP)
    assert {row.if_unresolved for row in EXPECTATIONS.values()} <= set(DeadlineAction)
