"""`loopline prompt TASK_ID --tenant T`: the composed prompt the task's next decision would get."""

from __future__ import annotations

from typing import Annotated

import typer
from eventsourcing.application import AggregateNotFoundError

from loopline.cli.context import fail, flag, opened, parse_now
from loopline.cli.output import out, print_json, styled
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.model.prompts import next_request, pending_request


def prompt(
    task_id: str,
    tenant: Annotated[str, typer.Option("--tenant", help="The task's tenant.")],
    json_: Annotated[bool, flag("--json", "Print JSON instead of text.")] = False,
    now: Annotated[str, typer.Option("--now", help="Time the budget's days are counted from: RFC 3339 with a zone, or now.")] = "now",
) -> None:
    """Print the prompt (system and messages) of the task's pending decision, else of its next touch.

    Read from the event store; nothing is sent to a model and nothing is recorded.
    """
    moment = parse_now(now)
    with opened() as system:
        try:
            task = system.app.repository.get(ids.task_id(tenant, task_id))
        except AggregateNotFoundError:
            task = None
        if not isinstance(task, Task):
            fail(f"no task {task_id!r} for tenant {tenant!r}; see `loopline tasks list`", 1)
        if task.is_closed:
            fail(f"task {task_id!r} is {task.status}: it takes no more decisions", 1)
        pending = pending_request(task) is not None
        request = next_request(system.app, task, moment)
    what = f"{request.point} ({request.purpose}" + (f", touch {request.touch}" if request.touch else "") + (
        f", tone {request.tone}" if request.tone else "") + ")"
    if json_:
        print_json({
            "tenant": tenant, "task_id": task_id, "pending": pending, "point": request.point, "purpose": request.purpose,
            "touch": request.touch, "tone": request.tone, "digest": request.prompt.digest,
            "system": request.prompt.system, "messages": list(request.prompt.messages),
        })
        return
    out.print(styled("decision", "bold", f": {what}, {'pending' if pending else 'next, not yet asked'}"), highlight=False)
    out.print(styled("digest", "bold", f": {request.prompt.digest}"), highlight=False)
    out.print(styled("\n== system ==", "bold"), highlight=False)
    out.print(request.prompt.system, highlight=False, markup=False, soft_wrap=True)
    for message in request.prompt.messages:
        out.print(styled(f"\n== {message['role']} ==", "bold"), highlight=False)
        out.print(message["content"], highlight=False, markup=False, soft_wrap=True)
