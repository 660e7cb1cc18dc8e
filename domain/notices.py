"""What the owner is told: the commands each kind of notice offers, and when a notice has been made moot.

A notice is emitted by the step that causes it (`Task.notify_user`) and carries what the contact wrote,
the agent's draft and the commands the owner can answer with. A notice that asks the owner to act is
withdrawn at delivery when the owner acted on its task after it, or the task closed after it: it is
never delivered late.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

DECIDE = (("task.complete", "close it as done, with a `summary`"), ("task.cancel", "stop it, with a `reason`"))
"""What the owner can always do with a task that is open."""

REVIEW = (("task.approve", "let Loopline work it; with a `draft` {subject, body}, your first message instead of the agent's"),
          ("task.reject", "drop it, with a `reason`"))
ESCALATED = (("task.guidance", "tell the agent what to do, in `text`: it drafts the answer with it"),
             ("task.reply", "write to the contact yourself, in `body`, in the task's thread"),
             ("task.takeover", "handle it yourself: the agent stops (outcome owner_handled)"),
             ("task.cancel", "stop it, with a `reason`"))
ACTION_REVIEW = (("action.approve", "take the action above (name its `key` when several wait)"),
                 ("action.reject", "drop it, with a `reason`; the task goes on without it"),
                 ("task.cancel", "stop the task, with a `reason`"))
ON_THE_OUTCOME = (("task.rate", "was this outcome right? `rating` up or down, with `why` and a `note`"),
                  ("task.override_outcome", "set the outcome it should have, in `outcome`, with a `reason`"),
                  ("task.reopen", "it is not done: back to work, with a `reason`"))
"""The owner's word on a closed task's outcome (seed 002 §28.5: "Was this accurate? 👍 👎")."""
QUESTION = (("question.answer", "answer in `answer`: an option's letter (A, B, …) with optional reasoning, or your own "
                                 "words"),
            ("task.cancel", "stop the task the question is asked on, with a `reason`"))
"""An escalation question (seed 001 §6) at any rung of its ladder: answer it, or drop the task it blocks."""
SEND_HELD_DRAFT = ("task.approve", "send the agent's draft above, as it is or edited in `draft` {subject, body}")

OWNER_ACTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "review": REVIEW,
    "reply_in_review": REVIEW,
    "escalation": ESCALATED,
    "escalation_reply": ESCALATED,
    "escalation_reminder": ESCALATED,
    "action_review": ACTION_REVIEW,
    "todo_reminder": (("action.done", "mark the to-do done (name its `key` when several are open)"),),
    "stalled": DECIDE,
    "loop_expired": DECIDE,
    "reminder_needed": DECIDE,
    "timer_refused": DECIDE,
    "decision_refused": DECIDE,
    "task_completed": ON_THE_OUTCOME,
    "task_cancelled": ON_THE_OUTCOME,
    "task_expired": ON_THE_OUTCOME,
    "escalation_timeout": ON_THE_OUTCOME,
    "question": QUESTION,
    "question_urgent": QUESTION,
    "question_re_escalated": QUESTION,
}
"""The commands a notice of each kind offers the owner, each with what it does; a kind not named informs only."""

OWNER_EVENTS = frozenset({"Reviewed", "GuidanceGiven", "OwnerAnswered", "Completed", "Cancelled", "Expired"})
"""Task events after which a notice asking the owner to act is moot: the owner decided or answered, or the task
closed (a takeover closes it too)."""
ACTION_EVENTS = frozenset({"ActionDecided"})
"""Task events that make moot only a notice asking about a held action (the decision on that action, when the notice
names its key): a contact's reply during the hold still needs the owner after they decided on the action."""


def actions_for(kind: str, task_ref: str, *, acting: bool = True, held_draft: bool = False,
                action_key: str | None = None, question_ref: str | None = None) -> list[dict[str, Any]]:
    """The commands a notice of `kind` offers, ready to publish for the task; an escalation with the agent's draft
    held back offers to send it first, and `task.reply` is offered only where Loopline writes to the contact. A
    notice about one action (`action_key`) names it in its `action.*` commands, one about a question
    (`question_ref`) in its `question.*` commands."""
    offered = OWNER_ACTIONS.get(kind, ())
    if held_draft and offered is ESCALATED:
        offered = (SEND_HELD_DRAFT, *offered)
    return [{"command": command, "data": _data(command, task_ref, action_key, question_ref), "does": does}
            for command, does in offered if acting or command != "task.reply"]


def _data(command: str, task_ref: str, action_key: str | None, question_ref: str | None) -> dict[str, Any]:
    if action_key is not None and command.startswith("action."):
        return {"task_id": task_ref, "key": action_key}
    if command.startswith("question."):
        assert question_ref is not None, f"a notice offering {command} names no question"
        return {"question_id": question_ref}
    return {"task_id": task_ref}


def _action_key(notice_actions: list[dict[str, Any]]) -> str | None:
    """The action a notice is about, as its commands name it; None for one that names none (emitted before they did)."""
    return next((a["data"]["key"] for a in notice_actions if "key" in a.get("data", {})), None)


def moot_by(kind: str, notice_actions: list[dict[str, Any]], later_events: Iterable[Any]) -> str | None:
    """The event (its class name) that made a notice of `kind` asking the owner to act moot, or None while it still
    stands."""
    if not notice_actions:
        return None
    moot = OWNER_EVENTS | ACTION_EVENTS if kind == "action_review" else OWNER_EVENTS
    key = _action_key(notice_actions)
    for event in later_events:
        name = type(event).__qualname__.rpartition(".")[2]
        if name in moot and (name not in ACTION_EVENTS or key is None or event.key == key):
            return name
    return None


def render(*, title: str, message: str, quote: str | None, draft: dict[str, Any] | None,
           actions: list[dict[str, Any]]) -> str:
    """The notice as the owner reads it in an email: what happened, the contact's words, the draft, the commands."""
    parts = [message]
    if quote:
        parts.append("They wrote:\n" + "\n".join(f"> {line}" for line in quote.splitlines() or [""]))
    if draft:
        subject = f"Subject: {draft['subject']}\n" if draft.get("subject") else ""
        parts.append(f"The agent's draft:\n{subject}{draft.get('body', '')}")
    if actions:
        lines = [f"  {a['command']} {json.dumps(a['data'])}: {a['does']}" for a in actions]
        parts.append("What you can do (publish one of these commands):\n" + "\n".join(lines))
    return "\n\n".join(parts) + f"\n\n(Task: {title})\n"
