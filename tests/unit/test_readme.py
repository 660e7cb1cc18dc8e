"""The README's channel examples: every signal shown resolves the watch shown before it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from loopline.adapters.messages import parse_message
from loopline.domain.matching import CHANNEL_BY_SIGNAL, channel_rule

README = Path(__file__).resolve().parents[2] / "README.md"


def _examples() -> list[tuple[dict, str]]:
    text = README.read_text(encoding="utf-8")
    block = text.split("One signal of each channel", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    lines = [json.loads(line) for line in block.strip().splitlines()]
    return [(lines[i]["watch"], json.dumps(lines[i + 1])) for i in range(0, len(lines), 2)]


def test_every_channel_has_an_example_and_each_signal_matches_its_watch() -> None:
    examples = _examples()
    channels = set()
    for watch, raw in examples:
        message = parse_message(raw)  # valid against the message contract
        rule = CHANNEL_BY_SIGNAL[message.type]
        channel_rule(rule.channel).check_watch(watch)  # valid watch
        assert rule.watch_key(watch) == rule.signal_key(message.data), raw
        assert rule.matches(watch, message.data), raw
        channels.add(rule.channel)
    assert channels == {"email", "slack", "github", "calendar", "linear", "webhook"}
    assert re.search(r"\| webhook \| \*\*source\*\*", README.read_text(encoding="utf-8"))
