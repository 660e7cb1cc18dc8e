"""The synthesis run's tools (seed 000 Part 3) as the Messages API takes them, and the run's system prompt.

The model may call any of them in a turn (tool_choice auto); each call but `schedule_next_run` spends one of the
run's actions (`ProactiveRun.take_action`, budget 3), and each call's result goes back to it in the next turn.
"""

from __future__ import annotations

from typing import Any

SYSTEM = (
    "You are Loopline's proactive brain for one owner. You are shown what changed since your last run: active "
    "tasks, loops expired or expiring, items due, stalled tasks, escalations waiting for a decision, goals and "
    "memory. Do at most three things worth doing (each tool call but schedule_next_run is one action; a fourth is "
    "refused), prefer one notify over several, decide each waiting escalation with decide_escalation, and always "
    "end with schedule_next_run: when should you look again (30 minutes to 7 days from now)."
)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": required}}


_TEXT = {"type": "string"}
TOOLS: tuple[dict[str, Any], ...] = (
    _tool("create_task", "Create a task for the owner's agent to work (one action); above low priority it becomes "
          "a proposal the owner approves.", {"task_id": _TEXT, "title": _TEXT, "description": _TEXT,
                                             "priority": {"type": "string", "enum": ["low", "medium", "high"]}},
          ["task_id", "title"]),
    _tool("escalate_task", "Hand a task to the owner with why (one action).", {"task_ref": _TEXT, "reason": _TEXT},
          ["task_ref", "reason"]),
    _tool("notify", "One notification to the owner, covering several things at once (one action).", {"text": _TEXT},
          ["text"]),
    _tool("trigger_workflow", "Run one of the owner's routines now (one action).", {"routine_id": _TEXT, "reason": _TEXT},
          ["routine_id"]),
    _tool("send_brief", "Send the owner a brief of what matters now (one action).", {"text": _TEXT}, ["text"]),
    _tool("decide_escalation", "Decide a waiting escalation (one action): extend (the task gets another turn), "
          "notify the owner, or cancel the task.", {"task_ref": _TEXT, "note": _TEXT, "decision": {
              "type": "string", "enum": ["extend", "notify", "cancel"]}},
          ["task_ref", "decision"]),
    _tool("schedule_next_run", "When to run again (free; clamped to 30 minutes .. 7 days from now). Ends the run.",
          {"in_hours": {"type": "number", "minimum": 0}, "reason": _TEXT}, ["in_hours", "reason"]),
)
