"""The commands of the task categories beyond one task for one contact (seed 002 §31.6, §31.7): a batch, one task
per contact, and a recurring template, one task per firing of its cron. Each task they make is a `task.create`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from loopline.domain.cron import InvalidCron, parse_cron
from loopline.domain.task_types import UnknownTaskType, check_task_type
from loopline.domain.safety_limits import BATCH_CONTACTS, RECURRENCE_INSTANCES
from loopline.processors import limits
from loopline.processors.handlers.command_fields import STORED, Contact, Id, ShortText, Strict, Text
from loopline.processors.handlers.commands_types import TaskCreate, TaskDraft

BATCH_SUFFIX_CHARS = len(f"/{BATCH_CONTACTS}")
"""A batch's task ids are `BATCH/1` … `BATCH/50`, so its own id leaves room for the suffix."""


class BatchContact(Strict):
    contact: Contact = Field(description="who this task is with: an email address when the type sends")
    to_name: ShortText | None = Field(default=None, description="the contact's name, used in greetings and the title")
    context: dict[str, Any] | None = Field(default=None, description="this contact's own context, over the batch's")


class TaskBatch(Strict):
    batch_id: Id = Field(description="the batch's id; its tasks are `BATCH/1` … `BATCH/N` in the order of `contacts`, "
                         "each with `batch_id` in its context; sent again, it creates nothing twice")
    task_type: Text = Field(description="the type of every task of the batch (see [Task types](#task-types))")
    title: Text = Field(description="every task's title, followed by its contact's name (else address)")
    contacts: list[BatchContact] = Field(description=f"1 to {BATCH_CONTACTS} contacts, none twice: one task each, "
                                         "each through every limit a `task.create` passes (a suppressed contact gets "
                                         "none)")
    description: str | None = Field(default=None, description="kept on every task")
    priority: Literal["low", "med", "medium", "high", "critical"] | None = Field(default=None, description="as on `task.create`")
    confidence: float | None = Field(default=None, ge=0, le=1, description="as on `task.create`, for every task")
    context: dict[str, Any] | None = Field(default=None, description="context every task of the batch gets")
    draft: TaskDraft | None = Field(default=None, description="the first message of every task, as on `task.create`")

    @field_validator("batch_id")
    @classmethod
    def _room_for_the_suffix(cls, batch_id: str, info: ValidationInfo) -> str:
        if info.context != STORED and len(batch_id) > limits.MAX_ID_CHARS - BATCH_SUFFIX_CHARS:
            raise ValueError(f"at most {limits.MAX_ID_CHARS - BATCH_SUFFIX_CHARS} characters: its tasks' ids add "
                             f"/1 to /{BATCH_CONTACTS}")
        return batch_id

    @field_validator("task_type")
    @classmethod
    def _known_type(cls, name: str, info: ValidationInfo) -> str:
        if info.context != STORED:
            try:
                check_task_type(name)
            except UnknownTaskType as error:
                raise ValueError(str(error)) from None
        return name

    @field_validator("contacts")
    @classmethod
    def _at_most_the_limit(cls, contacts: list[BatchContact], info: ValidationInfo) -> list[BatchContact]:
        if info.context == STORED:
            return contacts
        if not contacts:
            raise ValueError("name at least one contact")
        if len(contacts) > BATCH_CONTACTS:
            raise ValueError(f"{len(contacts)} contacts, more than the batch_contacts limit of {BATCH_CONTACTS}: "
                             f"split them into batches of at most {BATCH_CONTACTS}")
        seen: dict[str, int] = {}
        for index, member in enumerate(contacts):
            if member.contact in seen:
                raise ValueError(f"[{index}] repeats {limits.shown(member.contact)!r} (already [{seen[member.contact]}]): "
                                 "one task per contact")
            seen[member.contact] = index
        return contacts

    @model_validator(mode="after")
    def _each_task_valid(self, info: ValidationInfo) -> TaskBatch:
        """Each task is checked as its own `task.create` would be (a type that sends needs an address), named by index."""
        if info.context != STORED:
            for index in range(len(self.contacts)):
                _checked(f"contacts[{index}]", lambda index=index: self.task(index, context=None))
        return self

    def task(self, index: int, context: dict[str, str] | None = STORED) -> TaskCreate:
        """The `task.create` of the contact at `index` (counted from 0; its task id counts from 1)."""
        member = self.contacts[index]
        return TaskCreate.model_validate({
            "task_id": f"{self.batch_id}/{index + 1}", "title": f"{self.title}: {member.to_name or member.contact}",
            "description": self.description, "task_type": self.task_type, "priority": self.priority,
            "contact": member.contact, "confidence": self.confidence, "to_name": member.to_name,
            "context": {**(self.context or {}), **(member.context or {}), "batch_id": self.batch_id},
            "draft": self.draft.model_dump() if self.draft else None,
        }, context=context)


