"""What a user sees of an acting task (DESIGN11 §6): budgets, cadence position, next action, outcome, the
conversation and each decision in the audit. The pipeline's events are recorded directly on the task here, so
these views are tested apart from the processors that will record them."""

from __future__ import annotations

from typing import Any

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import parse_time
from loopline.projections import task_memory, task_queries
from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import dump, task_row, tick, trail

GYM = "gym_iron"
MAYA = "maya@example.com"
T0 = "2026-03-02T09:00:00Z"
PLAN = dict(
    budget_messages=3, budget_turns=6, ends_at=parse_time("2026-03-16T09:00:00Z"), cadence="standard", intervals=[3, 5, 7],
    tones=["friendly_checkin", "direct_offer_help", "final_open_door"], on_exhaustion="cancel", dormant_check_days=None,
    dormant_max_days=None, draft=None, contact_name="Maya",
)


def record(system: System, *events: tuple[type, str, dict[str, Any]], task_ref: str = "churn-maya") -> None:
    """Triggers pipeline events on the stored task and saves them, as the outreach processor's steps do."""
    task = system.app.repository.get(ids.task_id(GYM, task_ref))
    for event_class, at, fields in events:
        task.trigger_event(event_class, timestamp=parse_time(at), **fields)
    system.app.save(task)
    system.projections.catch_up()  # only the read models: no processor acts on these hand-made events


def send(touch: int, at: str, subject: str, body: str) -> tuple[type, str, dict[str, Any]]:
    details = {"to": MAYA, "to_name": "Maya", "subject": subject, "body": body, "touch": touch, "decided_by": "offline"}
    return (Task.ActionRecorded, at, dict(
        action="send_email", details=details, summary=f"touch {touch} to {MAYA}", performed_by="loopline", status="waiting",
    ))


def create(system: System, status: str = "ready", reason: str = "confidence 0.90 is at least churn_risk's 0.75") -> None:
    """A churn_risk task as the creation gate leaves it, built directly: these tests need no command handler."""
    task = Task.create(
        id=ids.task_id(GYM, "churn-maya"), now=parse_time(T0), tenant=GYM, ref="churn-maya", title="Bring Maya back",
        description="", task_type="churn_risk", status=status, expires_at=parse_time("2026-03-16T09:00:00Z"),
        priority="high", contact=MAYA, confidence=0.9, context={"member_tenure_days": 200},
        reason=reason,
    )
    task.trigger_event(Task.OutreachPlanned, timestamp=parse_time(T0), **PLAN)
    system.app.save(task)
    system.projections.catch_up()  # only the read models: no processor acts on these hand-made events


def test_a_ready_task_shows_its_first_touch_at_the_next_tick(system: System) -> None:
    create(system)
    shown = view(system, T0)
    assert shown["position"] == "touch 0 of 3"
    assert shown["next_action"] == {"what": "touch 1 of 3", "at": T0, "reason": "ready: the next tick works it"}


def test_a_task_in_review_waits_for_the_owner(system: System) -> None:
    create(system, status="pending_review", reason="execution mode manual: every acting task goes to review")
    assert view(system, T0)["next_action"] == {
        "what": "waits for the owner's review (task.approve)", "at": None,
        "reason": "execution mode manual: every acting task goes to review",
    }


def first_touch(system: System) -> None:
    create(system)
    record(
        system,
        (Task.DecisionRequested, "2026-03-02T09:01:00Z", dict(
            request_ref="churn-maya/touch/1", point="draft_message", purpose="touch", touch=1, tone="friendly_checkin",
            reason="touch 1 of the standard cadence", attempt=1, loop_ref=None,
        )),
        (Task.DecisionRecorded, "2026-03-02T09:01:00Z", dict(
            request_ref="churn-maya/touch/1", point="draft_message", adapter="anthropic", model="claude-test",
            decision="draft", confidence=0.82, reasoning="Friendly first check-in; no pressure.", prompt_digest="ab" * 32,
            input_tokens=900, output_tokens=120, output={"subject": "We miss you, Maya", "body": "Hi Maya, ..."},
        )),
        send(1, "2026-03-02T09:01:00Z", "We miss you, Maya", "Hi Maya, it has been a while. Fancy a class this week?"),
        (Task.TouchSent, "2026-03-02T09:01:00Z", dict(
            touch=1, messages_used=1, next_touch_at=parse_time("2026-03-05T09:01:00Z"),
        )),
    )


