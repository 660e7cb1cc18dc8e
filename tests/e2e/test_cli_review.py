"""`loopline review` through the command (embedded deployment): an escalated task, a task pending review and an open
escalation question wait for the owner, with what to decide with; approve and reject decide them, and an answer that
picked no option stays, to be read."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
from tests.e2e.cli import Cli

T0 = "2026-03-02T14:00:00Z"
STUDIO = "studio"


def test_the_review_queue_lists_what_waits_for_the_owner_and_decides_it(embedded_cli: Cli, tmp_path: Path) -> None:
    cli = embedded_cli
    setup = [command("c1", "task.create", T0, STUDIO, task_id="auth", title="Implement user authentication"),
             command("c2", "task.create", T0, STUDIO, task_id="invoice", title="Chase the March invoice"),
             command("c3", "task.update", T0, STUDIO, task_id="invoice", status="escalated"),
             command("c4", "task.create", T0, STUDIO, task_id="flyer", title="Win Ann back", task_type="churn_risk",
                     contact="ann@example.com", to_name="Ann", confidence=0.95,
                     draft={"subject": "We miss you", "body": "Come back!"}),
             command("c6", "question.ask", "2026-03-02T14:05:00Z", STUDIO, question_id="q1", task_id="auth",
                     asker="Build agent", stuck_on="Which OAuth provider", question="Auth0, Firebase or our own?",
                     options=["Auth0", "Firebase", "Custom"], blocked_tasks=["login"])]
    assert cli.publish(tmp_path, setup, "setup").returncode == 0

    queue = cli.json("review", "list", "--tenant", STUDIO, "--json")
    assert sorted((row["kind"], row["id"]) for row in queue) == [("question", "q1"), ("task", "flyer"),
                                                                  ("task", "invoice")]
    question = next(row for row in queue if row["kind"] == "question")
    assert question["decide"] == "publish question.answer" and question["options"] == ["Auth0", "Firebase", "Custom"]
    assert question["context"] == "A) Auth0  B) Firebase  C) Custom"
    flyer = next(row for row in queue if row["id"] == "flyer")
    assert flyer["context"].endswith("draft: We miss you: Come back!"), flyer["context"]

    assert cli("review", "reject", "flyer", "--tenant", STUDIO, "--type", "never").returncode == 0
    assert cli("review", "approve", "q1", "--tenant", STUDIO, "--answer", "ask Dana").returncode == 0
    refused = cli("review", "approve", "q1", "--tenant", STUDIO, "--answer", "A")
    assert refused.returncode == 1 and "already answered" in refused.stderr
    queue = cli.json("review", "list", "--tenant", STUDIO, "--json")
    assert sorted((row["kind"], row["id"], row["what"]) for row in queue) == [
        ("answer", "q1", "ask Dana"), ("task", "invoice", "Chase the March invoice")]
    assert cli.json("tasks", "show", "flyer", "--json")["status"] == "cancelled"
    decisions = cli.json("review", "log", "--tenant", STUDIO, "--json")
    assert [(row["kind"], row["subject"], row["decision"], row["rejection_type"], row["for_review"])
            for row in decisions] == [("task", "flyer", "rejected", "never", False),
                                      ("question", "q1", None, None, True)]
