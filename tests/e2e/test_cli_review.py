"""`loopline review list` through the command (embedded deployment): an escalated task and an open escalation
question wait for the owner, with what to decide with; an answer that picked no option stays, to be read."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
from tests.e2e.cli import Cli

T0 = "2026-03-02T14:00:00Z"
STUDIO = "studio"


def test_the_review_queue_lists_what_waits_for_the_owner(embedded_cli: Cli, tmp_path: Path) -> None:
    cli = embedded_cli
    setup = [command("c1", "task.create", T0, STUDIO, task_id="auth", title="Implement user authentication"),
             command("c2", "task.create", T0, STUDIO, task_id="invoice", title="Chase the March invoice"),
             command("c3", "task.update", T0, STUDIO, task_id="invoice", status="escalated"),
             command("c4", "question.ask", "2026-03-02T14:05:00Z", STUDIO, question_id="q1", task_id="auth",
                     asker="Build agent", stuck_on="Which OAuth provider", question="Auth0, Firebase or our own?",
                     options=["Auth0", "Firebase", "Custom"], blocked_tasks=["login"])]
    assert cli.publish(tmp_path, setup, "setup").returncode == 0

    queue = cli.json("review", "list", "--tenant", STUDIO, "--json")
    assert [(row["kind"], row["id"]) for row in queue] == [("task", "invoice"), ("question", "q1")]
    assert queue[1]["decide"] == "publish question.answer" and queue[1]["options"] == ["Auth0", "Firebase", "Custom"]

    answer = [command("a1", "question.answer", "2026-03-02T15:00:00Z", STUDIO, question_id="q1", answer="ask Dana")]
    assert cli.publish(tmp_path, answer, "answer").returncode == 0
    queue = cli.json("review", "list", "--tenant", STUDIO, "--json")
    assert [(row["kind"], row["id"], row["what"]) for row in queue] == [
        ("task", "invoice", "Chase the March invoice"), ("answer", "q1", "ask Dana")]
    assert "review queue" in cli("review", "list").stdout
