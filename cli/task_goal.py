"""How `loopline tasks show` prints a task's goal (seed 002 §8, §27.4, §37): its progress, the evaluation of each
close and the owner's word on its outcome, as `projections/task_view.py` reads them from the task's trail."""

from __future__ import annotations

from typing import Any

from loopline.cli.output import out, print_table, styled


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
