"""serve's faststream producer appends exactly the records `loopline publish` does: topic, key and value; `POST
/v1/messages` at scale goes through it."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from loopline.adapters.kafka_log import KafkaPublisher, Topics, ensure_topics
from loopline.adapters.kafka_publish import FaststreamPublisher
from loopline.adapters.messages import parse_message
from loopline.processors.messages import Message
from loopline.adapters.api_keys import ApiKeys
from loopline.web.app import create_app
from tests.conftest import build_system, command, signal
from tests.e2e.test_scale_workers import consume_all
from tests.servers import Broker, Postgres

AT = "2026-03-02T09:00:00Z"


def appended_with_faststream(bootstrap: str, topics: Topics, messages: list[Message]) -> int:
    async def append() -> int:
        publisher = FaststreamPublisher(bootstrap, topics, timeout=10)
        await publisher.start()
        try:
            return (await publisher.append(messages, "serve")).appended
        finally:
            await publisher.close()

    return asyncio.run(append())


def test_faststream_appends_the_records_loopline_publish_appends(broker: Broker) -> None:
    messages = [parse_message(json.dumps(line)) for line in (
        command("c1", "task.create", AT, "acme", task_id="t1", title="Send the quote", contact="ana@example.com"),
        signal("s1", "email.received", AT, "bolt", sender="bo@example.com", subject="Re: quote"),
    )]
    by_faststream, by_publish = (Topics(f"fs{uuid.uuid4().hex[:8]}."), Topics(f"kp{uuid.uuid4().hex[:8]}."))
    for topics in (by_faststream, by_publish):
        ensure_topics(broker.bootstrap, topics, partitions=2, timeout=10)

    assert appended_with_faststream(broker.bootstrap, by_faststream, messages) == 2
    plain = KafkaPublisher(broker.bootstrap, by_publish, timeout=10)
    plain.append(messages, "publish")
    plain.close()

    def records(topics: Topics) -> list[Any]:
        return [record for topic in (topics.commands, topics.signals)
                for record in consume_all(broker.bootstrap, topic, expected=1)]

    sent, published = records(by_faststream), records(by_publish)
    assert [(r.key, r.value) for r in sent] == [(r.key, r.value) for r in published]
    assert [r.key for r in sent] == [b"acme", b"bolt"]
    assert [(dict(r.headers)["correlation_id"], dict(r.headers)["content-type"]) for r in sent] == [
        (b"c1", b"application/json"), (b"s1", b"application/json")]


def test_serve_at_scale_appends_what_it_is_sent_through_faststream(tmp_path: Path, postgres: Postgres,
                                                                   broker: Broker) -> None:
    database, prefix = postgres.new_database(), f"sv{uuid.uuid4().hex[:8]}."
    system = build_system(tmp_path / "home", LOOPLINE_EVENT_STORE=database, LOOPLINE_READ_MODEL=database,
                          LOOPLINE_KAFKA=broker.bootstrap, LOOPLINE_KAFKA_TOPIC_PREFIX=prefix)
    try:
        token = ApiKeys(system.ledger_engine).create(tenant="acme", operator=False, label="t",
                                                     now=datetime.now(timezone.utc)).token
        line = json.dumps(command("c1", "task.create", AT, "acme", task_id="t1", title="Send the quote"))
        with TestClient(create_app(system), base_url="https://testserver") as client:  # the lifespan connects
            answer = client.post("/v1/messages", content=line, headers={"authorization": f"Bearer {token}"})
        assert answer.status_code == 202, answer.text
        assert not system.leader.holds  # serve leaves processing to the workers: it never takes the leader lock
        [record] = consume_all(broker.bootstrap, Topics(prefix).commands, expected=1)
        assert record.key == b"acme" and dict(record.headers)["correlation_id"] == b"c1"
        assert json.loads(record.value)["data"]["title"] == "Send the quote"
    finally:
        system.close()