class TaskTemplate(Strict):
    """What each instance of a recurring template is: a `task.create` without its id."""

    title: Text = Field(description="every instance's title, followed by its number")
    task_type: Text | None = Field(default=None, description="as on `task.create`")
    description: str | None = Field(default=None, description="kept on every instance")
    contact: Contact | None = Field(default=None, description="as on `task.create`")
    priority: Literal["low", "med", "medium", "high", "critical"] | None = Field(default=None, description="as on `task.create`")
    confidence: float | None = Field(default=None, ge=0, le=1, description="as on `task.create`")
    context: dict[str, Any] | None = Field(default=None, description="context every instance gets")
    to_name: ShortText | None = Field(default=None, description="as on `task.create`")


class TaskRecur(Strict):
    template_id: Id = Field(description="the template's id; instance N is task `TEMPLATE/N`; sent again, it changes "
                            "nothing")
    cron: Text = Field(description="when an instance is created: five fields (minute hour day-of-month month "
                       "day-of-week; `*`, lists, ranges, steps) in the tenant's time zone, e.g. `0 8 * * 1`")
    max_instances: int = Field(default=RECURRENCE_INSTANCES, ge=1, le=RECURRENCE_INSTANCES,
                               description="after this many instances the template ends (the recurrence_instances "
                               "limit)")
    template: TaskTemplate = Field(description="each instance's fields (below)")

    @field_validator("max_instances", mode="before")
    @classmethod
    def _within_the_limit(cls, value: Any) -> Any:
        if isinstance(value, int) and value > RECURRENCE_INSTANCES:
            raise ValueError(f"{value} is more than the recurrence_instances limit of {RECURRENCE_INSTANCES} (a year of "
                             "weekly tasks): give at most that, and a new template after its last")
        return value

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, cron: str) -> str:
        try:
            parse_cron(cron)
        except InvalidCron as error:
            raise ValueError(str(error)) from None
        return cron

    @field_validator("template_id")
    @classmethod
    def _room_for_the_number(cls, template_id: str, info: ValidationInfo) -> str:
        room = limits.MAX_ID_CHARS - len(f"/{RECURRENCE_INSTANCES}")
        if info.context != STORED and len(template_id) > room:
            raise ValueError(f"at most {room} characters: its instances' ids add /1 to /{RECURRENCE_INSTANCES}")
        return template_id

    @model_validator(mode="after")
    def _instance_valid(self, info: ValidationInfo) -> TaskRecur:
        if info.context != STORED:
            _checked("template", lambda: instance_of(self.template.model_dump(mode="json"), self.template_id, 1,
                                                     context=None))
        return self


class RecurrenceStop(Strict):
    template_id: Id = Field(description="a template `task.recur` made; it creates no more instances (those made stay)")
    reason: Text = Field(description="why, in the trail")


def _checked(where: str, make: Callable[[], TaskCreate]) -> None:
    """A task a command would make, checked as its own `task.create` is at the edge; the error names where it is."""
    try:
        make()
    except ValidationError as error:
        problem = error.errors()[0]
        field = ".".join(str(part) for part in problem["loc"])
        raise ValueError(f"{where}.{field}: {problem['msg'].removeprefix('Value error, ')}") from None


def instance_of(template: dict[str, Any], template_id: str, number: int,
                context: dict[str, str] | None = STORED) -> TaskCreate:
    """Instance `number` of a template as its `task.create`, with `template_id` and its number in its context."""
    fields = {key: value for key, value in template.items() if value is not None}
    return TaskCreate.model_validate({
        **fields, "task_id": f"{template_id}/{number}", "title": f"{template['title']} #{number}",
        "context": {**(template.get("context") or {}), "template_id": template_id, "instance": number},
    }, context=context)
