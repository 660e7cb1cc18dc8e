"""The offline policy's confusion matrix on the labelled replies of `tests/data/labelled_replies.jsonl`.

    python -m bench.offline_policy [--task-type churn_risk]

Each reply is evaluated as a reply to a task of the given type (the outcomes it can close with are
the type's), and counted by its label (rows) and what the policy decided (columns): a close as a
win, as an opt-out, as another negative outcome, an escalation to the owner, a wait, or a reply.
Below the matrix: opt-out recall and precision, and how many replies that are not a clear positive
closed as a win (the policy's contract: 100 %, and none).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.task_types import TASK_TYPES
from loopline.domain.tenant import TenantSettings
from loopline.processors.ports import DecisionRequest, Prompt

LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "labelled_replies.jsonl"
LABELS = ("opt_out", "out_of_office", "question", "complaint", "positive", "negative", "ambiguous_yes")
OPTING_OUT_TYPES = sorted(name for name, kind in TASK_TYPES.items() if "opted_out" in kind.outcome_codes)
"""The types a reply can close as `opted_out`: the ones the opt-out recall is measured on."""
COLUMNS = ("close:win", "close:opted_out", "close:negative", "escalate", "dont_know", "wait", "reply")


def load() -> list[dict[str, str]]:
    return [json.loads(line) for line in LABELLED.read_text("utf-8").splitlines() if line.strip()]


def decided(policy: OfflinePolicy, task_type: str, text: str) -> str:
    """The column a reply's decision falls in."""
    kind = TASK_TYPES[task_type]
    output = policy.decide(DecisionRequest(
        point="evaluate_reply", tenant="bench", task_ref="t", task_type=task_type, purpose="reply", contact="m@example.com",
        contact_name=None, touch=1, tone=None, reply_text=text, conversation=(),
        budget_left={"messages": 3, "turns": 6, "days": 14}, outcomes=kind.outcome_codes, settings=TenantSettings(),
        prompt=Prompt(system="", messages=(), digest=""),
    )).output
    if output["decision"] != "close":
        return str(output["decision"])
    if output["outcome"] == "opted_out":
        return "close:opted_out"
    outcome = kind.outcome(output["outcome"])
    return "close:win" if outcome is not None and outcome.kind == "positive" else "close:negative"


def matrix(task_type: str) -> tuple[Counter[tuple[str, str]], list[dict[str, str]], float]:
    policy, rows = OfflinePolicy(), load()
    start = time.perf_counter()
    counts = Counter((row["label"], decided(policy, task_type, row["text"])) for row in rows)
    return counts, rows, time.perf_counter() - start


def report(task_type: str) -> str:
    counts, rows, elapsed = matrix(task_type)
    width = max(len(label) for label in LABELS) + 2
    lines = [f"{'label':<{width}}" + "".join(f"{column:>17}" for column in COLUMNS) + f"{'total':>8}"]
    for label in LABELS:
        cells = [counts[(label, column)] for column in COLUMNS]
        lines.append(f"{label:<{width}}" + "".join(f"{cell:>17}" for cell in cells) + f"{sum(cells):>8}")
    opt_outs = sum(counts[("opt_out", column)] for column in COLUMNS)
    read_as_opt_out = sum(counts[(label, "close:opted_out")] for label in LABELS)
    caught = counts[("opt_out", "close:opted_out")]
    unclear_wins = sum(counts[(label, "close:win")] for label in LABELS if label != "positive")
    languages = Counter(row["language"] for row in rows)
    lines += [
        "",
        f"{len(rows)} replies ({', '.join(f'{n} {language}' for language, n in sorted(languages.items()))}) "
        f"as replies to a {task_type} task, evaluated in {elapsed * 1000:.0f} ms",
        f"opt-out recall {caught / opt_outs:.0%} ({caught} of {opt_outs}); "
        f"precision {caught / read_as_opt_out:.0%} ({caught} of {read_as_opt_out} closed as opted_out)",
        f"replies that are not a clear positive closed as a win: {unclear_wins}; "
        f"clear positives closed as a win: {counts[('positive', 'close:win')]} of {sum(counts[('positive', c)] for c in COLUMNS)}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task-type", default="churn_risk", choices=OPTING_OUT_TYPES)
    print(report(parser.parse_args().task_type))


if __name__ == "__main__":
    main()
