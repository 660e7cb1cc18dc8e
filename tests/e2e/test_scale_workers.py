"""The scale deployment with real `loopline run` workers on PostgreSQL and a Kafka-protocol broker.

Each test has its own database and topic prefix; workers are subprocesses that may be killed.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.utils import get_topic

from loopline.adapters.kafka_log import Topics
from loopline.domain import ids
from loopline.domain.inbound import InboundMessage
from loopline.domain.open_loop import OpenLoop
from loopline.domain.task import Task
from loopline.domain.watch_index import WatchIndex
from tests.conftest import command, signal
from tests.e2e.scale import ScaleDeployment
from tests.servers import Broker, Postgres
from tests.waiting import eventually

AT = "2026-03-13T10:00:00Z"
REPLY_AT = "2026-03-14T09:00:00Z"
DEADLINE = "2026-03-20T10:00:00Z"

Deploy = Callable[[], ScaleDeployment]


@pytest.fixture
def deploy(postgres: Postgres, broker: Broker, tmp_path: Path) -> Iterator[Deploy]:
    """Makes scale deployments that share the servers but nothing else; stops their workers afterwards."""
    made: list[ScaleDeployment] = []

    def make() -> ScaleDeployment:
        made.append(ScaleDeployment(postgres, broker, tmp_path / f"home-{len(made)}"))
        return made[-1]

    yield make
    for deployment in made:
        deployment.close()


def group_members(deployment: ScaleDeployment) -> int:
    """Members of the workers' consumer group once it is stable (0 while it rebalances)."""
    from aiokafka.admin import AIOKafkaAdminClient

    async def describe() -> Any:
        admin = AIOKafkaAdminClient(bootstrap_servers=deployment.environ["LOOPLINE_KAFKA"])
        await admin.start()
        try:
            return await admin.describe_consumer_groups([f"{deployment.environ['LOOPLINE_KAFKA_TOPIC_PREFIX']}loopline-workers"])
        finally:
            await admin.close()

    [response] = asyncio.run(describe())
    [group] = response.groups
    state, members = group[2], group[5]
    return len(members) if state == "Stable" else 0


def email_follow_up(tenant: str) -> list[dict[str, Any]]:
    """An agent emails a contact (which opens a loop) and the contact replies on the same thread."""
    contact = f"contact@{tenant.replace('_', '-')}.example"  # a domain name has no underscore: the edge refuses one
    return [
        command(f"{tenant}-c1", "task.create", AT, tenant, task_id="task_a", title=f"Meet {tenant}", contact=contact),
        command(f"{tenant}-c2", "action.record", AT, tenant, task_id="task_a", action="send_email", to=contact,
                thread_id=f"thread-{tenant}"),
        signal(f"{tenant}-s1", "email.received", REPLY_AT, tenant, sender=contact.upper(),
               thread_id=f"thread-{tenant}"),
    ]


def resolutions_per_loop(deployment: ScaleDeployment) -> Counter[tuple[Any, str]]:
    return Counter((event.originator_id, event.resolved_by) for event in deployment.events(OpenLoop.Resolved))


def test_two_workers_share_partitions_and_apply_each_message_once(deploy: Deploy) -> None:
    loopline = deploy()
    workers = [loopline.start_worker(), loopline.start_worker()]
    eventually(lambda: group_members(loopline) == 2, "both workers to join the consumer group")
    tenants = [f"tenant{n:02d}" for n in range(40)]
    # Registration first, replies after: a reply on the signals topic must find its loop already committed.
    conversations = {tenant: email_follow_up(tenant) for tenant in tenants}
    loopline.publish([m for tenant in tenants for m in conversations[tenant][:2]])
    eventually(lambda: len(loopline.events(OpenLoop.Registered)) == len(tenants), "every loop to be registered")
    loopline.publish([conversations[tenant][2] for tenant in tenants])
    loopline.settle(inbound=3 * len(tenants))

    assert all(worker.applied() > 0 for worker in workers), [worker.log() for worker in workers]
    assert sum(worker.applied() for worker in workers) == 3 * len(tenants)
    rows = loopline.read_models()
    assert sorted((row["tenant"], row["task_id"]) for row in rows["tasks"]) == [(t, "task_a") for t in tenants]
    assert sorted(row["tenant"] for row in rows["open_loops"] if row["resolved_by"] == "signal_match") == tenants
    loop_ids = {ids.loop_id(tenant, "task_a/send_email/1") for tenant in tenants}
    assert resolutions_per_loop(loopline) == {(loop_id, "signal_match"): 1 for loop_id in loop_ids}
    assert len(loopline.events(InboundMessage.Received)) == 3 * len(tenants)
    counts = loopline.event_counts()
    once_per_tenant = (Task.Created, Task.ActionRecorded, OpenLoop.Registered, OpenLoop.Resolved, Task.SignalReceived)
    assert {cls.__qualname__: counts[get_topic(cls)] for cls in once_per_tenant} == dict.fromkeys(
        (cls.__qualname__ for cls in once_per_tenant), len(tenants)
    )


