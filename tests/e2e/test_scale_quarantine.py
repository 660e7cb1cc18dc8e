"""At scale, with two workers: a poison message is parked (and sent to `<topic>.dlq`), a read-model
event that fails in the leader is parked, and every other tenant's messages are processed and
projected; after the fix, `loopline parked retry` applies each once.

The faults are injected with LOOPLINE_TEST_FAULTS (tests/hooks/loopline_hooks.py): the real poison values
are refused at the input edge by this version, so only a fault can make a valid message fail here.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter

from loopline.adapters.kafka_log import Topics
from loopline.domain.task import Task
from loopline.projections.tasks import tasks
from tests.conftest import command
from tests.e2e.cli import Cli
from tests.e2e.scale import ScaleDeployment
from tests.e2e.test_scale_workers import (  # noqa: F401 - deploy is a fixture
    AT, Deploy, consume_all, deploy, email_follow_up, group_members, produce_raw,
)
from tests.hooks import hooked
from tests.waiting import eventually

FAULTS = "handler:POISON-IN-HANDLER,projection:POISON-IN-READ-MODEL"


def loopline(deployment: ScaleDeployment, *args: str) -> subprocess.CompletedProcess[str]:
    """The `loopline` command as an operator runs it against this deployment (without the faults: the fix)."""
    environ = {name: value for name, value in deployment.environ.items() if name != "LOOPLINE_TEST_FAULTS"}
    return Cli(deployment.home, environ).run(args)


def task_titles(deployment: ScaleDeployment) -> dict[str, str]:
    return {row["tenant"]: row["title"] for row in deployment.rows(tasks)}


def test_poison_is_parked_at_scale_while_every_other_tenant_goes_on_and_retry_applies_it_once(deploy: Deploy) -> None:
    deployment = deploy()
    deployment.environ.update(hooked(LOOPLINE_TEST_FAULTS=FAULTS))
    workers = [deployment.start_worker(), deployment.start_worker()]
    eventually(lambda: group_members(deployment) == 2, "both workers to join the consumer group")
    tenants = [f"tenant{n:02d}" for n in range(24)]
    messages = [m for tenant in tenants for m in email_follow_up(tenant)[:2]]
    messages.insert(10, command("h-1", "task.create", AT, "handler_victim", task_id="t", title="POISON-IN-HANDLER"))
    messages.insert(30, command("p-1", "task.create", AT, "read_model_victim", task_id="t", title="POISON-IN-READ-MODEL"))
    deployment.publish(messages)
    deployment.settle(inbound=len(messages))  # fails if a worker died

    assert all(worker.process.poll() is None for worker in workers)
    titles = task_titles(deployment)
    assert sorted(titles) == sorted(tenants)  # every healthy tenant projected; neither victim
    assert Counter(event.tenant for event in deployment.events(Task.Created))["handler_victim"] == 0
    listed = json.loads(loopline(deployment, "parked", "list", "--json").stdout)
    (message,) = [row for row in listed if row["parked"] == "message"]
    assert message["tenant"] == "handler_victim" and message["error"].startswith("InjectedFault")
    topics = Topics(deployment.environ["LOOPLINE_KAFKA_TOPIC_PREFIX"])
    assert message["source"].startswith(f"{topics.commands}:")
    read_model = [row for row in listed if row["parked"] == "read model event"]
    assert {row["tenant"] for row in read_model} == {"read_model_victim"}
    status = json.loads(loopline(deployment, "status", "--json").stdout)
    assert status["parked"] == {"messages": 1, "read_model_events": len(read_model), "deliveries": 0}

    [dead] = consume_all(deployment.environ["LOOPLINE_KAFKA"], topics.dlq(topics.commands), expected=1)
    headers = {name: value.decode() for name, value in dead.headers}
    assert json.loads(dead.value)["id"] == "h-1" and dead.key == b"handler_victim"
    assert headers["loopline-reason"].startswith("parked: InjectedFault")
    assert headers["loopline-source"] == message["source"] and headers["loopline-parked"] == message["id"]

    # The fix: the operator's command runs without the faults.
    retried = loopline(deployment, "parked", "retry", message["id"])
    assert retried.returncode == 0, retried.stderr
    again = loopline(deployment, "parked", "retry", message["id"])
    assert again.returncode == 1 and "retried already" in again.stderr
    for row in read_model:
        assert loopline(deployment, "parked", "retry", row["id"]).returncode == 0
    eventually(lambda: "handler_victim" in task_titles(deployment), "the retried message to be projected")
    assert task_titles(deployment)["read_model_victim"] == "POISON-IN-READ-MODEL"
    assert Counter(event.tenant for event in deployment.events(Task.Created))["handler_victim"] == 1
    status = json.loads(loopline(deployment, "status", "--json").stdout)
    assert status["parked"] == {"messages": 0, "read_model_events": 0, "deliveries": 0}


def test_the_reported_poison_records_are_dead_lettered_with_their_reasons_while_two_workers_go_on(deploy: Deploy) -> None:
    # The records that once killed every worker taking their partition, produced as raw bytes (not through
    # `publish`, which would refuse them first): each must reach the dead-letter topic with its reason.
    deployment = deploy()
    workers = [deployment.start_worker(), deployment.start_worker()]
    eventually(lambda: group_members(deployment) == 2, "both workers to join the consumer group")
    pairs = [
        (command("x-1", "task.create", AT, "victim", task_id="a", title="Far", expires_in_days=3_000_000), "data.expires_in_days: Input should be less than or equal to 3650"),
        ({**command("x-2", "task.create", AT, "victim", task_id="b", title="Late"), "at": "9999-12-31T23:59:59Z"}, "at: must fall in the years 2000 to 2100"),
        (command("x-3", "action.record", AT, "victim", task_id="c", action="send_contract", resource_id="doc-1",
                 match_fields=["doc-1"]), "data.match_fields: Input should be a valid dictionary"),
        (command("x-4", "task.create", AT, "v" * 201, task_id="d", title="Long tenant"), "tenant: an id is 1 to 128 characters"),
        (command("x-5", "task.create", AT, "victim", task_id="e", title="NUL\x00here"), "data.title: contains U+0000, a control character"),
    ]
    topics = Topics(deployment.environ["LOOPLINE_KAFKA_TOPIC_PREFIX"])
    bootstrap = deployment.environ["LOOPLINE_KAFKA"]
    bad = {json.dumps(message).encode(): reason for message, reason in pairs}
    produce_raw(bootstrap, topics.commands, b"victim", list(bad))
    tenants = [f"tenant{n:02d}" for n in range(24)]
    healthy = [m for tenant in tenants for m in email_follow_up(tenant)[:2]]
    deployment.publish(healthy)
    deployment.settle(inbound=len(healthy))  # fails if a worker died

    assert all(worker.process.poll() is None for worker in workers)
    assert sorted(task_titles(deployment)) == sorted(tenants)
    dead = consume_all(bootstrap, topics.dlq(topics.commands), expected=len(bad))
    assert sorted(record.value for record in dead) == sorted(bad)
    for record in dead:
        reason = dict(record.headers)["loopline-reason"].decode()
        assert bad[record.value] in reason, reason