def view(system: System, now: str, task_ref: str = "churn-maya") -> dict[str, Any]:
    with system.projections.engine.connect() as conn:
        ((_, row),) = task_queries.find_tasks(conn, task_ref, GYM)
    return task_queries.outreach(row, parse_time(now))


def test_after_the_first_touch_the_task_shows_budgets_used_and_left_and_when_touch_2_goes(system: System) -> None:
    first_touch(system)

    shown = view(system, "2026-03-04T12:00:00Z")

    assert shown["cadence"] == "standard" and shown["position"] == "touch 1 of 3"
    assert shown["budget"]["messages"] == {"budget": 3, "used": 1, "left": 2}
    assert shown["budget"]["turns"] == {"budget": 6, "used": 0, "left": 6}
    assert shown["budget"]["days"] == {"budget": 14, "used": 2, "left": 12, "ends_at": "2026-03-16T09:00:00Z"}
    assert shown["next_action"] == {"what": "touch 2 of 3", "at": "2026-03-05T09:01:00Z", "reason": None}
    assert shown["outcome"] is None and shown["decisions"] == 1


def test_a_follow_through_task_has_no_outreach(system: System) -> None:
    publish(system, command("f1", "task.create", T0, tenant=GYM, task_id="plain", title="Chase the invoice"))
    assert view(system, T0, "plain") is None


def test_after_the_last_touch_the_next_action_is_what_the_cadence_does_at_its_end(system: System) -> None:
    first_touch(system)
    record(
        system,
        send(2, "2026-03-05T09:01:00Z", "Re: We miss you, Maya", "Anything I can help with?"),
        (Task.TouchSent, "2026-03-05T09:01:00Z", dict(touch=2, messages_used=2, next_touch_at=parse_time("2026-03-10T09:01:00Z"))),
        send(3, "2026-03-10T09:01:00Z", "Re: We miss you, Maya", "The door is always open."),
        (Task.TouchSent, "2026-03-10T09:01:00Z", dict(touch=3, messages_used=3, next_touch_at=parse_time("2026-03-17T09:01:00Z"))),
    )
    shown = view(system, "2026-03-11T09:00:00Z")
    assert shown["position"] == "touch 3 of 3" and shown["budget"]["messages"]["left"] == 0
    assert shown["next_action"] == {  # the cadence's last wait ends after the task's days: those come first
        "what": "the task's days run out: cancelled as unresponsive unless the contact replies",
        "at": "2026-03-16T09:00:00Z", "reason": None,
    }
    record(system, (Task.NextTouchScheduled, "2026-03-11T10:00:00Z", dict(
        next_touch_at=parse_time("2026-03-14T10:00:00Z"), reason="wait 3 days, as the evaluation said", status="waiting",
    )))
    assert view(system, "2026-03-12T09:00:00Z")["next_action"] == {
        "what": "cadence ends: cancelled as unresponsive unless the contact replies", "at": "2026-03-14T10:00:00Z",
        "reason": "wait 3 days, as the evaluation said",
    }

    record(
        system,
        (Task.OutcomeSet, "2026-03-17T09:01:00Z", dict(code="unresponsive", kind="neutral", provisional=False,
                                                      reason="3 touches, no reply")),
        (Task.Cancelled, "2026-03-17T09:01:00Z", dict(reason="cadence exhausted: no reply to 3 touches", status="cancelled")),
    )
    shown = view(system, "2026-03-18T09:00:00Z")
    assert shown["outcome"] == {"code": "unresponsive", "kind": "neutral", "provisional": False}
    assert shown["next_action"] is None and shown["budget"]["days"]["left"] == 0