def busy_tenant_commands(n: int) -> list[dict[str, Any]]:
    """Two tasks with an email and a Slack loop, a note, some completions (delivered notices) and a repeated id."""
    tenant = f"tenant{n:03d}"
    messages = [
        *email_follow_up(tenant)[:2],
        command(f"{tenant}-c3", "task.create", AT, tenant, task_id="task_b", title="Ping on Slack"),
        command(f"{tenant}-c4", "action.record", AT, tenant, task_id="task_b", action="send_slack_dm",
                slack_user_id=f"U{n}", channel_id=f"D{n}", ts="1700000000.000100"),
        command(f"{tenant}-c5", "task.update", AT, tenant, task_id="task_a", notes="waiting for a reply"),
    ]
    if n % 4 == 0:
        messages.append(command(f"{tenant}-c6", "task.complete", AT, tenant, task_id="task_b", summary="sorted"))
    if n % 5 == 0:
        messages.append(messages[1])  # delivered twice: acknowledged and ignored
    return messages


def busy_tenant_replies(n: int) -> list[dict[str, Any]]:
    tenant = f"tenant{n:03d}"
    replies = []
    if n % 2 == 0:
        replies.append(email_follow_up(tenant)[2])
    if n % 3 == 0:
        replies.append(signal(f"{tenant}-s2", "slack.message", REPLY_AT, tenant, slack_user_id=f"U{n}",
                              channel_id=f"D{n}", ts="1700000100.000200"))
    return replies


def assert_same_outcome(actual: ScaleDeployment, expected: ScaleDeployment) -> None:
    """Same read-model rows and the same number of events of each type."""
    for (table, rows), expected_rows in zip(actual.read_models().items(), expected.read_models().values(), strict=True):
        extra = [row for row in rows if row not in expected_rows]
        missing = [row for row in expected_rows if row not in rows]
        assert not extra and not missing, f"{table}: {len(extra)} rows too many {extra[:2]}, {len(missing)} missing {missing[:2]}"
    assert actual.event_counts() == expected.event_counts()


@pytest.mark.slow
def test_worker_killed_mid_batch_and_restarted_loses_and_duplicates_nothing(deploy: Deploy) -> None:
    tenants = range(300)
    commands = [message for n in tenants for message in busy_tenant_commands(n)]
    replies = [message for n in tenants for message in busy_tenant_replies(n)]
    distinct = len({(m["tenant"], m["id"]) for m in commands})
    reference, crashed = deploy(), deploy()
    for loopline in (reference, crashed):
        loopline.publish(commands)
    reference.start_worker()
    victim = crashed.start_worker()

    eventually(lambda: victim.applied() > 0, "the worker to apply its first batch")
    victim.kill()  # while it applies the next batch, in chunks, with its Kafka offsets not yet committed
    processed = sum(row["next"] for row in crashed.system.input_lag())
    assert 0 < processed < len(commands), "the kill should land after some but before all messages were applied"
    crashed.start_worker()
    for loopline in (reference, crashed):
        loopline.settle(inbound=distinct)
    # Replies only once every loop is registered: across topics Kafka keeps no order.
    for loopline in (reference, crashed):
        loopline.publish(replies)
    for loopline in (reference, crashed):
        loopline.settle(inbound=distinct + len(replies))

    assert_same_outcome(crashed, reference)
    notices = sorted(crashed.outbox(), key=lambda notice: notice["key"])
    assert len(notices) == len({notice["key"] for notice in notices})
    completed = [n for n in tenants if n % 4 == 0]
    woken = [n for n in tenants if n % 2 == 0] + [n for n in tenants if n % 3 == 0 and n % 4 != 0]  # replies to open loops
    assert Counter(notice["kind"] for notice in notices) == {"task_completed": len(completed), "task_signal": len(woken)}
    assert notices == sorted(reference.outbox(), key=lambda notice: notice["key"])


