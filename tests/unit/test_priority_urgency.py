"""The model urgency score (seed 004 §3): asked as a decision of a new task only when a tenant's priority rule reads
it, answered by the offline policy deterministically, and the rules set the priority again on the recorded answer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import create_engine, select

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.task import Task
from loopline.domain.timeutil import parse_time
from loopline.projections import tasks as task_rows
from loopline.projections.runner import metadata
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import ANY_HOUR, command
from tests.unit.fakes import ScriptedModel
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
NOW = "2026-03-02T09:00:00Z"
RULES = [{"urgency_at_least": 0.8, "priority": "critical"}, {"text_matches": "invoice", "priority": "medium"}]


@pytest.fixture
def offline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline(OfflinePolicy())
    running.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=RULES))
    yield running
    running.close()


def of(loopline: InMemoryLoopline, kind: type, ref: str) -> list:
    return [e for e in loopline.events() if isinstance(e, kind) and e.task_ref == ref]


def test_the_offline_score_is_recorded_as_the_tasks_decision_and_the_rules_raise_its_priority(
        offline: InMemoryLoopline) -> None:
    offline.publish(command("c1", "task.create", NOW, GYM, task_id="pay", title="Overdue invoice: pay it today",
                            description="urgent, the bank closes the account"))

    asked = of(offline, Task.DecisionRequested, "pay")
    assert [(e.point, e.purpose) for e in asked] == [("score_urgency", "urgency")]
    decided = of(offline, Task.DecisionRecorded, "pay")
    assert [(e.point, e.decision, e.adapter, e.output["urgency"]) for e in decided] == [
        ("score_urgency", "urgency 0.9", "offline", 0.9)]
    ruled = of(offline, Task.PriorityRuled, "pay")
    assert [(e.priority, e.was, e.rule, e.urgency) for e in ruled] == [("medium", None, 2, None),
                                                                       ("critical", "medium", 1, 0.9)]
    assert offline.task(GYM, "pay").priority == "critical"
    assert DESCRIPTIONS[Task.DecisionRecorded](decided[0])[0].startswith("score_urgency decided: urgency 0.9")


def test_a_calm_score_leaves_the_priority_the_rules_gave_without_a_new_ruling(offline: InMemoryLoopline) -> None:
    offline.publish(command("c1", "task.create", NOW, GYM, task_id="inv", title="Send the invoice"))

    assert [e.output["urgency"] for e in of(offline, Task.DecisionRecorded, "inv")] == [0.2]
    assert [e.rule for e in of(offline, Task.PriorityRuled, "inv")] == [2]
    assert offline.task(GYM, "inv").priority == "medium"


def test_the_model_is_not_asked_when_no_rule_reads_urgency_or_the_creator_gave_a_priority_or_a_score() -> None:
    model = ScriptedModel()
    loopline = InMemoryLoopline(model)
    try:
        loopline.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=RULES[1:]),
                         command("c1", "task.create", NOW, GYM, task_id="no-rule", title="Send the invoice"))
        loopline.publish(command("cfg2", "tenant.configure", NOW, GYM, priority_rules=RULES),
                         command("c2", "task.create", NOW, GYM, task_id="own", title="Invoice", priority="low"),
                         command("c3", "task.create", NOW, GYM, task_id="scored", title="Invoice", urgency=0.3))
        assert [r.point for r in model.requests] == []
        assert [loopline.task(GYM, ref).priority for ref in ("no-rule", "own", "scored")] == ["medium", "low", "medium"]
    finally:
        loopline.close()


def test_a_score_the_model_cannot_give_is_not_asked_again_and_the_task_goes_on_unescalated() -> None:
    loopline = InMemoryLoopline(ScriptedModel(down=True))
    try:
        loopline.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=RULES),
                         command("c1", "task.create", NOW, GYM, task_id="inv", title="Send the invoice"))
        failed = of(loopline, Task.DecisionFailed, "inv")
        assert [(e.attempt, e.retry_at) for e in failed] == [(1, None)]
        assert loopline.task(GYM, "inv").priority == "medium"
        assert not of(loopline, Task.Escalated, "inv")
    finally:
        loopline.close()


def test_an_off_schema_score_fails_the_request_naming_the_field() -> None:
    loopline = InMemoryLoopline(ScriptedModel(urgency=1.5))
    try:
        loopline.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=RULES),
                         command("c1", "task.create", NOW, GYM, task_id="inv", title="Send the invoice"))
        assert [e.error for e in of(loopline, Task.DecisionFailed, "inv")] == [
            "the model answered off its schema: urgency 1.5 is not a number from 0 to 1"]
    finally:
        loopline.close()


def create_lead(loopline: InMemoryLoopline) -> None:
    """A lead follow-up Loopline works, for a tenant whose rules read urgency: its first touch is the creator's draft."""
    loopline.publish(command("cfg", "tenant.configure", NOW, GYM, execution_mode="limited_auto", priority_rules=RULES,
                             **ANY_HOUR))
    loopline.publish(command("c1", "task.create", NOW, GYM, task_id="lead", title="Lead Ann", task_type="lead_followup",
                             contact="ann@example.com", to_name="Ann", confidence=0.95,
                             draft={"subject": "Your free class", "body": "Hi Ann, see you soon."}))


def test_an_acting_task_sends_its_first_touch_with_its_score_asked_beside_it() -> None:
    loopline = InMemoryLoopline(ScriptedModel(urgency=0.9))
    try:
        create_lead(loopline)
        loopline.tick(parse_time(NOW) + timedelta(hours=1))
        assert [message["details"]["subject"] for _, message in loopline.emails()] == ["Your free class"]
        assert loopline.task(GYM, "lead").priority == "critical"
    finally:
        loopline.close()


def next_action(loopline: InMemoryLoopline, ref: str) -> tuple[str | None, int]:
    """The task's next action and decision count in the tasks read model, projected from every stored event."""
    engine = create_engine("sqlite://")
    metadata.create_all(engine, tables=list(task_rows.tables))
    with engine.begin() as conn:
        loopline.project(conn, task_rows)
        row = conn.execute(select(task_rows.tasks).where(task_rows.tasks.c.task_id == ref)).mappings().one()
    return row["next_action"], row["decisions"]


@pytest.mark.parametrize("model", [ScriptedModel(urgency=0.9), ScriptedModel(down=True)])
def test_the_tasks_read_model_keeps_the_tasks_own_next_action_whatever_became_of_the_score(
        model: ScriptedModel) -> None:
    loopline = InMemoryLoopline(model)
    try:
        create_lead(loopline)
        # As without a rule reading urgency: the first touch waits for the tick, whatever the score became.
        assert next_action(loopline, "lead") == (None, 0 if model.down else 1)
    finally:
        loopline.close()


def test_a_score_a_model_call_limit_holds_back_is_not_asked_and_nothing_is_held_or_escalated() -> None:
    model = ScriptedModel(urgency=0.9)
    loopline = InMemoryLoopline(model)
    try:
        loopline.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=RULES, daily_model_call_limit=1),
                         command("c1", "task.create", NOW, GYM, task_id="first", title="Send the invoice"),
                         command("c2", "task.create", NOW, GYM, task_id="second", title="Send the invoice"))
        assert [r.task_ref for r in model.requests] == ["first"]
        assert [type(e) for e in loopline.events() if getattr(e, "task_ref", None) == "second"
                and isinstance(e, (Task.DecisionRequested, Task.DecisionHeld, Task.Escalated))] == []
        assert [loopline.task(GYM, ref).priority for ref in ("first", "second")] == ["critical", "medium"]
    finally:
        loopline.close()
