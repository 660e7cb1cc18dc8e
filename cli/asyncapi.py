"""`loopline asyncapi [--yaml]`: the message contract (commands, signals, events, dead letters) as an AsyncAPI document."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Annotated

from loopline.adapters.asyncapi import asyncapi_specification
from loopline.adapters.config import Settings
from loopline.cli.context import fail, flag
from loopline.cli.output import print_json

Yaml = Annotated[bool, flag("--yaml", "Print YAML instead of JSON.")]


def asyncapi(yaml: Yaml = False) -> None:
    """Print the AsyncAPI 3.0 document of Loopline's Kafka topics (JSON unless --yaml), named with
    LOOPLINE_KAFKA_TOPIC_PREFIX, every command and signal type a message with its fields."""
    if find_spec("faststream") is None:
        fail("loopline asyncapi needs faststream, part of the scale extra: pip install 'loopline[scale]'")
    specification = asyncapi_specification(Settings.load())
    if yaml:
        print(specification.to_yaml(), end="")
    else:
        print_json(specification.to_jsonable())