@pytest.mark.slow
def test_processing_resumes_after_the_broker_restarts(deploy: Deploy, broker: Broker) -> None:
    if broker.external:
        pytest.skip("the suite restarts only the broker it started itself")
    loopline = deploy()
    loopline.start_worker()
    # Fewer messages per partition after the restart than before: the worker recognises the recreated
    # log by its ending before the processed position (see PartitionPositions).
    before, after = [f"before{n:02d}" for n in range(40)], [f"after{n:02d}" for n in range(8)]
    loopline.publish([m for tenant in before for m in email_follow_up(tenant)[:2]])
    loopline.settle(inbound=2 * len(before))

    try:
        broker.restart()  # memory storage: the topics and every message in them are gone
    finally:
        if broker.process is None:
            broker.start()
    loopline.reconnect()
    # Replies to the loops opened before the restart, and new tenants' first commands.
    replies = [email_follow_up(tenant)[2] for tenant in before]
    loopline.publish(replies + [message for tenant in after for message in email_follow_up(tenant)[:2]])
    loopline.settle(inbound=3 * len(before) + 2 * len(after))

    rows = loopline.read_models()
    assert sorted(row["tenant"] for row in rows["tasks"]) == sorted(before + after)
    resolved_by = {row["tenant"]: row["resolved_by"] for row in rows["open_loops"]}
    assert resolved_by == {**{tenant: "signal_match" for tenant in before}, **{tenant: None for tenant in after}}


def test_register_then_immediately_signal_never_misses_a_match(deploy: Deploy) -> None:
    loopline = deploy()
    loopline.start_worker()
    loopline.start_worker()
    eventually(lambda: group_members(loopline) == 2, "both workers to join the consumer group")
    repository = loopline.system.app.repository
    unsignalled: dict[str, Any] = {}

    def signal_registered_loops() -> bool:
        """Sends each loop's reply the moment its registration is committed in the event store."""
        for tenant, loop_id in list(unsignalled.items()):
            try:
                repository.get(loop_id)
            except AggregateNotFoundError:
                continue
            loopline.publish([signal(f"{tenant}-s1", "email.received", REPLY_AT, tenant, sender="them@example.com",
                                     thread_id=f"thread-{tenant}")])
            del unsignalled[tenant]
        return not unsignalled

    tenants = [f"racer{n:02d}" for n in range(50)]
    for tenant in tenants:
        loopline.publish([
            command(f"{tenant}-c1", "task.create", AT, tenant, task_id="task_a", title="Race"),
            command(f"{tenant}-c2", "loop.register", AT, tenant, task_id="task_a", loop_id="reply", channel="email",
                    watch={"sender": "them@example.com", "thread_id": f"thread-{tenant}"}, deadline=DEADLINE,
                    if_unresolved="notify_user"),
        ])
        unsignalled[tenant] = ids.loop_id(tenant, "reply")
        signal_registered_loops()
    eventually(signal_registered_loops, "every registration to be committed")
    loopline.settle(inbound=3 * len(tenants))

    loops = loopline.read_models()["open_loops"]
    assert sorted((row["tenant"], row["resolved_by"]) for row in loops) == [(t, "signal_match") for t in tenants]
    assert set(resolutions_per_loop(loopline).values()) == {1}


def produce_raw(bootstrap: str, topic: str, key: bytes, values: list[bytes]) -> list[str]:
    """Sends bytes as they are, in order, to one partition; returns each message's "topic:partition:offset"."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        sent = [producer.send(topic, key=key, value=value).get(timeout=30) for value in values]
    finally:
        producer.close()
    return [f"{meta.topic}:{meta.partition}:{meta.offset}" for meta in sent]


def consume_all(bootstrap: str, topic: str, expected: int) -> list[Any]:
    """Every record of a topic from the beginning; waits for `expected` of them, then briefly for any extra."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        records: list[Any] = []
        deadline = time.monotonic() + 30
        while len(records) < expected and time.monotonic() < deadline:
            records += [r for batch in consumer.poll(timeout_ms=200).values() for r in batch]
        records += [r for batch in consumer.poll(timeout_ms=500).values() for r in batch]
        return records
    finally:
        consumer.close()


