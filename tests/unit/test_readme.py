"""The README's channel examples resolve the watch shown before them; its action tables are the contract table."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

from loopline.adapters.messages import parse_message
from loopline.domain.expectations import EXPECTATIONS
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


def _duration(delta: timedelta) -> str:
    hours = int(delta.total_seconds() // 3600)
    return f"{hours // 24} days" if hours % 24 == 0 and hours > 24 else f"{hours} hours"


def action_tables() -> str:
    """The README's action tables, rendered from `domain/expectations.py`."""
    lines = ["| action | awaits | channel | default deadline | `if_unresolved` | watch it always has |",
             "|---|---|---|---|---|---|"]
    for row in EXPECTATIONS.values():
        fixed = ", ".join(
            f"`{key}` = `{value}`" + (" (unless given)" if any(f.watch == key for f in row.fields) else "")
            for key, value in row.watch_defaults.items()
        ) or "—"
        lines.append(f"| `{row.action}` | {row.expects} | {row.channel} | {_duration(row.default_deadline)} "
                     f"| `{row.if_unresolved}` | {fixed} |")
    lines += ["", "| action | field | becomes the watch's | meaning |", "|---|---|---|---|"]
    for row in EXPECTATIONS.values():
        for spec in row.fields:
            name = f"**`{spec.name}`**" if spec.required else f"`{spec.name}`"
            kind = "" if spec.type is str else f" ({'list of strings' if spec.type == list[str] else 'object'})"
            becomes = f"`{spec.watch}`" if spec.watch else "— (recorded)"
            lines.append(f"| `{row.action}` | {name}{kind} | {becomes} | {spec.doc} |")
    return "\n".join(lines) + "\n"


def test_readme_action_tables_are_the_contract_table() -> None:
    expected = action_tables()
    assert expected in README.read_text(encoding="utf-8"), f"put this in the README's action section:\n{expected}"
