"""The README's examples are valid messages and its channel examples resolve the watch shown before them; its
message and action tables are what the models and the contract table say."""

from __future__ import annotations

import json
import re
from pathlib import Path

from loopline.adapters.messages import parse_message
from loopline.cli.reference import (
    action_tables,
    actions_beyond_email_table,
    cadence_table,
    channel_table,
    message_tables,
    task_type_table,
    safety_table,
    tenant_table,
)
from loopline.domain.channels import CHANNEL_BY_SIGNAL, channel_rule

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


def test_readme_channel_table_is_the_channel_modules() -> None:
    expected = channel_table()
    assert expected in _section("### Channels and their watch fields"), f"put this in the README's channel section:\n{expected}"


def test_readme_action_tables_are_the_contract_table() -> None:
    expected = action_tables()
    assert expected in README.read_text(encoding="utf-8"), f"put this in the README's action section:\n{expected}"


def test_readme_task_type_table_is_the_registry() -> None:
    """Both packs, every number: what `domain/task_types.py` holds is what the README says."""
    expected = task_type_table()
    assert expected in _section("### Task types"), f"put this in the README's Task types section:\n{expected}"
    assert "`churn_risk` | gym |" in expected and "`meeting_scheduling` | assistant |" in expected


def test_readme_cadence_table_is_the_registry() -> None:
    expected = cadence_table()
    assert expected in _section("### Cadences"), f"put this in the README's Cadences section:\n{expected}"


def test_readme_tenant_settings_table_is_the_schema() -> None:
    expected = tenant_table()
    assert expected in _section("## Tenants"), f"put this in the README's Tenants section:\n{expected}"
    assert "| `execution_mode` |" in expected and "`manual`" in expected


def test_readme_safety_table_is_the_one_table_of_limits() -> None:
    """Every limit of `domain/safety_limits.py`, with its default and how to change it, is what the README lists."""
    expected = safety_table()
    assert expected in _section("## Safety"), f"put this in the README's Safety section:\n{expected}"
    assert "| `daily_task_limit` | tenant |" in expected and "`tenant.configure` `daily_send_limit`" in expected
    brain = ("synthesis_actions", "synthesis_turns", "hold_cap", "digest_items", "same_notice", "run_staleness",
             "empty_runs", "routine_min_interval", "routines_per_tenant", "proposals_per_batch",
             "proposals_per_discovery", "debate_rounds", "debate_call_attempts")
    assert [rule for rule in brain if f"| `{rule}` |" not in expected] == []


def test_readme_actions_beyond_email_table_is_the_action_registry() -> None:
    expected = actions_beyond_email_table()
    assert expected in _section("### Actions beyond email"), f"put this in the README's actions section:\n{expected}"
    assert "| `send_sms` | the contact | no | high | always |" in expected


def _section(heading: str) -> str:
    """The README's text from a heading to the next heading of any level."""
    text = README.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"README.md has no section {heading!r}"
    return text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|") and not line.startswith("|---")]


def test_readme_message_tables_are_the_models() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Every message and its fields", 1)[1].split("\n#", 1)[0]
    expected, shown = _table_rows(message_tables()), _table_rows(section)
    missing = [row for row in expected if row not in shown]
    stale = [row for row in shown if row not in expected]
    assert not missing and not stale and shown == expected, (
        "README.md's message tables differ from adapters/messages.py (regenerate: python -m loopline.cli.reference)\n"
        + "".join(f"  the models say, the README does not: {row}\n" for row in missing)
        + "".join(f"  the README says, the models do not: {row}\n" for row in stale)
        + ("  the same rows in another order\n" if not missing and not stale else "")
    )


def test_every_message_the_readme_shows_is_valid() -> None:
    """Copied into a file, each example line is accepted: one object per line, as `publish` reads them."""
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"^```(?:json|sh)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    messages = [line for block in blocks for line in block.splitlines() if line.startswith('{"kind"')]
    assert len(messages) >= 10
    for line in messages:
        parse_message(line)