def test_malformed_messages_go_to_the_dlq_while_valid_ones_are_applied(deploy: Deploy) -> None:
    loopline = deploy()
    tenant = "dlq_tenant"
    topic = Topics(loopline.environ["LOOPLINE_KAFKA_TOPIC_PREFIX"]).commands
    bootstrap = loopline.environ["LOOPLINE_KAFKA"]
    valid = [json.dumps(message).encode() for message in email_follow_up(tenant)[:2]] + [
        json.dumps(command("c3", "task.create", AT, tenant, task_id="task_b", title="Second")).encode(),
    ]
    bad = {
        b'{"kind": "command", "id": "c9", "type": "task.create", ': "not valid JSON",
        json.dumps(command("c4", "task.create", AT, tenant, task_id="task_c")).encode(): "data.title",
        json.dumps(command("c5", "task.explode", AT, tenant, task_id="a")).encode(): "unknown command type 'task.explode'",
        json.dumps(signal("s1", "email.received", AT, tenant, sender="x@example.com")).encode(): "a signal on",
    }
    interleaved = [valid[0], *list(bad)[:2], valid[1], *list(bad)[2:], valid[2]]
    loopline.system  # noqa: B018 - creates the topics
    sources = dict(zip(interleaved, produce_raw(bootstrap, topic, tenant.encode(), interleaved), strict=True))
    worker = loopline.start_worker()  # after producing: all of them arrive in one fetched batch
    loopline.settle(inbound=len(valid))

    assert "applied 3 (0 rejected, 0 parked), 0 duplicate(s), 4 dead-lettered" in worker.log()
    assert sorted(row["task_id"] for row in loopline.read_models()["tasks"]) == ["task_a", "task_b"]
    dead = consume_all(bootstrap, f"{topic}.dlq", expected=len(bad))  # sent by the leader once the batch committed
    assert sorted(record.value for record in dead) == sorted(bad)
    keys = set()
    for record in dead:
        headers = {name: value.decode() for name, value in record.headers}
        assert bad[record.value] in headers["loopline-reason"], headers
        assert headers["loopline-source"] == sources[record.value]
        assert record.key == tenant.encode()
        keys.add(headers["loopline-key"])
    assert len(keys) == len(bad)  # a reader drops a repeat (after a crash between flush and tracking) by this key


EARLY_REPLIES = 10
"""Replies of the test below applied before their emails are even published: the race, exercised on every run."""


@pytest.mark.slow
def test_replies_published_right_behind_their_emails_resolve_every_loop_with_two_workers(deploy: Deploy) -> None:
    # Commands and signals travel on two topics, so many replies are applied before the email they answer.
    loopline = deploy()
    loopline.start_worker(), loopline.start_worker()
    eventually(lambda: group_members(loopline) == 2, "both workers to join the consumer group")
    tenants = [f"tenant{n:04d}" for n in range(1500)]
    # Some replies surely come first (applied before their emails are published), the rest race their emails.
    early = {tenant: email_follow_up(tenant) for tenant in tenants[:EARLY_REPLIES]}
    loopline.publish([messages[-1] for messages in early.values()])
    loopline.settle(inbound=EARLY_REPLIES)
    loopline.publish([message for tenant in tenants
                      for message in (early[tenant][:-1] if tenant in early else email_follow_up(tenant))])
    loopline.settle(inbound=3 * len(tenants), timeout=300)

    resolved = {event.originator_id: (event.resolved_by, event.signal_ref) for event in loopline.events(OpenLoop.Resolved)}
    assert resolved == {ids.loop_id(tenant, "task_a/send_email/1"): ("signal_match", f"{tenant}-s1") for tenant in tenants}
    received = Counter((event.originator_id, event.signal_ref) for event in loopline.events(Task.SignalReceived))
    assert received == {(ids.task_id(tenant, "task_a"), f"{tenant}-s1"): 1 for tenant in tenants}
    assert len(loopline.events(WatchIndex.SignalDelivered)) >= EARLY_REPLIES  # replies kept for their emails' loops
