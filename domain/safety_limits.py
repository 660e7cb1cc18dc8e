"""Every counter's ceiling in one table (seed 002 §7.15): what it counts, its default, how to change it, what it holds.

A limit a tenant may change is a `TenantSettings` field named in `setting` (set with `tenant.configure`), whose
default is the one here; the others are the constants below, read where they are enforced. The `rule` is the
name a violation carries (a `Task.SendDeferred` rule, a held task creation's rule), so `loopline limits` joins
what each limit held back to its row. The README's "Safety" table is rendered from `SAFETY_LIMITS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from loopline.domain.onboarding import RAMP

Scope = Literal["task", "contact", "tenant", "tick", "run", "signal", "message", "delivery", "draft", "batch", "template",
                "routine", "notice", "proposal"]

STEPS_PER_TICK = 20
"""At most this many acting tasks of one tenant take a step in one tick (seed 002 §6.3); the rest wait a minute."""

TASKS_PER_RUN = 25
"""Tasks one analysis run of the outside agent may create (seed 002 §7.9 `maxTasksPerCronRun`)."""

TASKS_PER_SIGNAL = 5
"""Tasks one signal (a webhook event the outside agent reacts to) may create (seed 002 §7.9)."""

SYNTHESIS_ACTIONS_PER_RUN = 3
"""Actions (create, escalate, notify, trigger, brief) one synthesis run of the proactive brain takes (seed 000 Part 3)."""

# The synthesis run's model turns and the proposal pipeline's ceilings: their rows below say what each counts.
SYNTHESIS_TURNS_PER_RUN = 3
PROPOSALS_PER_DISCOVERY = 3
PROPOSALS_PER_BATCH = 5
MAX_DEBATE_ROUNDS = 3
DEBATE_CALL_ATTEMPTS = 3

HOLD_CAP = 50
"""Owner notices the brain's notification hold keeps while the owner is away or asleep; the oldest goes first."""

DIGEST_ITEMS = 5
"""Held notices the return digest carries (seed 000 Part 3), the newest first; the rest are left out as stale."""

SAME_CONTENT_WINDOW = timedelta(hours=24)
"""A brain notice with the same words as one sent within this window is not sent again (seed 000 Part 3)."""

STALE_AFTER = timedelta(hours=48)
"""A proactive run this far past its wake-up is rescued by the supervisor (seed 000 Part 3: never dies)."""

NO_OP_RUNS_BEFORE_BACKOFF = 5
"""Proactive runs in a row that took no action before the interval doubles (again per 5 more; an action resets it)."""

MESSAGE_ATTEMPTS = 3
"""Tries of a message whose handler fails unexpectedly before it is parked (the dead letter, seed 002 §7.11)."""

DECISION_RETRY_DELAYS = (timedelta(minutes=5), timedelta(minutes=20))
"""When a failed decision is asked again; after the last, the task goes to the owner."""

DELIVERY_ATTEMPTS = 5
"""Tries of one outbound message before it is parked; the waits between them double from `DELIVERY_BACKOFF_SECONDS`."""

DELIVERY_BACKOFF_SECONDS = 30.0

ANOMALY_TURNS = 5
"""Replies the model evaluated for a task without an outcome after which the next one goes to the owner (§7.5)."""

ANOMALY_UNANSWERED_REPLIES = 3
"""The contact's emails in a row that nothing answered, with the task still active, that send it to the owner (§7.5)."""

UPSTREAM_FAILURES = 5
"""Failures in a row of an upstream (the model for a tenant, a delivery channel) that make it degraded (seed 002
§34.2 `consecutiveFailures >= 5`); it recovers by itself with its next success."""

DEGRADED_RETRY = timedelta(hours=1)
"""How often a decision is asked again while the model is degraded: the tick's pace, not a tight loop (§7.11)."""

CONTACT_DAILY_MESSAGES = 1
"""Messages a contact gets in one local day across all of their tasks (seed 002 §21.3 rule 3)."""

DRAFT_SUBJECT_CHARS = 200
DRAFT_BODY_CHARS = 5_000
REPORT_CHARS = 20_000
"""A message the model writes is an email a person at the business would write (seed 002 §36: a few sentences); far
longer is a model that lost its way or obeys a contact's "write me 300 KB", so it is refused, not sent."""
BOUNCE_RATE_PERCENT = 10
"""Hard bounces, in percent of the tenant's sends of the last 7 days, above which it is paused (seed 002 §33.2)."""

BOUNCE_RATE_MIN_SENDS = 20
"""Sends in those days before the bounce rate is judged: one bounce among a new tenant's first three is no pattern."""

