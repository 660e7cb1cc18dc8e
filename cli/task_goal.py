"""What `loopline tasks show` says of a task's goal (seed 002 §8, §27.4, §37): its progress, the evaluation of each
close and the owner's word on its outcome, read from the task's trail (the `timeline` read model)."""

from __future__ import annotations

from typing import Any

from loopline.cli.output import out, print_table, styled

OWNER_WORD = {"Task.OutcomeOverridden": "override", "Task.Reopened": "reopen", "Task.OutcomeRated": "rating"}


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    return {"at": row["at"], **{k: v for k, v in row["payload"].items() if k not in ("tenant", "task_ref")}}


def goal_record(trail: list[dict[str, Any]]) -> dict[str, Any]:
    """The latest goal progress, every evaluation (one per close, and per later change of the outcome), and the
    owner's overrides, reopenings and ratings, oldest first."""
    progress = [_fields(row) for row in trail if row["event"] == "Task.GoalProgressed"]
    return {
        "progress": progress[-1] if progress else None,
        "evaluations": [_fields(row) for row in trail if row["event"] == "Task.Evaluated"],
        "owner": [{"what": OWNER_WORD[row["event"]], "by": row["payload"]["by"], "said": row["summary"],
                   "why": row["reason"], "at": row["at"]} for row in trail if row["event"] in OWNER_WORD],
    }


def print_goal(goal: dict[str, Any]) -> None:
    progress = goal["progress"]
    if progress:
        reached = f"; milestones {', '.join(progress['milestones'])}" if progress["milestones"] else ""
        out.print(styled("goal progress", "bold", f": {progress['score']}% ({progress['evidence_type']}, from the "
                         f"{progress['source']}{reached}); next: {progress['recommended']}"))
    for evaluation in goal["evaluations"]:
        budget = evaluation["budget"]
        used = ", ".join(f"{budget[f'{name}_used']}/{budget[f'{name}_max']} {name}"
                         for name in ("messages", "turns", "days") if budget[f"{name}_max"] is not None)
        out.print(styled("evaluation", "bold", f": {evaluation['outcome'] or 'no outcome'} scores "
                         f"{evaluation['outcome_score']}/100 ({evaluation['score_reason']})"
                         + (f"; used {used}" if used else "")))
    if goal["owner"]:
        print_table("the owner's word on the outcome", goal["owner"], ["at", "what", "by", "said", "why"])
