"""The command table: each command type on the wire, the model its `data` is validated into, and its handler.

A new command is a model (a `commands_*.py` module), a handler, and one `CommandRoute` row here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands import (
    cancel_task,
    complete_task,
    create_task,
    give_guidance,
    record_action,
    register_explicit_loop,
    reject_task,
    resolve_loop,
    schedule_proactive_run,
    update_task,
)
from loopline.processors.handlers.actions import request_action
from loopline.processors.handlers.automations import approve, reject
from loopline.processors.handlers.categories import create_batch, schedule_recurrence, stop_recurrence
from loopline.processors.handlers.command_fields import STORED
from loopline.processors.handlers.commands_actions import ActionDecision, ActionDone, ActionRequest
from loopline.processors.handlers.commands_brain import TenantGoal, TenantMemory, note_memory, set_goal
from loopline.processors.handlers.commands_categories import RecurrenceStop, TaskBatch, TaskRecur
from loopline.processors.handlers.commands_goals import TaskOverrideOutcome, TaskRate, TaskReopen
from loopline.processors.handlers.commands_proposals import ProposalApprove, ProposalReject
from loopline.processors.handlers.commands_questions import QuestionAnswer, QuestionAsk
from loopline.processors.handlers.commands_task_controls import TaskControlCommand
from loopline.processors.handlers.routines import (
    RoutineAdopt,
    RoutineControl,
    RoutineCreate,
    RoutineReport,
    RoutineResume,
    adopt_routine,
    create_routine,
    disable_routine,
    pause_routine,
    report_routine_run,
    resume_routine,
    run_routine_now,
)
from loopline.processors.handlers.commands_subtasks import TaskAddSubtask
from loopline.processors.handlers.commands_types import (
    ActionRecordCommon,
    ContactResubscribe,
    LoopRegister,
    LoopResolve,
    RunSchedule,
    SystemPause,
    TaskApprove,
    TaskCancel,
    TaskComplete,
    TaskCreate,
    TaskGuidance,
    TaskReply,
    TaskReview,
    TaskTakeover,
    TaskUpdate,
    TaskWake,
    TenantConfigure,
    TenantPause,
    action_schema,
)
from loopline.processors.messages import Message
from loopline.processors.handlers.goal_progress import override_outcome, rate_outcome, reopen_task
from loopline.processors.handlers.owner import approve_task, reply_to_contact, take_over
from loopline.processors.handlers.proposals import approve_proposal, reject_proposal
from loopline.processors.handlers.pausing import pause_system, pause_tenant, resume_system, resume_tenant
from loopline.processors.handlers.questions import answer, ask
from loopline.processors.handlers.task_controls import pause_task, resume_task, run_task_now
from loopline.processors.handlers.readiness import on_ready
from loopline.processors.handlers.staff_todos import mark_done
from loopline.processors.handlers.subtasks import add_subtask
from loopline.processors.handlers.suppression import resubscribe_contact
from loopline.processors.handlers.tenants import configure_tenant
from loopline.processors.handlers.wakeups import schedule_wakeup
from loopline.processors.handlers.workflow_outputs import WorkflowOutput, record_workflow_output


Handler = Callable[[UnitOfWork, Message, Any], str]
"""Takes the unit of work, the message (tenant, time) and the message's typed command."""


@dataclass(frozen=True)
class CommandRoute:
    """One command type: its name on the wire, the model its `data` is validated into, and its handler."""

    type: str
    command: type
    handle: Handler


COMMANDS: dict[str, CommandRoute] = {
    route.type: route
    for route in (
        CommandRoute("task.create", TaskCreate, create_task),
        CommandRoute("action.record", ActionRecordCommon, record_action),
        CommandRoute("loop.register", LoopRegister, register_explicit_loop),
        CommandRoute("loop.resolve", LoopResolve, resolve_loop),
        CommandRoute("task.update", TaskUpdate, update_task),
        CommandRoute("task.complete", TaskComplete, complete_task),
        CommandRoute("task.cancel", TaskCancel, cancel_task),
        CommandRoute("task.approve", TaskApprove, approve_task),
        CommandRoute("task.reject", TaskReview, reject_task),
        CommandRoute("task.guidance", TaskGuidance, give_guidance),
        CommandRoute("task.reply", TaskReply, reply_to_contact),
        CommandRoute("task.takeover", TaskTakeover, take_over),
        CommandRoute("task.override_outcome", TaskOverrideOutcome, override_outcome),
        CommandRoute("task.reopen", TaskReopen, reopen_task),
        CommandRoute("task.rate", TaskRate, rate_outcome),
        CommandRoute("run.schedule", RunSchedule, schedule_proactive_run),
        CommandRoute("task.wake", TaskWake, schedule_wakeup),
        CommandRoute("workflow.output", WorkflowOutput, record_workflow_output),
        CommandRoute("tenant.configure", TenantConfigure, configure_tenant),
        CommandRoute("tenant.pause", TenantPause, pause_tenant),
        CommandRoute("tenant.resume", TenantPause, resume_tenant),
        CommandRoute("tenant.goal", TenantGoal, set_goal),
        CommandRoute("tenant.memory", TenantMemory, note_memory),
        CommandRoute("system.pause", SystemPause, pause_system),
        CommandRoute("system.resume", SystemPause, resume_system),
        CommandRoute("contact.resubscribe", ContactResubscribe, resubscribe_contact),
        CommandRoute("task.batch", TaskBatch, partial(create_batch, create=create_task)),
        CommandRoute("task.recur", TaskRecur, schedule_recurrence),
        CommandRoute("recurrence.stop", RecurrenceStop, stop_recurrence),
        CommandRoute("task.add_subtask", TaskAddSubtask,
                     lambda uow, msg, cmd: add_subtask(uow, msg, cmd, create=partial(create_task, start=False),
                                                       start=on_ready)),
        CommandRoute("action.request", ActionRequest, request_action),
        CommandRoute("action.approve", ActionDecision, approve),
        CommandRoute("action.reject", ActionDecision, reject),
        CommandRoute("action.done", ActionDone, mark_done),
        CommandRoute("proposal.approve", ProposalApprove, partial(approve_proposal, create=create_task)),
        CommandRoute("proposal.reject", ProposalReject, reject_proposal),
        CommandRoute("question.ask", QuestionAsk, ask),
        CommandRoute("question.answer", QuestionAnswer, answer),
        CommandRoute("routine.create", RoutineCreate, create_routine),
        CommandRoute("routine.adopt", RoutineAdopt, adopt_routine),
        CommandRoute("routine.pause", RoutineControl, pause_routine),
        CommandRoute("routine.resume", RoutineResume, resume_routine),
        CommandRoute("routine.run_now", RoutineControl, run_routine_now),
        CommandRoute("routine.disable", RoutineControl, disable_routine),
        CommandRoute("routine.report", RoutineReport, report_routine_run),
        CommandRoute("task.pause", TaskControlCommand, pause_task),
        CommandRoute("task.resume", TaskControlCommand, resume_task),
        CommandRoute("task.run_now", TaskControlCommand, run_task_now),
    )
}


def command_from_data(command_type: str, data: dict[str, Any]) -> Any:
    """The command of a message's validated `data` as the log stored it (JSON), validated again by its model."""
    model = COMMANDS[command_type].command
    return (action_schema(data.get("action")) if model is ActionRecordCommon else model).model_validate(data, context=STORED)


def handle_command(uow: UnitOfWork, msg: Message) -> str:
    assert msg.command is not None, f"command {msg.ref} reached its handler without its typed command"
    return COMMANDS[msg.type].handle(uow, msg, msg.command)
