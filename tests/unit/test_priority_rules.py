"""Priority rules (seed 004 §3): the tenant's rules set a new task's priority, first match wins, deterministically;
an urgency rule matches only a recorded model score."""

from __future__ import annotations

import re

import pytest

from loopline.adapters.messages import InvalidMessage
from loopline.domain.priority_rules import InvalidPriorityRule, Ruling, TaskFacts, check_priority_rules, rule_priority
from loopline.domain.task import Task
from loopline.domain.tenant import check_settings
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
NOW = "2026-03-02T09:00:00Z"

SEED_TABLE = [
    {"contact_domain_in": ["bank.com", "Credit.example"], "priority": "high"},
    {"text_matches": "invoice", "priority": "medium"},
    {"urgency_at_least": 0.8, "priority": "high"},
]


def test_the_seed_table_sets_priority_by_the_first_rule_that_matches() -> None:
    check_priority_rules(SEED_TABLE)
    assert rule_priority(SEED_TABLE, TaskFacts(title="Invoice 42", contact="ops@credit.EXAMPLE")) == Ruling("high", 1)
    assert rule_priority(SEED_TABLE, TaskFacts(title="Pay", description="the INVOICE is late")) == Ruling("medium", 2)
    assert rule_priority(SEED_TABLE, TaskFacts(title="Lunch", contact="ann@example.com")) is None


def test_an_urgency_rule_matches_only_a_recorded_score_at_or_over_its_threshold() -> None:
    assert rule_priority(SEED_TABLE, TaskFacts(title="Call back")) is None
    assert rule_priority(SEED_TABLE, TaskFacts(title="Call back", urgency=0.79)) is None
    assert rule_priority(SEED_TABLE, TaskFacts(title="Call back", urgency=0.8)) == Ruling("high", 3)


def test_every_condition_of_a_rule_must_hold() -> None:
    rules = [{"task_type_in": ["payment_reminder"], "text_matches": "^final", "priority": "critical"}]
    assert rule_priority(rules, TaskFacts(title="Final notice", task_type="payment_reminder")) == Ruling("critical", 1)
    assert rule_priority(rules, TaskFacts(title="Final notice", task_type="win_back")) is None
    assert rule_priority(rules, TaskFacts(title="A final notice", task_type="payment_reminder")) is None


@pytest.mark.parametrize(("rules", "names"), [
    ({"priority": "high"}, "must be a list"),
    ([{"text_matches": "x", "priority": "urgent"}], "priority_rules[1].priority 'urgent'"),
    ([{"priority": "low"}], "priority_rules[1] names no condition"),
    ([{"text_matches": "x", "priority": "low"}, {"sender": "x", "priority": "low"}], "priority_rules[2] has unknown"),
    ([{"text_matches": "(", "priority": "low"}], "priority_rules[1].text_matches '(' is not a regular expression"),
    ([{"contact_domain_in": "bank.com", "priority": "low"}], "priority_rules[1].contact_domain_in must be a non-empty"),
    ([{"urgency_at_least": 1.5, "priority": "low"}], "priority_rules[1].urgency_at_least must be a number from 0 to 1"),
    ([{"text_matches": "x", "priority": "low"}] * 51, "at most 50"),
])
def test_a_wrong_rule_is_refused_naming_the_rule_and_field(rules: object, names: str) -> None:
    with pytest.raises(InvalidPriorityRule, match=re.escape(names)):
        check_priority_rules(rules)


def test_a_new_task_gets_the_priority_of_the_tenants_first_matching_rule_unless_its_creator_gave_one() -> None:
    loopline = InMemoryLoopline()
    try:
        loopline.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=SEED_TABLE))
        loopline.publish(
            command("c1", "task.create", NOW, GYM, task_id="bank", title="Call back", contact="ops@bank.com"),
            command("c2", "task.create", NOW, GYM, task_id="inv", title="Send the invoice"),
            command("c3", "task.create", NOW, GYM, task_id="own", title="Send the invoice", priority="low"),
            command("c4", "task.create", NOW, GYM, task_id="none", title="Lunch", urgency=0.5),
            command("c5", "task.create", NOW, GYM, task_id="urgent", title="Lunch", urgency=0.9),
        )
        assert [loopline.task(GYM, ref).priority for ref in ("bank", "inv", "own", "none", "urgent")] == [
            "high", "medium", "low", None, "high",
        ]
        ruled = [e for e in loopline.events() if isinstance(e, Task.PriorityRuled)]
        assert [(e.task_ref, e.rule, e.urgency, e.was) for e in ruled] == [
            ("bank", 1, None, None), ("inv", 2, None, None), ("urgent", 3, 0.9, None),
        ]
        assert DESCRIPTIONS[Task.PriorityRuled](ruled[2]) == ("priority high set by priority rule 3",
                                                              "model urgency score 0.9")
    finally:
        loopline.close()


def test_configuring_a_wrong_rule_is_refused_at_the_edge_naming_the_field_and_the_rule() -> None:
    loopline = InMemoryLoopline()
    try:
        with pytest.raises(InvalidMessage, match=re.escape("data.priority_rules: priority_rules[1] names no condition")):
            loopline.publish(command("cfg", "tenant.configure", NOW, GYM, priority_rules=[{"priority": "low"}]))
    finally:
        loopline.close()


def test_the_tenants_settings_check_refuses_a_wrong_rule_where_no_edge_checked_it() -> None:
    check_settings({"priority_rules": SEED_TABLE})
    with pytest.raises(InvalidPriorityRule, match=re.escape("priority_rules[1].priority 'urgent'")):
        check_settings({"priority_rules": [{"text_matches": "x", "priority": "urgent"}]})
