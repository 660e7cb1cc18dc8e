"""`loopline asyncapi`: the AsyncAPI document is valid against the official schema and covers every message type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from eventsourcing.domain import Snapshot
from eventsourcing.utils import get_topic
from typer.testing import CliRunner

from loopline.adapters.asyncapi import event_topics
from loopline.adapters.messages import SCHEMAS
from loopline.cli.main import app
from loopline.domain.open_loop import OpenLoop
from loopline.domain.parked import ParkedMessage
from loopline.domain.task import Task
from loopline.domain.task_control import TaskControl
from loopline.domain.tenant import Tenant

FIXTURES = Path(__file__).parents[1] / "fixtures"
OFFICIAL_SCHEMA = FIXTURES / "asyncapi" / "asyncapi-3.0.0.json"
"""`schemas/3.0.0-without-$id.json` of the npm package @asyncapi/specs 6.11.1 (Apache-2.0, beside it)."""


def printed(*options: str) -> str:
    result = CliRunner().invoke(app, ["asyncapi", *options], env={"LOOPLINE_KAFKA_TOPIC_PREFIX": "acme."})
    assert result.exit_code == 0, result.output
    return result.stdout


def referenced(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The node a local `$ref` points at (`#/components/schemas/<name>`)."""
    target: Any = document
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    return target


def message_types(document: dict[str, Any], channel: str) -> set[str]:
    """The `type` of every envelope the channel's message may carry."""
    message = referenced(document, document["channels"][channel]["messages"]["Message"])
    payload = referenced(document, message["payload"])
    return {referenced(document, option)["properties"]["type"]["const"] for option in payload["oneOf"]}


def test_the_printed_document_is_valid_asyncapi_and_names_the_prefixed_topics() -> None:
    document = json.loads(printed())
    schema = json.loads(OFFICIAL_SCHEMA.read_text(encoding="utf-8"))
    assert document["asyncapi"] == "3.0.0"
    errors = [f"{list(error.path)}: {error.message}" for error in jsonschema.Draft7Validator(schema).iter_errors(document)]
    assert errors == []
    assert {channel["address"] for channel in document["channels"].values()} == {
        "acme.loopline.commands", "acme.loopline.signals", "acme.loopline.events",
        "acme.loopline.commands.dlq", "acme.loopline.signals.dlq",
    }
    assert yaml.safe_load(printed("--yaml")) == document


def test_every_command_and_signal_type_the_edge_accepts_is_a_message_of_its_topic() -> None:
    document = json.loads(printed())
    assert message_types(document, "acme.loopline.commands") == {t for kind, t in SCHEMAS if kind == "command"}
    assert message_types(document, "acme.loopline.signals") == {t for kind, t in SCHEMAS if kind == "signal"}
    task_create = document["components"]["schemas"]["TaskCreateCommand"]["properties"]["data"]
    assert "contact" in referenced(document, task_create)["properties"]


def test_every_event_a_domain_aggregate_can_store_is_a_topic_of_the_events_channel() -> None:
    document = json.loads(printed())
    message = referenced(document, document["channels"]["acme.loopline.events"]["messages"]["Message"])
    topics = set(referenced(document, message["payload"])["properties"]["topic"]["enum"])
    assert topics == set(event_topics())
    stored = {event["topic"] for name in ("stored_events_v1.json", "stored_events_v2.json")
              for event in json.loads((FIXTURES / name).read_text(encoding="utf-8"))["events"]}
    assert stored - {get_topic(Snapshot)} <= topics  # snapshots are kept apart: the relay never sends them
    assert {get_topic(Task.Escalated), get_topic(Tenant.Configured), get_topic(OpenLoop.Resolved),
            get_topic(ParkedMessage.Parked), get_topic(TaskControl.Paused)} <= topics
