"""What a model is told for one decision, composed in layers (seed 002 §23.2, §36.3), and the `DecisionRequest`
built from the task's events. System layers: skills/_base.md, the tenant's profile, the type's skill file (an inline
prompt from the type's contract when the file is missing, §36.5: the answer then goes to the owner), the goal and its
outcome spectrum (§5.4). The user message: the task in the owner's words, the contact's other tasks (§21.4), the
conversation so far (§8), the budget left (§8's wording), and what is asked now. Everything is read from the event
store, never from a read model, and rendered deterministically: the same events give the same prompt and digest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib.resources import files
from typing import Any

from eventsourcing.application import AggregateNotFoundError

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.open_loop import OpenLoop
from loopline.domain.conversation import Turn, conversation_of
from loopline.domain.goal_progress import progress_layer
from loopline.domain.outreach import MIN_CLOSE_CONFIDENCE, NEEDS_EVIDENCE, Plan
from loopline.domain.reply_routing import answered_signal, unanswered_replies
from loopline.domain.task import Task
from loopline.domain.task_types import TaskType, task_type
from loopline.domain.tenant import TenantProfile, TenantSettings
from loopline.domain.wording import when
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.model.urgency_prompt import SCORE_URGENCY, urgency_ask
from loopline.processors.ports import DecisionRequest, Prompt

LAYER_BREAK = "\n\n---\n\n"
BASE_SKILL = "_base.md"


@cache
def skill_text(name: str) -> str | None:
    """A skill file shipped with Loopline (skills/), or None when there is none by that name."""
    resource = files("loopline.skills") / name
    return resource.read_text(encoding="utf-8") if resource.is_file() else None


def missing_skill(kind: TaskType) -> str | None:
    """The path of the type's skill file when it is missing (seed 002 §36.5: the task then escalates), else None."""
    return None if skill_text(kind.skill) is not None else f"skills/{kind.skill}"


def inline_skill(kind: TaskType) -> str:
    """What the model is told in place of a missing skill file: the type's own contract, and that the owner decides."""
    return (
        f"# {kind.label} ({kind.name}): inline instructions\n\n"
        f"The skill file for this task type is missing, so you work from its contract alone: {kind.description}. "
        f"Goal: {kind.goal.summary}.\n\nWhatever you decide goes to the owner before anything is sent or closed: "
        "give your best answer and say in your reasoning what you were unsure of."
    )


@dataclass(frozen=True)
class Situation:
    """The facts a prompt is composed from; `build_request` reads them from the task's events."""

    point: str
    purpose: str
    kind: TaskType
    settings: TenantSettings
    title: str
    description: str
    context: dict[str, Any]
    contact: str | None
    contact_name: str | None
    touch: int | None = None
    touches: int | None = None
    tone: str | None = None
    reply_text: str | None = None
    conversation: tuple[Turn, ...] = ()
    budget_left: dict[str, int | None] = field(default_factory=dict)
    other_tasks: tuple[str, ...] = ()
    """One line per other task of the same contact (§21.4)."""
    guidance: str | None = None
    """The owner's guidance on how to answer the reply (a decision guidance asked for)."""
    progress: dict[str, Any] | None = None
    """How far the task is towards its goal (`Task.progress`), once anything showed it (§37.4)."""


def compose_prompt(situation: Situation) -> Prompt:
    """The layered prompt for one decision, with the sha256 digest of exactly what the model reads."""
    s = situation
    layers = [layer for layer in (
        skill_text(BASE_SKILL) or "",
        profile_layer(s.settings),
        _with_profile(skill_text(s.kind.skill) or inline_skill(s.kind), s.settings.profile),
        goal_layer(s.kind),
    ) if layer.strip()]
    system = LAYER_BREAK.join(layers)
    # Each block keeps the break that follows its layer, so the blocks read exactly as `system` (and its digest).
    blocks = tuple(layer + LAYER_BREAK for layer in layers[:-1]) + tuple(layers[-1:])
    user = "\n\n".join(part for part in (
        _task_layer(s), cross_task_layer(s.other_tasks, s.kind), conversation_layer(s.conversation),
        budget_layer(s.budget_left), progress_layer(s.progress, s.kind.goal) if s.progress else "", ask_layer(s),
    ) if part)
    messages = ({"role": "user", "content": user},)
    return Prompt(system=system, messages=messages, digest=prompt_digest(system, messages), system_blocks=blocks)