SOFT_BOUNCES_AS_HARD = 3
"""Soft bounces of one contact (a full mailbox, a server down) that count as one hard bounce (seed 002 §33.3)."""

BATCH_CONTACTS = 50
"""Contacts one `task.batch` names, one task each (seed 002 §31.7 `maxBatchSubtasksPerParent`)."""

RECURRENCE_INSTANCES = 52
"""Tasks one recurring template creates at most: a year of weekly ones (seed 002 §31.6 `max_instances`)."""

SUBTASKS_PER_PARENT = 8
"""Subtasks one task may have (seed 002 §7.8 `maxSubtasksPerParent`); the next one escalates the parent instead."""

SUBTASK_DEPTH = 2
"""Tasks in a chain of parents, the top one included (§7.8 `maxSubtaskDepth`): a subtask has no subtasks of its own."""

SUBTASKS_PER_EVALUATION = 2
"""Subtasks the agent adds to one parent before one of them ends and it evaluates again (§7.8, §14.5)."""

TODO_REMINDERS = 3
"""Reminders of a staff to-do not done: at its due time, then a day and two days later (seed 002 §31.3)."""

ROUTINE_MIN_INTERVAL_MINUTES = 5
"""The shortest interval of a scheduled routine (seed 003 §2): a minute's routine would be the ticks themselves, and a
failed run is retried after five minutes anyway."""

ROUTINES_PER_TENANT = 50
"""Routines a tenant may have that are neither disabled nor done (seed 003 §2): background work is a few routines."""


@dataclass(frozen=True)
class SafetyLimit:
    rule: str
    """The name its violations carry, and the row `loopline limits` shows them under."""
    scope: Scope
    counts: str
    """What it counts, in the README's words."""
    default: int | str
    seed: str
    """The seed section it comes from: a bare section is seed 002's, another seed is named."""
    held: str
    """What happens to what it holds back, and where that is seen."""
    setting: str | None = None
    """The `TenantSettings` field (`tenant.configure`) that changes it per tenant; None: `changed` says where."""
    changed: str = "a constant in `domain/safety_limits.py`"


_OFF_SCHEMA = ("the answer is refused as off its schema and nothing is sent: asked again, then the task goes to the "
               "owner; `Task.DecisionFailed` in `audit`")

