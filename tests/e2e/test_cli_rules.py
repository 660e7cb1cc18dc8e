"""`loopline rules load` (embedded, issue 21 item 6): the repository's rules/priority.yml becomes a tenant's priority
rules; a new task is ruled, scored by the offline policy, and ruled again, all in `loopline audit`; a wrong rule is
refused naming its field, and nothing is published."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
from tests.e2e.cli import Cli

T0 = "2026-03-02T14:00:00Z"
TENANT = "acme"


def test_rules_loaded_from_yaml_set_a_new_tasks_priority_with_the_model_urgency_score(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    loaded = cli.json("rules", "load", "--tenant", TENANT, "rules/priority.yml", "--json")
    assert (loaded["rules"], loaded["urgency_rules"]) == (3, 1)
    published = cli.publish(tmp_path, [
        command("c1", "task.create", T0, TENANT, task_id="bill", title="Book the invoice", description="urgent"),
        command("c2", "task.create", T0, TENANT, task_id="call", title="Call the landlord today", description="urgent"),
    ], "start")
    assert published.returncode == 0, published.stderr

    def trail(task: str) -> list[tuple[str, str]]:
        return [(row["event"], row["summary"]) for row in cli.json("audit", task)
                if row["event"] in ("Task.PriorityRuled", "Task.DecisionRecorded")]

    # The first rule that matches wins: the invoice rule comes before the urgency rule, whatever the score.
    assert trail("bill") == [
        ("Task.PriorityRuled", "priority medium set by priority rule 2"),
        ("Task.DecisionRecorded", "score_urgency decided: urgency 0.55 (confidence 0.60; offline adapter, model "
                                  "offline-policy-v1)"),
    ]
    assert trail("call") == [
        ("Task.DecisionRecorded", "score_urgency decided: urgency 0.9 (confidence 0.60; offline adapter, model "
                                  "offline-policy-v1)"),
        ("Task.PriorityRuled", "priority high set by priority rule 3"),
    ]

def test_a_wrong_rule_file_is_refused_naming_the_rule_and_field(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    wrong = tmp_path / "priority.yml"
    wrong.write_text("priority_rules:\n  - text_matches: invoice\n    priority: medium\n"
                     "  - urgency_at_least: 0.8\n    priority: urgent\n")
    refused = cli("rules", "load", "--tenant", TENANT, str(wrong))
    assert refused.returncode == 2
    assert "priority_rules[2].priority 'urgent' is not one of critical, high, medium, low" in " ".join(
        refused.stderr.split())
    wrong.write_text("rules: []\n")
    assert "must hold a `priority_rules` list" in cli("rules", "load", "--tenant", TENANT, str(wrong)).stderr