def prompt_digest(system: str, messages: Sequence[dict[str, Any]]) -> str:
    text = json.dumps({"system": system, "messages": list(messages)}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _with_profile(skill: str, profile: TenantProfile) -> str:
    """Fills a skill file's `{profile.display_name}`-style placeholders from the tenant's profile."""
    def value(match: re.Match[str]) -> str:
        found = getattr(profile, match.group(1), None)
        return str(found) if found else "the business"
    return re.sub(r"\{profile\.([a-z_]+)\}", value, skill)


def profile_layer(settings: TenantSettings) -> str:
    """The tenant context of seed 002 §23.2: who the messages come from and how they sound."""
    p = settings.profile
    name = p.display_name or settings.name
    business = f"{name} ({p.gym_type.replace('_', ' ')})" if name and p.gym_type else name
    facts = [
        f"- Business: {business}" if business else "",
        f"- Owner: {p.owner_first_name}" if p.owner_first_name else "",
        f"- Vibe: {p.vibe}" if p.vibe else "",
        f"- Classes: {', '.join(p.class_types)}" if p.class_types else "",
        f"- Special programs: {', '.join(p.special_programs)}" if p.special_programs else "",
        f"- Current promotion: {p.current_promo}" if p.current_promo else "",
        f"- NEVER mention: {', '.join(p.never_mention)}" if p.never_mention else "",
        f"- Always include: {', '.join(p.always_include)}" if p.always_include else "",
    ]
    reach = " ".join(v for v in (p.contact_info.phone, p.contact_info.address, p.contact_info.website) if v)
    lines = [
        "TENANT CONTEXT:", *(f for f in facts if f),
        "", "COMMUNICATION STYLE:",
        f'- Greeting: "{p.typical_greeting or "Hey"}"',
        f'- Sign off as: "{p.sign_off or p.owner_first_name or "The Team"}"',
        f"- Tone: {p.vibe or 'friendly and genuine'}",
        "- This should read like a personal note from someone at the business, NOT like a marketing email.",
    ]
    if reach:
        lines += ["", f"If the contact needs to reach the business: {reach}"]
    return "\n".join(lines)


EVIDENCE_NOTE = " Only a fact shows it (a check-in, a reactivation, a payment), never the contact's words alone."
"""Said of each outcome of `NEEDS_EVIDENCE`: a close as one read from a reply is not taken as it is."""


def goal_layer(kind: TaskType) -> str:
    """The goal and its outcome spectrum, in seed 002 §5.4's words (confidence 0–1, as everywhere in Loopline)."""
    goal = kind.goal
    outcomes = "\n".join(f'- "{o.code}" ({o.kind}): {o.description}{EVIDENCE_NOTE if o.code in NEEDS_EVIDENCE else ""}'
                         for o in goal.outcomes)
    if goal.completion in ("judgment", "composite"):
        rules = goal.judgment_criteria or "Use your best judgment based on the conversation."
    else:
        rules = "This task completes when a concrete signal is detected. Do not close it based on conversation alone."
    return (
        f"GOAL: {goal.summary}\n\nPOSSIBLE OUTCOMES (choose the most accurate one):\n{outcomes}\n\n"
        f"EVALUATION RULES:\n{rules}\n\n"
        f"Rate your confidence (0 to 1) in the decision you make. If you're below {MIN_CLOSE_CONFIDENCE}, choose "
        "'wait' or 'escalate' instead of closing the task."
    )


def _task_layer(s: Situation) -> str:
    lines = [f"THE TASK ({s.kind.label}; the owner's words, never quote its title to the contact):", f"- Title: {s.title}"]
    if s.description:
        lines.append(f"- Description: {s.description}")
    if s.contact:
        lines.append(f"- Contact: {s.contact_name + ' <' + s.contact + '>' if s.contact_name else s.contact}")
    if s.context:
        lines.append(f"- Context: {json.dumps(s.context, sort_keys=True, ensure_ascii=False, default=str)}")
    return "\n".join(lines)


def cross_task_layer(other_tasks: Sequence[str], kind: TaskType) -> str:
    """The contact's other tasks (§21.4), so this one does not talk about what they handle."""
    if not other_tasks:
        return ""
    listed = "\n".join(f"  {number}. {line}" for number, line in enumerate(other_tasks, start=1))
    return (
        f"CONTACT CONTEXT:\n- This contact has {len(other_tasks)} other task(s):\n{listed}\n"
        f"IMPORTANT: Do NOT mention what those tasks are about; they are handled separately. "
        f"Focus only on this {kind.label} task."
    )


def conversation_layer(conversation: Sequence[Turn]) -> str:
    if not conversation:
        return "CONVERSATION SO FAR: nothing has been sent or received yet."
    turns = "\n\n".join(f"[{when(turn.at)}] {turn.author}:\n{turn.text}" for turn in conversation)
    return f"CONVERSATION SO FAR (oldest first):\n\n{turns}"


def budget_layer(budget_left: dict[str, int | None]) -> str:
    """Seed 002 §8's budget awareness; a budget the task does not have is left out."""
    parts = [f"{budget_left[key]} {label}" for key, label in (
        ("messages", "messages remaining"), ("turns", "reasoning turns"), ("days", "days before this task expires"),
    ) if budget_left.get(key) is not None]
    if not parts:
        return ""
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f", and {parts[-1]}"
    return (
        f"BUDGET: You have {listed}. Use them wisely. If you're running low and haven't achieved the goal, "
        "consider escalating to the owner rather than burning your remaining budget on a long shot."
    )


def ask_layer(s: Situation) -> str:
    if s.point == SCORE_URGENCY:
        return urgency_ask(s)
    who = s.contact_name or s.contact or "the contact"
    if s.point == "evaluate_reply" and s.purpose == "guidance":
        return (
            f"WHAT TO DO NOW: {who} wrote, and the owner read it:\n\n{_quoted(s.reply_text)}\n\n"
            f"The owner's guidance for your answer:\n\n{_quoted(s.guidance)}\n\n"
            f"Answer {who} following the owner's guidance, with the evaluate_reply tool: `reply` (give reply_body), "
            "or `close`, `wait` or `escalate` if the guidance says so. If you are not confident the answer is right, "
            "say so with a low confidence and the owner will review it."
        )
    if s.point == "evaluate_reply":
        quoted = _quoted(s.reply_text)
        return (
            f"WHAT TO DO NOW: {who} just replied:\n\n{quoted}\n\n"
            "Decide with the evaluate_reply tool: `reply` (give reply_body), `close` (give one outcome code from the "
            "list above), `escalate` (the owner decides), `wait` (give wait_days), or `dont_know` (give the question "
            "the owner should answer). If you are unsure whether the reply is positive, negative or ambiguous, or "
            "whether the goal has been achieved, choose `escalate` or `dont_know`: it is ALWAYS better to ask than to "
            "guess wrong."
        )
    if s.point == "write_report":
        spec = s.kind.goal.deliverable_spec or s.kind.goal.summary
        return (f"WHAT TO DO NOW: Produce the deliverable: {spec} Work only from the task's context above; if it holds "
                "too little, write what is missing and choose the outcome that says so. Use the write_report tool.")
    if s.purpose == "followup":
        return (f"WHAT TO DO NOW: {who} has not replied to the last email above. Write one short, polite follow-up "
                "with the draft_message tool. Do not name the task's title or any id.")
    position = f"touch {s.touch} of {s.touches}" if s.touch and s.touches else f"touch {s.touch or 1}"
    tone = f", tone: {s.tone}" if s.tone else ""
    return (f"WHAT TO DO NOW: Write {position} to {who}{tone}, following the approach for this touch in the skill "
            "above. Use the draft_message tool; if you are not confident the message is right, say so with a low "
            "confidence and the owner will review it.")


def _quoted(text: str | None) -> str:
    return "\n".join(f"> {line}" for line in (text or "").splitlines()) or "> (empty)"


def _app(source: Loopline | UnitOfWork) -> Loopline:
    return source.app if isinstance(source, UnitOfWork) else source


def _get(app: Loopline, aggregate_id: Any) -> Any:
    try:
        return app.repository.get(aggregate_id)
    except AggregateNotFoundError:
        return None


def task_events(source: Loopline | UnitOfWork, task: Task) -> list[Any]:
    """The task's events up to the version loaded, from the event store."""
    return list(_app(source).events.get(task.id, lte=task.version))


def tenant_settings_of(app: Loopline, tenant: str) -> TenantSettings:
    found = _get(app, ids.tenant_id(tenant))
    return found.current if found is not None else TenantSettings()


def other_tasks(app: Loopline, task: Task) -> tuple[str, ...]:
    """The contact's other tasks (by the contact index), one line each, open ones first."""
    if not task.contact:
        return ()
    index = _get(app, ids.contact_index_id(task.tenant, task.contact))
    if not isinstance(index, ContactIndex):
        return ()
    lines = []
    for kind, ref in sorted(index.tasks.items()):
        other = _get(app, ids.task_id(task.tenant, ref)) if ref != task.ref else None
        if isinstance(other, Task):
            priority = task_type(other.task_type).priority
            lines.append((other.is_closed, f"[{kind}, {priority}] {other.title} ({other.status})"))
    return tuple(line for _, line in sorted(lines))


def budget_left(task: Task, now: datetime) -> dict[str, int | None]:
    """Messages, turns and whole days left; None where the task has no such budget."""
    plan = task.outreach
    ends_at = plan["ends_at"] if plan else task.expires_at
    return {
        "messages": max(plan["budget_messages"] - task.messages_used, 0) if plan else None,
        "turns": max(plan["budget_turns"] - task.turns_used, 0) if plan else None,
        "days": max((ends_at - now).days, 0) if ends_at else None,
    }


def build_request(
    source: Loopline | UnitOfWork, task: Task, point: str, *, purpose: str, now: datetime, touch: int | None = None,
    tone: str | None = None, reply_text: str | None = None, contact: str | None = None, contact_name: str | None = None,
    events: Iterable[Any] | None = None, settings: TenantSettings | None = None, guidance: str | None = None,
) -> DecisionRequest:
    """Everything one decision needs, read from the event store (the task's events, its tenant, the
    contact's other tasks); `contact`/`contact_name` default to the task's, `settings` to the tenant's as stored."""
    app = _app(source)
    kind = task_type(task.task_type)
    settings = settings if settings is not None else tenant_settings_of(app, task.tenant)
    plan = task.outreach or {}
    contact = contact or task.contact
    contact_name = contact_name or plan.get("contact_name")
    conversation = conversation_of(task_events(app, task) if events is None else events)
    left = budget_left(task, now)
    situation = Situation(
        point=point, purpose=purpose, kind=kind, settings=settings, title=task.title, description=task.description,
        context=task.context, contact=contact, contact_name=contact_name, touch=touch,
        touches=Plan.of(plan).touches if plan else None,
        tone=tone, reply_text=reply_text, conversation=conversation, budget_left=left,
        other_tasks=other_tasks(app, task), guidance=guidance, progress=task.progress,
    )
    return DecisionRequest(
        point=point, tenant=task.tenant, task_ref=task.ref, task_type=kind.name, purpose=purpose, contact=contact,
        contact_name=contact_name, touch=touch, tone=tone, reply_text=reply_text, conversation=conversation,
        budget_left=left, outcomes=kind.outcome_codes, settings=settings, prompt=compose_prompt(situation),
        context=task.context,
    )


@dataclass(frozen=True)
class PendingRequest:
    """A decision the task asked for and still waits on, as `Task.pending_decisions` holds it; it reads
    like the `Task.DecisionRequested` that asked, so `request_for` takes either."""

    request_ref: str
    point: str
    purpose: str
    touch: int | None
    tone: str | None
    loop_ref: str | None


def pending_request(task: Task) -> PendingRequest | None:
    """The task's last decision request still waiting for its decision (none recorded, and not given up on
    after a failure), or None."""
    if not task.pending_decisions:
        return None
    ref, pending = next(reversed(task.pending_decisions.items()))
    return PendingRequest(ref, pending["point"], pending["purpose"], pending["touch"], pending["tone"], pending["loop_ref"])


def request_for(
    source: Loopline | UnitOfWork, task: Task, requested: Any, events: Sequence[Any], now: datetime,
    settings: TenantSettings | None = None,
) -> DecisionRequest:
    """The request a `Task.DecisionRequested` asks for: a reply's text from its signal, a follow-up's
    contact from its loop, a touch's number and tone; `settings`, the tenant's when already read."""
    app = _app(source)
    reply_text = contact = contact_name = guidance = None
    if requested.point == "evaluate_reply":
        replied = answered_signal(requested.request_ref)
        signal = next((e for e in events if type(e).__qualname__ == "Task.SignalReceived"
                       and e.signal_ref == replied), None)
        reply_text = str(signal.data.get("body") or signal.data.get("subject") or "") if signal else ""
    if requested.purpose == "guidance":  # every message of the contact the answer is for, and the owner's last word
        reply_text = "\n\n".join(str(e.data.get("body") or e.data.get("subject") or "") for e in unanswered_replies(events))
        guidance = next((e.text for e in reversed(events) if type(e).__qualname__ == "Task.GuidanceGiven"), None)
    if requested.purpose == "followup" and requested.loop_ref:
        loop = _get(app, ids.loop_id(task.tenant, requested.loop_ref))
        if isinstance(loop, OpenLoop):
            contact, contact_name = loop.watch.get("sender"), loop.contact_name
    return build_request(
        app, task, requested.point, purpose=requested.purpose, now=now, touch=requested.touch, tone=requested.tone,
        reply_text=reply_text, contact=contact, contact_name=contact_name, events=events, settings=settings,
        guidance=guidance,
    )


def next_request(source: Loopline | UnitOfWork, task: Task, now: datetime) -> DecisionRequest:
    """The request the task's next decision gets: its pending one if any, else its next touch (an acting
    task) or a follow-up draft (a follow-through task)."""
    events = task_events(source, task)
    pending = pending_request(task)
    if pending is not None:
        return request_for(source, task, pending, events, now)
    if task.outreach is None:
        return build_request(source, task, "draft_message", purpose="followup", now=now, events=events)
    touch = task.touch + 1
    tone = Plan.of(task.outreach).tone(touch)  # the tone the pipeline will ask for (domain/outreach.py)
    return build_request(source, task, "draft_message", purpose="touch", now=now, touch=touch, tone=tone, events=events)
