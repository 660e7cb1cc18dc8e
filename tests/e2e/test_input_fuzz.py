"""A 10,000-line corpus of every kind of bad line mixed with valid messages of every type, published
through the `loopline` command: nothing crashes, every valid line is applied once, every bad line is
rejected under its own line number, and nothing questionable gets in. Embedded: at scale the same edge
parses each line, and test_cli_flow1 has the scale path's repeated ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eventsourcing.utils import get_topic

from loopline.adapters.config import Settings
from loopline.domain.inbound import RejectedInput
from loopline.processors.followers.router import INBOUND_TOPIC
from loopline.runtime.bootstrap import build
from tests.e2e.cli import Cli
from tests.fuzz_corpus import ACCEPTED, DUPLICATE, REJECTED, BAD, build_corpus


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see the module's docstring)."""
    return embedded_cli


def stored(cli: Cli, topic: str) -> int:
    """How many events of this topic the deployment's event store holds."""
    system = build(Settings.load(cli.environ, config_file=cli.home / "loopline.toml"))
    try:
        return len(system.app.recorder.select_notifications(start=1, limit=1_000_000, topics=[topic]))
    finally:
        system.close()


def test_a_fuzzed_corpus_applies_each_valid_line_once_and_rejects_each_bad_line_by_number(cli: Cli, tmp_path: Path) -> None:
    corpus = build_corpus()
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(corpus.data())
    valid, repeats, bad = corpus.numbers(ACCEPTED), corpus.numbers(DUPLICATE), corpus.numbers(REJECTED)

    result = cli("publish", str(path), "--json")

    assert result.returncode == 1, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert all("id" not in reject for reject in summary["rejected"]), "the domain refused a valid line"
    assert sorted(reject["line"] for reject in summary["rejected"]) == sorted(bad)
    assert all(f" line {number}: " in result.stderr for number in bad)
    assert summary["counts"] == {"accepted": summary["appended"], "duplicates": summary["duplicates_ignored"],
                                 "rejected": len(bad), "took_effect": len(valid)}
    assert (summary["appended"], summary["duplicates_ignored"], summary["processed"]) == (len(valid), len(repeats), len(valid))

    tasks = cli.json("tasks", "list")
    assert sorted((task["tenant"], task["task_id"]) for task in tasks) == sorted(corpus.tasks)
    assert len(cli.json("loops", "list")) == corpus.loops
    assert stored(cli, INBOUND_TOPIC) == len(valid)  # one receipt per valid message: none twice, none lost
    assert stored(cli, get_topic(RejectedInput.Recorded)) == len(bad)  # each kept with its reason


def test_a_file_of_only_bad_lines_exits_4_and_a_clean_one_0(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(make("acme", f"r{i}") for i, make in enumerate(BAD.values())) + b"\n")
    result = cli("publish", str(bad))
    assert result.returncode == 4, result.stderr[-3000:]
    assert f"read {len(BAD)} lines: 0 " in result.stdout and f", {len(BAD)} refused" in result.stdout
    assert cli.json("tasks", "list") == []

    good = tmp_path / "good.jsonl"
    good.write_bytes(b"\n" + json.dumps({"kind": "signal", "id": "s1", "type": "user.seen", "tenant": "acme",
                                          "at": "2026-03-13T10:00:00Z", "data": {}}).encode() + b"\r\n")
    assert cli("publish", str(good)).returncode == 0
    assert cli("publish", str(good)).returncode == 0  # a repeat is acknowledged, not an error