SAFETY_LIMITS: tuple[SafetyLimit, ...] = (
    SafetyLimit(
        "suppressed", "contact", "emails to a contact who opted out (a STOP reply, `contact.unsubscribed`), bounced "
        "hard or complained", "none, ever", "§22, §33.3",
        "every open task of theirs closes as `opted_out` (`undeliverable` after a bounce) in the step that suppresses "
        "them, the owner told once; a new task for them and the owner's `task.reply` are refused; "
        "`loopline contacts suppressed`", changed="`contact.resubscribe` when they opt back in",
    ),
    SafetyLimit(
        "task_message_budget", "task", "emails Loopline sends for one task", "its type's (3 for most)", "§7.1",
        "the send is refused for good and the cadence ends as its type says; `Task.SendDeferred` in `audit`",
        changed="the task type's budget (see [Task types](#task-types))",
    ),
    SafetyLimit(
        "turn_budget", "task", "replies the model evaluates for one task", "its type's (6 for most)", "§7.1",
        "the next reply goes to the owner (`escalated`, reason `turn_budget`)",
        changed="the task type's budget (see [Task types](#task-types))",
    ),
    SafetyLimit(
        "task_expiry", "task", "days a task lives", "its type's (14 for most)", "§7.1",
        "the task expires (`Task.Expired`, its outcome in `tasks show`)",
        changed="`expires_in_days` on `task.create`, else the task type's",
    ),
    SafetyLimit(
        "anomaly_turns", "task", "replies the model evaluated for one task without an outcome, whatever its budget",
        ANOMALY_TURNS, "§7.5", "the next reply goes to the owner before any model call (`escalated`, cause "
        "`anomaly_turns`)",
    ),
    SafetyLimit(
        "anomaly_replies", "task", "the contact's emails in a row that nothing answered, the task still active",
        ANOMALY_UNANSWERED_REPLIES, "§7.5", "the task goes to the owner before any model call (`escalated`, cause "
        "`anomaly_replies`)",
    ),
    SafetyLimit(
        "member_weekly_limit", "contact", "emails one contact gets in any 7 days", 3, "§7.2",
        "the send waits until the oldest of them is 7 days old; `Task.SendDeferred` in `audit`, the time in `tasks show`",
        setting="member_weekly_limit",
    ),
    SafetyLimit(
        "member_daily_limit", "contact", "messages one contact gets in one local day, across their tasks",
        CONTACT_DAILY_MESSAGES, "§21.3",
        "the send waits for the next local day (an answer to the contact's own message is not held); `Task.SendDeferred`",
    ),
    SafetyLimit(
        "tenant_daily_limit", "tenant", "emails the tenant sends in one local day", 15, "§7.3",
        "the send waits for the next day with room; `Task.SendDeferred` in `audit`", setting="daily_send_limit",
    ),
    SafetyLimit(
        "daily_model_call_limit", "tenant", "model calls the tenant's tasks ask for in one local day, retries "
        "included; the owner is told at 80 %", 200, "§7.12",
        "the call waits for the next local day, not dropped (`Task.DecisionHeld` in `audit`, the task's next action "
        "in `tasks show`); `loopline limits` shows the day's tokens beside it", setting="daily_model_call_limit",
    ),
    SafetyLimit(
        "task_model_call_limit", "task", "model calls one task asks for in its life, retries included", 20, "§7.12",
        "the task goes to the owner (`escalated`, cause `task_model_call_limit`); the owner's guidance for it is "
        "refused", setting="task_model_call_limit",
    ),
    SafetyLimit(
        "bounce_rate", "tenant", f"emails of the last 7 days that bounced hard ({SOFT_BOUNCES_AS_HARD} soft count as "
        f"one), once {BOUNCE_RATE_MIN_SENDS} were sent", f"{BOUNCE_RATE_PERCENT} %", "§33.2, §33.3",
        "the tenant is paused (`Tenant.Paused` by `bounce_rate`, counted in `loopline limits`) and its owner told; "
        "`tenant.resume` lifts it",
    ),
    SafetyLimit(
        "warm_up", "tenant", "emails a new tenant sends in one local day: its onboarding phase's cap (`shadow` 0, "
        "`guided` 3, `limited` 10) and, with `warm_up`, 3 / 5 / 10 in the three weeks from its first email",
        "`full`, no warm-up", "§26, §33.2",
        "the send waits for the next local day (in `shadow`, until the owner moves the phase on); `Task.SendDeferred`",
        changed="`tenant.configure` `ramp_phase` and `warm_up`",
    ),
    SafetyLimit(
        "send_window", "tenant", "the local hours (and days) emails to contacts go in", "08:00-20:00, every day", "§29",
        "the send waits for the next opening plus 5 to 20 minutes fixed by its task; `Task.SendDeferred` in `audit`",
        changed="`tenant.configure` `send_window_start`, `send_window_end`, `send_on_weekends`",
    ),
    SafetyLimit(
        "daily_task_limit", "tenant", "tasks Loopline works created in one local day", 50, "§7.9",
        "the `task.create` creates nothing and says why; `TenantTasks.CreationHeld` in `audit`",
        setting="daily_task_limit",
    ),
    SafetyLimit(
        "active_task_limit", "tenant", "tasks Loopline works that are open at once", 100, "§7.9",
        "the `task.create` creates nothing until one closes; `TenantTasks.CreationHeld` in `audit`",
        setting="active_task_limit",
    ),
    SafetyLimit(
        "onboarding_task_limit", "tenant", "tasks Loopline works a new tenant creates in one local day: its onboarding "
        "phase's cap (`shadow` 10, `guided` 15, `limited` 25)", "`full`: none", "§26",
        "the `task.create` creates nothing; `TenantTasks.CreationHeld` in `audit`", changed="`tenant.configure` `ramp_phase`",
    ),
    SafetyLimit(
        "daily_spawned_task_limit", "tenant", "tasks the agent spawns from another task's work in one local day", 10,
        "§7.13", "the `task.create` creates nothing; `TenantTasks.CreationHeld` in `audit` (a spawned task that is "
        "created always waits for the owner's review)", setting="daily_spawned_task_limit",
    ),
    SafetyLimit(
        "subtasks_per_parent", "task", "subtasks one task has (`task.add_subtask`)", SUBTASKS_PER_PARENT, "§7.8",
        "no subtask is created and the parent goes to the owner (`escalated`, cause `subtasks_per_parent`)",
    ),
    SafetyLimit(
        "subtask_depth", "task", "tasks in a chain of parents, the top one included: a subtask has no subtasks",
        SUBTASK_DEPTH, "§7.8", "the `task.add_subtask` is refused naming the limit",
    ),
    SafetyLimit(
        "subtasks_per_evaluation", "task", "subtasks the agent adds to one task before one of them ends",
        SUBTASKS_PER_EVALUATION, "§7.8, §14.5", "the `task.add_subtask` is refused naming the limit (the owner's "
        "are not counted)",
    ),
    SafetyLimit(
        "parent_message_budget", "task", "emails a task and all its subtasks send together", "the parent's budget",
        "§14.3", "the send waits, looked at again each day, until the task's days run out (`Task.SendDeferred` in "
        "`audit`): the count falls only when an email never left",
        changed="the parent's task type's budget; each subtask also has its own (`budget` on `task.add_subtask`)",
    ),
    SafetyLimit(
        "run_task_limit", "run", "tasks one analysis run of the agent creates (`origin` `run`)", TASKS_PER_RUN, "§7.9",
        "the `task.create` creates nothing; `TenantTasks.CreationHeld` in `audit`",
    ),
    SafetyLimit(
        "signal_task_limit", "signal", "tasks created for one signal (`origin` `signal`)", TASKS_PER_SIGNAL, "§7.9",
        "the `task.create` creates nothing; `TenantTasks.CreationHeld` in `audit`",
    ),
    SafetyLimit(
        "synthesis_actions", "run", "actions one synthesis run of the proactive brain takes (scheduling its next run "
        "is free)", SYNTHESIS_ACTIONS_PER_RUN, "seed 000 Part 3",
        "the tool call is refused and the model told to schedule its next run; `ProactiveRun.ActionRefused` in `audit`",
    ),
    SafetyLimit(
        "synthesis_turns", "run", "model turns of one synthesis run (each after the first sees the tool calls' results)",
        SYNTHESIS_TURNS_PER_RUN, "§7.15", "the run closes with what it did, its next run filed as when none is asked "
        "(the tier's pace); `ProactiveRun.RunRecorded` in `audit`",
    ),
    SafetyLimit(
        "proposals_per_discovery", "run", "proposals one discovery run makes from the gaps it found",
        PROPOSALS_PER_DISCOVERY, "seed 003 §6", "the less severe gaps are not proposed; a later run finds them again "
        "while they last",
    ),
    SafetyLimit(
        "debate_rounds", "proposal", "debate rounds (proposer, critic, arbiter) of one proposal", MAX_DEBATE_ROUNDS,
        "seed 001 §4", "the proposal goes to the owner with both positions, flagged `debate_unsettled`; "
        "`Proposal.DebateRoundRecorded` in `audit`",
    ),
    SafetyLimit(
        "debate_call_attempts", "proposal", "tries of one debate model call (a failure or an answer off its schema)",
        DEBATE_CALL_ATTEMPTS, "seed 001 §3", "the debate is abandoned and its gap skipped; `Proposal.DebateAbandoned` "
        "in `audit`",
    ),
    SafetyLimit(
        "proposals_per_batch", "notice", "proposals one notice to the owner carries, grouped by theme, highest impact "
        "first", PROPOSALS_PER_BATCH, "seed 001 §5", "the rest go in further notices sent with it "
        "(`batch-2`, ...); `ProposalBook.BatchesShown` in `audit`",
    ),
    SafetyLimit(
        "hold_cap", "tenant", "owner notices of the brain held (quiet hours, the owner away)", HOLD_CAP,
        "seed 000 Part 3", "the oldest held notice is dropped; `NotificationHold.Dropped` in `audit`",
    ),
    SafetyLimit(
        "digest_items", "tenant", "notices held while the owner was away that the return digest carries",
        DIGEST_ITEMS, "seed 000 Part 3",
        "the newest go, the rest are left out (counted on `NotificationHold.DigestSent` in `audit`)",
    ),
    SafetyLimit(
        "same_notice", "tenant", "the same brain notice sent again within 24 h", "none", "seed 000 Part 3",
        "it is not sent; `NotificationHold.Skipped` in `audit`",
    ),
    SafetyLimit(
        "run_staleness", "run", "hours a proactive run may be past its wake-up", STALE_AFTER // timedelta(hours=1), "seed 000 Part 3",
        "the supervisor (every tick) files its run again, due now; `ProactiveRun.Rescued` in `audit`",
    ),
    SafetyLimit(
        "empty_runs", "run", "proactive runs in a row that took no action", NO_OP_RUNS_BEFORE_BACKOFF,
        "seed 000 Part 3", "the tier's interval doubles, and again every 5 more; an action resets it; "
        "`ProactiveRun.Paced` in `audit`",
    ),
    SafetyLimit(
        "tick_task_steps", "tick", "tasks of one tenant that take a step in one tick", STEPS_PER_TICK, "§6.3, §7.15",
        "the rest step at the next tick, critical first",
    ),
    SafetyLimit(
        "message_attempts", "message", "tries of a command or signal whose handler fails", MESSAGE_ATTEMPTS, "§7.11",
        "the message is parked with its error (the dead letter; `loopline parked list`, `status`)",
    ),
    SafetyLimit(
        "decision_retries", "task", "times a failed model decision is asked again (after 5 and 20 minutes)",
        len(DECISION_RETRY_DELAYS), "§7.11", "the task goes to the owner, who is told",
    ),
    SafetyLimit(
        "delivery_attempts", "delivery", "tries of one outbound message (waits doubling from 30 s)", DELIVERY_ATTEMPTS,
        "§7.11", "the delivery is parked (`loopline status`, `loopline parked list`)",
    ),
    SafetyLimit(
        "upstream_failures", "tenant", "failures in a row of the model for a tenant, or of a delivery channel",
        UPSTREAM_FAILURES, "§34", "degraded mode, shown in `loopline status`: a failed decision is asked again every "
        "hour instead of going to the owner, nothing is sent without one, the owner is told on entering and on "
        "leaving; a channel's deliveries are retried, then parked; the next success ends it",
    ),
    SafetyLimit(
        "batch_contacts", "batch", "contacts one `task.batch` names, one task each", BATCH_CONTACTS, "§31.7",
        "the `task.batch` is refused whole, naming the limit: split it; each task it creates still passes every "
        "contact and tenant limit above",
    ),
    SafetyLimit(
        "recurrence_instances", "template", "tasks one recurring template (`task.recur`) creates", RECURRENCE_INSTANCES,
        "§31.6", "the template ends after its last instance (`Recurrence.Ended` in `audit`) and the owner is told",
        changed="`max_instances` on `task.recur`, at most the default",
    ),
    SafetyLimit(
        "todo_reminders", "task", "reminders the owner gets of a staff to-do not marked done (`action.done`), a day "
        "apart from its due time", TODO_REMINDERS, "§31.3",
        "no more reminders; still not done 3 days after its due time, the task escalates to the owner",
    ),
    SafetyLimit(
        "draft_subject_chars", "draft", "characters of the subject line the model writes (one line)",
        DRAFT_SUBJECT_CHARS, "§7.15", _OFF_SCHEMA,
    ),
    SafetyLimit(
        "draft_body_chars", "draft", "characters of a message the model writes", DRAFT_BODY_CHARS, "§7.15", _OFF_SCHEMA,
    ),
    SafetyLimit(
        "report_chars", "draft", "characters of a research task's report the model writes", REPORT_CHARS, "§31.4",
        _OFF_SCHEMA,
    ),
    SafetyLimit(
        "routine_min_interval", "routine", "minutes between two runs of a scheduled routine (`interval_minutes`)",
        ROUTINE_MIN_INTERVAL_MINUTES, "seed 003 §2", "`routine.create` is refused, naming `interval_minutes`",
    ),
    SafetyLimit(
        "routines_per_tenant", "tenant", "routines of one tenant that are neither disabled nor done",
        ROUTINES_PER_TENANT, "seed 003 §2", "`routine.create` is refused until one is disabled; `loopline routines`",
    ),
)

LIMITS: dict[str, SafetyLimit] = {limit.rule: limit for limit in SAFETY_LIMITS}


def tenant_value(limit: SafetyLimit, settings: Mapping[str, Any]) -> int | str:
    """The limit's value under a tenant's settings (defaults filled in): its setting's, else its default; the window
    and the new tenant's cap read the several settings they are made of."""
    if limit.rule == "send_window":
        days = "every day" if settings["send_on_weekends"] else "weekdays"
        return f"{settings['send_window_start']:02d}:00-{settings['send_window_end']:02d}:00, {days}"
    if limit.rule == "warm_up":
        return f"`{settings['ramp_phase']}`, {'warm-up' if settings['warm_up'] else 'no warm-up'}"
    if limit.rule == "onboarding_task_limit":
        tasks = RAMP[settings["ramp_phase"]].tasks_a_day
        return f"`{settings['ramp_phase']}`: {'none' if tasks is None else tasks}"
    return settings[limit.setting] if limit.setting else limit.default


def default(rule: str) -> int:
    """A limit's default as a number, for the `TenantSettings` field that overrides it."""
    value = LIMITS[rule].default
    assert isinstance(value, int), f"{rule}'s default is {value!r}, not a number"
    return value
