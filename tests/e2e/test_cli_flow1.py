"""Seed 000 Flow 1 through the `loopline` command in a subprocess, asserting on its JSON output."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from eventsourcing.utils import get_topic

from loopline.adapters.config import Settings
from loopline.runtime.bootstrap import build
from loopline.runtime.stores import READ_MODELS
from tests.conftest import command, signal
from tests.e2e.cli import Cli

FLOW_1 = [
    command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul",
            context={"conversation_id": "conv_123"}),
    command("m2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email",
            to="rahul@company.com", thread_id="gmail_thread_xyz", summary="Sent scheduling email to Rahul"),
]
REPLY = [signal("g1", "email.received", "2026-03-17T09:00:00Z", sender="RAHUL@company.com", thread_id="gmail_thread_xyz")]
COMPLETE = [command("m3", "task.complete", "2026-03-17T09:05:00Z", task_id="task_abc", summary="Booked Thursday 3pm")]


def test_flow_1_follow_up_reply_and_completion_through_the_cli(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, FLOW_1, "start").returncode == 0
    [loop] = cli.json("loops", "list", "--open")
    assert (loop["task_id"], loop["channel"], loop["deadline"]) == ("task_abc", "email", "2026-03-16T10:00:00Z")

    assert cli("tick", "--now", "2026-03-16T10:00:01Z").returncode == 0
    assert cli.json("tick", "--now", "2026-03-16T10:00:01Z")["actions"] == []  # the same tick again does nothing
    loops = {row["loop_id"]: row for row in cli.json("loops", "list")}
    assert loops[loop["loop_id"]]["resolved_by"] == "expired"
    followup = loops[loop["loop_id"] + "/followup"]
    assert not followup["resolved"] and followup["watch"] == loop["watch"]

    assert cli.publish(tmp_path, REPLY, "reply").returncode == 0
    task = cli.json("tasks", "show", "task_abc")
    assert task["status"] == "executing"
    assert [item["signal_id"] for item in task["inbox_items"]] == ["g1"]
    assert cli.json("loops", "list", "--open") == []

    folder = cli.json("tasks", "files", "task_abc")
    assert folder["root"] == "tasks/task_abc/"
    assert [f["path"] for f in folder["files"]] == [
        "context.json", "conversation.md", "log.md", "progress.md", "inbox/0001_g1.json",
    ]
    # The follow-up's draft decision and the follow-up; the agent's email and Rahul's reply carried no text.
    assert [t["author"] for t in task["conversation"]] == ["system", "agent"]
    reply = json.loads(cli.json("tasks", "files", "task_abc", "inbox/0001_g1.json")["content"])
    assert reply["data"]["sender"] == "rahul@company.com"  # the edge keeps a sender as its mailbox
    assert "Sent follow-up to rahul@company.com" in cli.json("tasks", "files", "task_abc", "progress.md")["content"]
    context = cli.json("tasks", "context", "user_xyz", "--task", "task_abc", "--now", "2026-03-17T09:01:00Z")
    [active] = context["active_tasks"]
    assert (active["task_id"], active["status"]) == ("task_abc", "executing")
    assert [loop["loop_id"] for loop in active["expired_loops"]] == [loop["loop_id"]]
    assert context["task"]["progress_md"].startswith("# Schedule meeting with Rahul")

    assert cli.publish(tmp_path, COMPLETE, "complete").returncode == 0
    task = cli.json("tasks", "show", "task_abc")
    assert task["status"] == "completed"
    assert [n["kind"] for n in task["notifications_sent"]] == ["followup_sent", "task_completed"]
    assert "conv_123" in task["notifications_sent"][-1]["message"]
    assert cli.json("tasks", "files", "task_abc")["root"] == "tasks/archive/task_abc/"
    assert cli.json("tasks", "context", "user_xyz")["active_tasks"] == []

    trail = cli.json("audit", "task_abc")
    assert {"Task.Created", "OpenLoop.Resolved", "Task.SignalReceived", "Task.Completed"} <= {r["event"] for r in trail}
    assert all(row["summary"] for row in trail)


def stored_topics(cli: Cli) -> Counter[str]:
    """How many events of each type the deployment's event store holds."""
    system = build(Settings.load(cli.environ, config_file=cli.home / "loopline.toml"))
    try:
        return Counter(n.topic for n in system.app.recorder.select_notifications(start=1, limit=1_000_000))
    finally:
        system.close()


