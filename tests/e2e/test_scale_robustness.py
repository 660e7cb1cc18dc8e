"""A scale worker's leader never outlives its worker nor holds the lock while stuck, and a recreated
Kafka log is processed from its beginning however long it has grown."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from loopline.adapters.kafka_log import Topics
from loopline.domain.inbound import InboundMessage
from loopline.domain.task import Task
from tests.conftest import command
from tests.e2e.scale import PARTITIONS, ScaleDeployment
from tests.e2e.test_scale_workers import AT, Deploy, consume_all, deploy, email_follow_up  # noqa: F401 - the fixture
from tests.hooks import hooked
from tests.servers import Broker
from tests.waiting import eventually

__all__ = ["deploy"]


def completed_tasks(tenants: list[str]) -> list[dict]:
    """Each tenant creates and completes a task: one `task_completed` notice each in the outbox."""
    return [m for tenant in tenants for m in (
        command(f"{tenant}-c1", "task.create", AT, tenant, task_id="task_a", title=f"Call {tenant}"),
        command(f"{tenant}-c2", "task.complete", AT, tenant, task_id="task_a", summary="done"),
    )]


def gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaped yet counts as gone: it holds no sockets)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def hang_flag(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "leader-hangs"


def hung_leader(loopline: ScaleDeployment, flag: Path) -> int:
    """Waits for the first leader to block for good (LOOPLINE_TEST_LEADER_HANG); returns its pid."""
    eventually(lambda: flag.exists() and flag.read_text() != "", "a leader to take the lock and hang")
    return int(flag.read_text())


@pytest.mark.slow
def test_a_killed_workers_blocked_leader_dies_with_it_and_another_worker_delivers(deploy: Deploy, hang_flag: Path) -> None:
    loopline = deploy()
    loopline.environ.update(hooked(LOOPLINE_TEST_LEADER_HANG=str(hang_flag)))
    first = loopline.start_worker()
    leader = hung_leader(loopline, hang_flag)
    second = loopline.start_worker()
    tenants = [f"tenant{n:02d}" for n in range(6)]
    loopline.publish(completed_tasks(tenants))
    eventually(lambda: len(loopline.events(Task.Completed)) == len(tenants), "the workers to apply every command")
    time.sleep(2)
    assert loopline.outbox() == [], "the hung leader holds the lock: nothing should be delivered yet"

    first.kill()
    killed = time.monotonic()
    eventually(lambda: gone(leader), "the leader to die with its worker", timeout=5)
    eventually(lambda: len(loopline.outbox()) == len(tenants), "the other worker to deliver", timeout=30)

    assert time.monotonic() - killed < 30
    assert [e["pid"] for e in first.events("lead.taken")] == [leader]
    assert second.events("lead.taken")
    assert sorted(notice["kind"] for notice in loopline.outbox()) == ["task_completed"] * len(tenants)
    loopline.settle(inbound=2 * len(tenants))


@pytest.mark.slow
def test_a_stuck_leader_gives_up_the_lock_and_a_new_one_delivers(deploy: Deploy, hang_flag: Path) -> None:
    loopline = deploy()
    loopline.environ.update(hooked(LOOPLINE_TEST_LEADER_HANG=str(hang_flag)))
    loopline.environ["LOOPLINE_LEADER_STALL_TIMEOUT"] = "5"
    worker = loopline.start_worker()
    leader = hung_leader(loopline, hang_flag)
    tenants = [f"tenant{n:02d}" for n in range(4)]
    loopline.publish(completed_tasks(tenants))

    # How long it was let hang is the worker's own measure (`stalled_seconds`, below): this test's clock starts only
    # when it sees the leader's flag, a poll after the leader stopped, so it may count a little under the timeout.
    eventually(lambda: gone(leader), "the stuck leader to exit", timeout=15)
    eventually(lambda: len(loopline.outbox()) == len(tenants), "a new leader to deliver", timeout=30)
    loopline.settle(inbound=2 * len(tenants))

    assert worker.process.poll() is None, "the worker goes on with a new leader"
    [stalled] = worker.events("leader.stalled")
    assert stalled["pid"] == leader and stalled["stalled_seconds"] >= 5
    assert [e["stuck_pid"] for e in worker.events("leader.restarted")] == [leader]
    assert "in hang_once" in worker.log()  # where it was stuck, for the operator


def delete_topics(bootstrap: str, names: list[str]) -> None:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="loopline-test")
    try:
        admin.delete_topics(names)
    finally:
        admin.close()


@pytest.mark.slow
def test_a_recreated_log_longer_than_the_processed_position_is_processed_from_its_beginning(
    deploy: Deploy, broker: Broker
) -> None:
    loopline = deploy()
    before = [f"before{n:02d}" for n in range(8)]
    topics = processed_then_deleted(loopline, before)
    # The new log outgrows the old one on every partition before any worker reads it, and repeats
    # two messages the old log had (the same tenant and id: acknowledged, not applied again).
    after = [f"after{n:02d}" for n in range(3 * len(before))]
    repeated = email_follow_up(before[0])[:2]
    republished = repeated + [m for tenant in after for m in email_follow_up(tenant)[:2]]
    for message in republished:  # one record batch each, so the broker's end offsets are exact
        loopline.publish([message])
    grown = Counter(r.partition for r in consume_all(loopline.environ["LOOPLINE_KAFKA"], topics.commands, len(republished)))
    processed = {row["source"]: row["next"] for row in loopline.system.input_lag()}
    assert all(grown[p] > processed[f"{topics.commands}[{p}]"] > 0 for p in range(PARTITIONS)), (grown, processed)

    restarted = loopline.start_worker()
    loopline.settle(inbound=2 * len(before) + 2 * len(after))

    assert "the log was recreated" in restarted.log()
    tasks = Counter(row["tenant"] for row in loopline.read_models()["tasks"])
    assert tasks == Counter(before + after)
    created = Counter(event.originator_id for event in loopline.events(Task.Created))
    assert len(created) == len(before) + len(after) and set(created.values()) == {1}
    received = Counter((event.tenant, event.ref) for event in loopline.events(InboundMessage.Received))
    assert len(received) == 2 * len(before) + 2 * len(after) and set(received.values()) == {1}


def _topics_exist(loopline: ScaleDeployment, names: list[str]) -> bool:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=loopline.environ["LOOPLINE_KAFKA"], client_id="loopline-test")
    try:
        return bool(set(names) & set(admin.list_topics()))
    finally:
        admin.close()


@pytest.mark.slow
def test_an_assignment_the_broker_could_not_answer_is_checked_before_any_record_is_applied(
    deploy: Deploy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a broker restart, asking where the logs end may fail inside the rebalance listener
    (aiokafka logs and swallows it). The partitions must still be checked against their stored
    positions before their records are applied: otherwise a recreated log's records at offsets the old
    log had already processed would be skipped as done."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.errors import KafkaTimeoutError

    from loopline.adapters.kafka_worker import KafkaWorker

    loopline = deploy()
    before = [f"before{n:02d}" for n in range(12)]
    topics = processed_then_deleted(loopline, before)
    after = [f"after{n:02d}" for n in range(2)]  # a new log shorter than the processed positions
    loopline.publish([m for tenant in after for m in email_follow_up(tenant)[:2]])

    failures = []
    end_offsets = AIOKafkaConsumer.end_offsets

    async def unanswered_once(self: AIOKafkaConsumer, partitions: Any) -> Any:
        if not failures:
            failures.append(partitions)
            raise KafkaTimeoutError("the broker is still starting")
        return await end_offsets(self, partitions)

    monkeypatch.setattr(AIOKafkaConsumer, "end_offsets", unanswered_once)
    stop = asyncio.Event()
    consumer = KafkaWorker(loopline.system.bus, loopline.environ["LOOPLINE_KAFKA"], topics)

    async def consume_until_recorded() -> None:
        consuming = asyncio.create_task(consumer.run(stop))
        deadline = time.monotonic() + 60
        while loopline.inbound_count() < 2 * (len(before) + len(after)) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        stop.set()
        await consuming

    asyncio.run(consume_until_recorded())
    assert failures, "the listener never asked where the logs end"
    assert loopline.inbound_count() == 2 * (len(before) + len(after))


def processed_then_deleted(loopline: ScaleDeployment, tenants: list[str]) -> Topics:
    """A worker processes each tenant's first two messages and stops; then the input topics are deleted."""
    worker = loopline.start_worker()
    loopline.publish([m for tenant in tenants for m in email_follow_up(tenant)[:2]])
    loopline.settle(inbound=2 * len(tenants))
    worker.stop()
    topics = Topics(loopline.environ["LOOPLINE_KAFKA_TOPIC_PREFIX"])
    loopline.reconnect()
    delete_topics(loopline.environ["LOOPLINE_KAFKA"], [topics.commands, topics.signals])
    eventually(lambda: not _topics_exist(loopline, [topics.commands, topics.signals]), "the topics to be deleted")
    return topics