def test_a_failed_decision_shows_when_the_model_is_asked_again_and_a_retry_counts_no_second_turn(system: System) -> None:
    reply_request = dict(request_ref="mail-9", point="evaluate_reply", purpose="reply", touch=None, tone=None,
                         reason="maya@example.com replied", loop_ref="churn-maya/touch/1")
    first_touch(system)
    record(
        system,
        (Task.DecisionRequested, "2026-03-03T18:30:00Z", dict(reply_request, attempt=1)),
        (Task.DecisionFailed, "2026-03-03T18:30:00Z", dict(
            request_ref="mail-9", error="the model answered 529 three times", attempt=1,
            retry_at=parse_time("2026-03-03T18:35:00Z"),
        )),
    )
    shown = view(system, "2026-03-03T18:31:00Z")
    assert shown["next_action"] == {
        "what": "ask the model again", "at": "2026-03-03T18:35:00Z",
        "reason": "model unavailable (attempt 1): the model answered 529 three times",
    }
    record(system, (Task.DecisionRequested, "2026-03-03T18:35:00Z", dict(reply_request, attempt=2)))
    shown = view(system, "2026-03-03T18:36:00Z")
    assert shown["budget"]["turns"]["used"] == 1 and shown["next_action"]["what"] == "the model evaluates the reply"
    failed = next(row for row in trail(system, "churn-maya", GYM) if row["event"] == "Task.DecisionFailed")
    assert failed["summary"] == "decision failed (attempt 1); nothing sent; asked again at 2026-03-03T18:35:00Z"


def test_a_wait_decision_resumes_the_cadence_and_a_dormant_task_shows_when_it_closes(system: System) -> None:
    first_touch(system)
    record(system, (Task.NextTouchScheduled, "2026-03-03T18:31:00Z", dict(
        next_touch_at=parse_time("2026-03-06T18:31:00Z"), reason="she asked to be written to after the weekend", status="waiting",
    )))
    assert view(system, "2026-03-04T00:00:00Z")["next_action"] == {
        "what": "touch 2 of 3", "at": "2026-03-06T18:31:00Z", "reason": "she asked to be written to after the weekend",
    }
    record(system, (Task.WentDormant, "2026-03-17T09:01:00Z", dict(
        until=parse_time("2026-05-16T09:01:00Z"), reason="3 touches sent, no reply: dormant for 60 days", status="dormant",
    )))
    shown = view(system, "2026-03-18T00:00:00Z")
    assert task_row(system, "churn-maya", GYM)["status"] == "dormant"
    assert shown["next_action"]["what"] == "closed as unresponsive unless the contact replies or an outcome signal comes"
    assert shown["next_action"]["at"] == "2026-05-16T09:01:00Z"


def test_a_deferred_send_shows_when_it_goes_and_why(system: System) -> None:
    first_touch(system)
    record(system, (Task.SendDeferred, "2026-03-05T09:01:00Z", dict(
        rule="member_weekly_limit", reason="maya@example.com was sent 3 messages in the last 7 days (limit 3)",
        until=parse_time("2026-03-08T10:00:00Z"), draft={"subject": "Re: We miss you, Maya", "body": "..."},
    )))
    shown = view(system, "2026-03-05T10:00:00Z")
    assert shown["next_action"] == {
        "what": "send the deferred touch", "at": "2026-03-08T10:00:00Z",
        "reason": "maya@example.com was sent 3 messages in the last 7 days (limit 3)",
    }
    assert shown["deferrals"] == 1
    deferral = [row for row in trail(system, "churn-maya", GYM) if row["event"] == "Task.SendDeferred"]
    assert deferral[0]["summary"] == "send deferred until 2026-03-08T10:00:00Z (member_weekly_limit)"
    assert deferral[0]["reason"] == "maya@example.com was sent 3 messages in the last 7 days (limit 3)"


def reply_and_close(system: System) -> None:
    first_touch(system)
    record(
        system,
        (Task.SignalReceived, "2026-03-03T18:30:00Z", dict(
            signal_ref="mail-9", signal_type="email.received", resolved_loops=[], status="executing",
            data={"sender": MAYA, "subject": "Re: We miss you, Maya", "body": "Yes! See you Thursday at 6."},
        )),
        (Task.DecisionRequested, "2026-03-03T18:30:00Z", dict(
            request_ref="mail-9", point="evaluate_reply", purpose="reply", touch=None, tone=None,
            reason="maya@example.com replied", attempt=1, loop_ref="churn-maya/touch/1",
        )),
        (Task.DecisionRecorded, "2026-03-03T18:31:00Z", dict(
            request_ref="mail-9", point="evaluate_reply", adapter="offline", model="offline-policy-v1", decision="close",
            confidence=0.9, reasoning="She says she will come on Thursday.", prompt_digest="cd" * 32, input_tokens=0,
            output_tokens=0, output={"decision": "close", "outcome": "engaged"},
        )),
        (Task.OutcomeSet, "2026-03-03T18:31:00Z", dict(code="engaged", kind="positive", provisional=True,
                                                      reason="She says she will come on Thursday.")),
        (Task.Completed, "2026-03-03T18:31:00Z", dict(summary="Maya will come on Thursday", status="completed")),
    )