def test_rebuild_gives_back_the_same_read_models(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, FLOW_1, "start")
    cli("tick", "--now", "2026-03-16T10:00:01Z")
    cli.publish(tmp_path, REPLY, "reply")
    def read_models() -> list:
        files = cli.json("tasks", "files", "task_abc")
        contents = [cli.json("tasks", "files", "task_abc", f["path"]) for f in files["files"]]
        return [cli.json("tasks", "list"), cli.json("loops", "list"), cli.json("audit", "task_abc"), files, contents]

    before = read_models()
    rebuilt = cli.json("projections", "rebuild")
    assert set(rebuilt["rebuilt"]) == {"tasks", "open_loops", "proactive_runs", "timeline", "task_memory", "tenants",
                                      "limits", "suppressions", "pauses", "upstream_health", "model_usage",
                                      "scorecard", "loop_metrics", "questions", "reflections", "routines",
                                      "proposals"}
    stored = stored_topics(cli)
    followed = {p.name: {get_topic(cls) for cls in p.handlers} for p in READ_MODELS}
    assert rebuilt["events_in_store"] == sum(stored.values())
    read = sum(n for topic, n in stored.items() if topic in set().union(*followed.values()))
    expected = {name: sum(stored[topic] for topic in topics) for name, topics in followed.items()}
    if cli.scale:  # the running worker's leader may project part of it first
        assert rebuilt["events_read"] <= read
        assert all(0 <= rebuilt["applied"][name] <= n for name, n in expected.items())
    else:
        assert (rebuilt["events_read"], rebuilt["applied"]) == (read, expected)
    # \s+: the console wraps the sentence once the list of read models is long
    said = re.search(r"read\s+(\d+)\s+of\s+the\s+(\d+)\s+events\s+in\s+the\s+store",
                     cli("projections", "rebuild").stdout)
    assert said and int(said[2]) == sum(stored.values()) and (cli.scale or int(said[1]) == read)
    cli.settle()
    assert read_models() == before
    assert all(row["lag"] == 0 for row in cli.json("projections", "status"))


def test_bad_lines_are_rejected_with_line_numbers_and_the_rest_applied(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        json.dumps(FLOW_1[0]) + "\n"
        + "{not json\n"
        + json.dumps(command("m9", "task.create", "2026-03-13T10:00:00Z", title="no id")) + "\n"
        + json.dumps({**FLOW_1[1], "type": "task.explode"}) + "\n"
        + json.dumps(FLOW_1[1]) + "\n"
    )
    result = cli("publish", str(path))
    assert result.returncode == 1
    assert "line 2: not valid JSON" in result.stderr
    assert "line 3: data.task_id: Field required" in result.stderr
    assert "line 4: type: unknown command type 'task.explode'" in result.stderr
    assert [t["task_id"] for t in cli.json("tasks", "list")] == ["task_abc"]
    assert len(cli.json("loops", "list", "--open")) == 1


def test_repeated_message_id_is_acknowledged_and_ignored(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, FLOW_1, "first")
    before = cli.json("audit", "task_abc")
    again = cli("publish", "-", "--json", stdin="".join(json.dumps(m) + "\n" for m in FLOW_1))
    assert again.returncode == 0
    if not cli.scale:  # at scale the workers, not publish, recognise the repeat
        assert json.loads(again.stdout)["duplicates_ignored"] == 2
    assert len(cli.json("loops", "list")) == 1
    assert cli.json("audit", "task_abc") == before


def test_usage_errors_say_what_to_do(embedded_cli: Cli, tmp_path: Path) -> None:
    """Embedded: the CLI reads its arguments the same way whatever the deployment."""
    bad_time = embedded_cli("tick", "--now", "tomorrow")
    assert bad_time.returncode == 2 and "RFC 3339" in bad_time.stderr
    missing = embedded_cli("publish", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    unknown = embedded_cli("tasks", "show", "task_zzz")
    assert unknown.returncode == 1 and "loopline tasks list" in unknown.stderr


def test_demo_plays_flow_1_then_a_gyms_month_and_prints_its_scorecard(tmp_path: Path) -> None:
    """The demo always runs embedded, whatever the environment says; its home answers queries afterwards."""
    result = Cli(tmp_path / "home")("demo", "--home", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    assert "rahul@company.com hasn't replied to my email of 13 Mar 2026 10:00 UTC. I sent a follow-up" in result.stdout
    assert "Meeting booked with Rahul for Thursday 3pm" in result.stdout
    for told in ("owner approved the task", "Emailed leo@example.com (touch 3)", "Emailed eve@example.com (reply)",
                 "ben@example.com asked to hear no more", "verbal_commitment became retained", "The gym's scorecard"):
        assert told in result.stdout, told

    [card] = Cli(tmp_path / "demo").json("scorecard", "--tenant", "iron_temple", "--period", "2026-04")
    assert card["numbers"]["outcomes"] == {"churn_risk": {"opted_out": 1, "retained": 1, "unresponsive": 1},
                                           "lead_followup": {"converted": 1}, "payment_recovery": {"recovered": 1}}
    assert (card["numbers"]["members_retained"], card["numbers"]["revenue_retained"]) == (3, 150 + 150 + 89)
    assert "1 opted_out, 1 retained, 1 unresponsive" in result.stdout