def test_a_reply_counts_a_turn_and_its_evaluation_closes_with_an_outcome(system: System) -> None:
    reply_and_close(system)
    shown = view(system, "2026-03-20T00:00:00Z")
    assert shown["budget"]["turns"] == {"budget": 6, "used": 1, "left": 5}
    assert shown["budget"]["days"] == {"budget": 14, "used": 1, "left": 13, "ends_at": "2026-03-16T09:00:00Z"}  # at close
    assert shown["outcome"] == {"code": "engaged", "kind": "positive", "provisional": True}
    assert shown["decisions"] == 2 and shown["next_action"] is None
    assert task_row(system, "churn-maya", GYM)["status"] == "completed"


def test_the_audit_shows_each_decision_with_adapter_model_confidence_and_reasoning(system: System) -> None:
    reply_and_close(system)
    decisions = [row for row in trail(system, "churn-maya", GYM) if row["event"] == "Task.DecisionRecorded"]
    assert [row["summary"] for row in decisions] == [
        "draft_message decided: draft (confidence 0.82; anthropic adapter, model claude-test)",
        "evaluate_reply decided: close (confidence 0.90; offline adapter, model offline-policy-v1)",
    ]
    assert decisions[1]["reason"] == (
        "She says she will come on Thursday. [prompt cdcdcdcdcdcd, 0 in / 0 out tokens]"
    )
    outcome = next(row for row in trail(system, "churn-maya", GYM) if row["event"] == "Task.OutcomeSet")
    assert outcome["summary"] == "outcome engaged (positive, provisional)"


def test_the_conversation_holds_every_message_sent_and_received_with_who_and_when(system: System) -> None:
    reply_and_close(system)
    with system.projections.engine.connect() as conn:
        (memory,) = task_memory.find(conn, "churn-maya", GYM)
        turns = task_memory.conversation(conn, memory["aggregate_id"])
        text = task_memory.read(conn, memory, "conversation.md")
        progress = task_memory.read(conn, memory, "progress.md")
    assert [(t["at"], t["author"]) for t in turns] == [
        ("2026-03-02T09:01:00Z", "system"), ("2026-03-02T09:01:00Z", "agent"), ("2026-03-03T18:30:00Z", "contact"),
        ("2026-03-03T18:31:00Z", "system"),
    ]
    assert turns[1]["text"] == "Subject: We miss you, Maya\n\nHi Maya, it has been a while. Fancy a class this week?"
    assert "## 2026-03-03T18:30:00Z · contact\n\nYes! See you Thursday at 6.\n" in text
    assert turns[3]["text"] == "Decided close (confidence 0.90): She says she will come on Thursday."
    assert ("Outreach: cadence standard, touch 1 of 3, 1 of 3 message(s) used, until 2026-03-16T09:00:00Z; "
            "outcome engaged (positive); the conversation is in conversation.md") in progress


def test_an_escalation_and_the_owner_s_guidance_are_part_of_the_conversation(system: System) -> None:
    first_touch(system)
    record(
        system,
        (Task.Escalated, "2026-03-04T10:00:00Z", dict(reason="the reply asks for a refund", cause="decision",
                                                      status="escalated")),
        (Task.UserNotified, "2026-03-04T10:00:00Z", dict(kind="escalation", message="Maya asks for a refund", quote=None, draft=None,
                                                          actions=[])),
        (Task.GuidanceGiven, "2026-03-04T11:00:00Z", dict(text="Offer her a free week instead", status="executing")),
    )
    with system.projections.engine.connect() as conn:
        (memory,) = task_memory.find(conn, "churn-maya", GYM)
        turns = task_memory.conversation(conn, memory["aggregate_id"])
    assert [(t["author"], t["text"]) for t in turns[2:]] == [
        ("system", "Handed to the owner: the reply asks for a refund"), ("owner", "Offer her a free week instead"),
    ]


def test_rebuilding_gives_the_same_outreach_rows_conversation_and_audit(system: System) -> None:
    reply_and_close(system)
    before = dump(system.projections.engine)
    assert before["memory_turns"] and before["tasks"]

    system.projections.reset()  # every read model dropped and projected again, in this process
    system.projections.catch_up()

    assert dump(system.projections.engine) == before


def test_rebuilding_after_the_pipeline_worked_a_task_gives_the_same_rows(system: System) -> None:
    """The same, with the events the pipeline itself records: a tenant, touches, a reply and its evaluation."""
    publish(
        system,
        command("g1", "tenant.configure", "2026-04-06T08:00:00Z", tenant=GYM, execution_mode="limited_auto"),
        command("g2", "task.create", "2026-04-06T09:00:00Z", tenant=GYM, task_id="churn-maya", title="Bring Maya back",
                task_type="churn_risk", contact=MAYA, to_name="Maya", confidence=0.9),
    )
    tick(system, "2026-04-06T09:05:00Z")
    tick(system, "2026-04-09T09:10:00Z")
    publish(system, signal("m1", "email.received", "2026-04-10T18:30:00Z", tenant=GYM, sender=MAYA,
                           body="Thanks! I'll come on Thursday, see you then."))
    before = dump(system.projections.engine)
    assert before["tenants"] and len(before["memory_turns"]) == 6  # 2 drafts, 2 touches, the reply, its evaluation
    assert view(system, "2026-04-11T00:00:00Z")["outcome"]["code"] == "verbal_commitment"

    system.projections.reset()  # every read model dropped and projected again, in this process
    system.projections.catch_up()

    assert dump(system.projections.engine) == before


def test_a_reply_another_task_answers_is_in_the_inbox_conversation_and_audit_with_the_task_answering_it(
    system: System,
) -> None:
    create(system)
    record(system, send(1, "2026-03-02T10:00:00Z", "Hey Maya", "How have you been?"),
           (Task.ReplyNoted, "2026-03-03T08:00:00Z", dict(signal_ref="maya-1", data={"sender": MAYA, "body": "See you!"},
                                                         answered_by="winback-maya")))

    with system.projections.engine.connect() as conn:
        ((aggregate_id, row),) = task_queries.find_tasks(conn, "churn-maya", GYM)
        [item] = task_queries.inbox(conn, aggregate_id)
        conversation = task_memory.conversation(conn, aggregate_id)
    assert row["inbox"] == 1 and item["data"] == {"sender": MAYA, "body": "See you!", "answered_by": "winback-maya"}
    assert conversation[-1]["author"] == "system" and "do not answer it here" in conversation[-1]["text"]
    assert "task winback-maya answers it" in trail(system, "churn-maya", GYM)[-1]["summary"]


def test_an_out_of_office_pause_shows_until_when_and_what_gave_it_away_while_it_lasts(system: System) -> None:
    first_touch(system)
    record(system, (Task.OutOfOfficeReceived, "2026-03-03T18:10:00Z", dict(
        until=parse_time("2026-03-12T09:00:00Z"), returns_on="2026-03-12", sign="subject “Automatic reply”",
        next_touch_at=parse_time("2026-03-12T09:00:00Z"), status="waiting",
    )))
    shown = view(system, "2026-03-04T00:00:00Z")
    assert shown["away"] == {"until": "2026-03-12T09:00:00Z", "returns_on": "2026-03-12",
                             "recognised_by": "subject “Automatic reply”"}
    assert shown["next_action"] == {"what": "touch 2 of 3", "at": "2026-03-12T09:00:00Z",
                                    "reason": "the contact is out of office, back on 2026-03-12"}
    paused = next(row for row in trail(system, "churn-maya", GYM) if row["event"] == "Task.OutOfOfficeReceived")
    assert paused["summary"].startswith("automatic reply: the contact is away until 2026-03-12T09:00:00Z")

    assert view(system, "2026-03-12T09:00:00Z")["away"] is None  # the pause is over

    record(system, (Task.SignalReceived, "2026-03-05T07:00:00Z", dict(
        signal_ref="mail-2", signal_type="email.received", data={"sender": MAYA, "body": "Back early!"},
        resolved_loops=[], status="waiting",
    )))
    assert view(system, "2026-03-06T00:00:00Z")["away"] is None  # she wrote: she is back
