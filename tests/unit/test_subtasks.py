"""Subtasks (seed 002 §14, §7.8): a parent's status follows its children's as §14.4 derives it, siblings wait for the
ones they depend on, a deferred one waits for its start, and the spawn limits hold."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from itertools import product
from typing import Any

import pytest

from loopline.domain.status import TaskStatus
from loopline.domain.subtasks import NEEDS_EVALUATION, Child, Requirement, parent_status
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

S = TaskStatus
USER = "user_xyz"
T0 = parse_time("2026-03-02T14:00:00Z")
LATER = T0 + timedelta(hours=1)


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    yield running
    running.close()


def send(loopline: InMemoryLoopline, ref: str, type_: str, at: Any = LATER, **data: Any) -> Any:
    [outcome] = loopline.publish(command(ref, type_, format_time(at), USER, **data))
    return outcome


def plan(loopline: InMemoryLoopline, parent: str = "goal") -> None:
    assert send(loopline, f"create-{parent}", "task.create", at=T0, task_id=parent, title="win back Alex").accepted


def add(loopline: InMemoryLoopline, ref: str, parent: str = "goal", again: bool = False, **fields: Any) -> Any:
    return send(loopline, f"add-{ref}{'-again' if again else ''}", "task.add_subtask", parent_id=parent, task_id=ref,
                title=f"step {ref}", **fields)


def subtask_events(loopline: InMemoryLoopline, cls: type) -> list[Any]:
    return [event for event in loopline.events() if isinstance(event, cls)]


OUTCOMES = ("completed", "cancelled", "expired", "escalated", "waiting", "executing", "pending_review")
"""What a subtask may have come to: its ends, and the statuses it may still be in."""


def end_as(loopline: InMemoryLoopline, ref: str, outcome: str) -> None:
    """Moves subtask `ref` (created executing, or in review for `pending_review`) to `outcome`; an expiry is the
    tick's, after every subtask was driven."""
    moves = {
        "completed": ("task.complete", {"summary": "done"}), "cancelled": ("task.cancel", {"reason": "not needed"}),
        "escalated": ("task.update", {"status": "escalated", "notes": "stuck"}),
        "waiting": ("task.update", {"status": "waiting", "notes": "asked the coach"}),
    }
    if outcome in moves:
        type_, data = moves[outcome]
        assert send(loopline, f"{type_}-{ref}", type_, task_id=ref, **data).accepted


def expected(required: str, optional: str, best_effort: str) -> tuple[str, TaskStatus]:
    """§14.4 and §14.6 in the owner's words: (what the parent's children make it, the status it shows)."""
    if required in ("escalated", "expired"):  # a required step failed or went to the owner: so does the parent
        return "escalated", S.ESCALATED
    if "executing" in (required, optional, best_effort):
        return "executing", S.EXECUTING
    if "waiting" in (required, optional):  # a best-effort step waiting holds nothing
        return "waiting", S.WAITING
    if "pending_review" in (required, optional, best_effort):  # the owner reviews a step: the parent waits on them
        return "pending_review", S.WAITING
    if best_effort == "waiting":
        return "executing", S.EXECUTING
    return NEEDS_EVALUATION, S.EXECUTING  # every step ended: the parent's goal is evaluated next


@pytest.mark.parametrize("outcomes", list(product(OUTCOMES, repeat=3)), ids="-".join)
def test_a_parent_takes_the_status_its_required_optional_and_best_effort_subtasks_give_it(
    outcomes: tuple[str, str, str],
) -> None:
    """Every one of the 343 combinations of what its required, optional and best-effort subtask came to."""
    loopline = InMemoryLoopline()
    try:
        plan(loopline)
        refs = ("required", "optional", "best_effort")
        for ref, outcome in zip(refs, outcomes, strict=True):
            # One that is to expire lives a day; the others outlive the tick that expires it.
            add(loopline, ref, requirement=ref, by="owner", budget={"days": 1 if outcome == "expired" else 30},
                confidence=0.1 if outcome == "pending_review" else 0.9)
        for ref, outcome in zip(refs, outcomes, strict=True):
            end_as(loopline, ref, outcome)
        if "expired" in outcomes:
            loopline.tick(T0 + timedelta(days=2))

        derived, status = expected(*outcomes)
        # A parent with the owner pauses its started subtasks (§17.2): they wait for the owner's answer.
        paused = {"expired": S.EXPIRED, **({"executing": S.WAITING} if status is S.ESCALATED else {})}
        assert [loopline.task(USER, ref).status for ref in refs] == [paused.get(o, S(o)) for o in outcomes]
        parent = loopline.task(USER, "goal")
        assert [parent.subtasks[ref]["status"] for ref in refs] == [paused.get(o, S(o)) for o in outcomes]
        assert (parent.status, parent.subtasks_derived) == (status, derived)
    finally:
        loopline.close()


def test_parent_status_follows_seed_14_4_for_a_required_escalation_and_optional_failures() -> None:
    required, optional = Requirement.REQUIRED, Requirement.OPTIONAL
    assert parent_status([Child("a", required, S.ESCALATED), Child("b", optional, S.EXECUTING)]) == S.ESCALATED
    assert parent_status([Child("a", required, S.COMPLETED), Child("b", optional, S.ESCALATED)]) == NEEDS_EVALUATION
    assert parent_status([Child("a", required, S.CANCELLED), Child("b", optional, S.EXPIRED)]) == NEEDS_EVALUATION
    assert parent_status([Child("a", required, S.DORMANT)]) == S.WAITING


def test_a_subtask_waits_for_the_sibling_it_depends_on_and_starts_when_it_finishes(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "research")
    add(loopline, "draft", depends_on=["research"])
    assert loopline.task(USER, "draft").status is S.WAITING
    assert loopline.task(USER, "goal").status is S.EXECUTING  # the research runs

    assert send(loopline, "done", "task.complete", task_id="research", summary="history pulled").accepted

    draft = loopline.task(USER, "draft")
    assert draft.status is S.EXECUTING
    [woken] = [e for e in subtask_events(loopline, Task.WokenUp) if e.task_ref == "draft"]
    assert woken.cause == "subtask_unblocked" and "research" in woken.reason


def test_a_deferred_subtask_waits_for_its_start(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    starts = T0 + timedelta(days=3)
    assert add(loopline, "follow_up", starts_at=format_time(starts)).accepted
    assert loopline.task(USER, "follow_up").status is S.WAITING
    assert loopline.task(USER, "goal").status is S.WAITING

    loopline.tick(starts - timedelta(hours=2))
    assert loopline.task(USER, "follow_up").status is S.WAITING
    loopline.tick(starts + timedelta(minutes=1))

    assert loopline.task(USER, "follow_up").status is S.EXECUTING
    assert loopline.task(USER, "goal").status is S.EXECUTING


def test_a_subtask_has_no_subtasks_of_its_own(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "step")

    refused = add(loopline, "deeper", parent="step")

    assert not refused.accepted and "subtask_depth" in refused.detail and "parent_id" in refused.detail
    assert loopline.task(USER, "step").subtasks == {}


def test_the_agent_adds_two_subtasks_per_evaluation_and_the_owner_is_not_counted(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    assert add(loopline, "a").accepted and add(loopline, "b").accepted

    refused = add(loopline, "c")
    assert not refused.accepted and "subtasks_per_evaluation" in refused.detail
    assert add(loopline, "by_owner", by="owner").accepted

    assert send(loopline, "done-a", "task.complete", task_id="a", summary="done").accepted
    assert add(loopline, "c", again=True).accepted  # a step ended: the agent evaluated and plans the next one


def test_a_ninth_subtask_sends_the_parent_to_the_owner_instead(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    for n in range(8):
        assert add(loopline, f"s{n}", by="owner").accepted

    ninth = add(loopline, "s8", by="owner")

    assert ninth.accepted and "was not created" in (ninth.warning or "")
    parent = loopline.task(USER, "goal")
    assert parent.status is S.ESCALATED and len(parent.subtasks) == 8
    [escalated] = [e for e in subtask_events(loopline, Task.Escalated) if e.task_ref == "goal"]
    assert escalated.cause == "subtasks_per_parent" and "at most 8" in escalated.reason


def test_every_subtask_ended_leaves_the_parent_to_be_evaluated_and_a_required_failure_escalates_it(
    loopline: InMemoryLoopline,
) -> None:
    plan(loopline)
    add(loopline, "tag", requirement="optional")
    add(loopline, "send", requirement="required")
    send(loopline, "tag-stuck", "task.update", task_id="tag", status="escalated", notes="PushPress is down")
    assert loopline.task(USER, "goal").status is S.EXECUTING  # an optional step's failure holds nothing
    [noted] = [e for e in subtask_events(loopline, Task.SubtaskMoved) if e.subtask_ref == "tag"]
    assert "the parent goes on without it" in noted.note

    send(loopline, "send-stuck", "task.update", task_id="send", status="escalated", notes="no address")

    parent = loopline.task(USER, "goal")
    assert parent.status is S.ESCALATED
    assert subtask_events(loopline, Task.Escalated)[-1].reason.startswith("required subtask send")


def test_a_version_4_snapshot_loads_as_a_task_without_subtasks(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    snapshot = Task.Snapshot.take(loopline.task(USER, "goal"))
    state = {k: v for k, v in snapshot.state.items()
             if k not in ("subtask_of", "subtasks", "subtasks_derived", "spawned_since_evaluation")}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state | {"class_version": 4})

    loaded = old.mutate(None)

    assert loaded.subtask_of is None and loaded.subtasks == {} and loaded.subtask_depth == 1


def test_a_closed_parent_cancels_its_open_subtasks(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "research")
    add(loopline, "follow_up", starts_at=format_time(T0 + timedelta(days=3)))
    send(loopline, "research-done", "task.complete", task_id="research", summary="history pulled")

    assert send(loopline, "won", "task.complete", task_id="goal", summary="Alex rejoined").accepted

    follow_up = loopline.task(USER, "follow_up")
    assert follow_up.status is S.CANCELLED
    [cancelled] = [e for e in subtask_events(loopline, Task.Cancelled) if e.task_ref == "follow_up"]
    assert cancelled.reason == "its parent goal is completed"
    assert loopline.task(USER, "research").status is S.COMPLETED
    assert loopline.task(USER, "goal").subtasks["follow_up"]["status"] == S.CANCELLED


def test_a_subtask_of_a_closed_parent_is_not_reopened_until_its_parent_is(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "research")
    send(loopline, "research-done", "task.complete", task_id="research", summary="history pulled")
    assert send(loopline, "won", "task.complete", task_id="goal", summary="Alex rejoined").accepted

    refused = send(loopline, "reopen-research", "task.reopen", task_id="research", reason="pull a year more")
    assert not refused.accepted
    assert "research is a subtask of goal, which is completed: reopen goal first" in refused.detail
    assert loopline.task(USER, "research").status is S.COMPLETED

    assert send(loopline, "reopen-goal", "task.reopen", task_id="goal", reason="he has not paid").accepted
    assert send(loopline, "reopen-research-again", "task.reopen", task_id="research", reason="pull a year more").accepted
    assert loopline.task(USER, "research").status is S.EXECUTING


def test_a_parent_with_the_owner_starts_no_subtask_until_the_owners_guidance(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "research")
    add(loopline, "draft", depends_on=["research"])
    send(loopline, "stuck", "task.update", task_id="goal", status="escalated", notes="which offer may we make?")

    send(loopline, "done", "task.complete", task_id="research", summary="history pulled")
    assert loopline.task(USER, "draft").status is S.WAITING

    send(loopline, "answer", "task.guidance", task_id="goal", text="offer a free month")

    assert loopline.task(USER, "draft").status is S.EXECUTING
    [woken] = [e for e in subtask_events(loopline, Task.WokenUp) if e.task_ref == "draft"]
    assert woken.reason == "its parent goal is back from the owner"
    assert loopline.task(USER, "goal").subtasks["draft"]["status"] == S.EXECUTING


def test_the_parents_agent_is_woken_to_evaluate_after_every_subtask_that_ends(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "research")
    add(loopline, "tag", requirement="optional")

    send(loopline, "done", "task.complete", task_id="research", summary="history pulled")
    send(loopline, "off", "task.cancel", task_id="tag", reason="tags are off")

    woken = [e for e in subtask_events(loopline, Task.WokenUp) if e.task_ref == "goal"]
    assert [(e.cause, e.reason) for e in woken] == [
        ("subtask_ended", "subtask research completed; its subtasks make it executing"),
        ("subtask_ended", "subtask tag cancelled; its subtasks make it needs_evaluation"),
    ]
    assert loopline.task(USER, "goal").status is S.EXECUTING


def test_a_parent_going_to_the_owner_pauses_its_started_subtasks_until_the_guidance(loopline: InMemoryLoopline) -> None:
    plan(loopline)
    add(loopline, "research")
    add(loopline, "tag", requirement="optional")

    send(loopline, "stuck", "task.update", task_id="goal", status="escalated", notes="which offer may we make?")
    assert [loopline.task(USER, ref).status for ref in ("research", "tag")] == [S.WAITING, S.WAITING]

    send(loopline, "answer", "task.guidance", task_id="goal", text="offer a free month")

    assert [loopline.task(USER, ref).status for ref in ("research", "tag")] == [S.EXECUTING, S.EXECUTING]
    assert loopline.task(USER, "goal").status is S.EXECUTING


def add_automation(loopline: InMemoryLoopline, ref: str, **fields: Any) -> Any:
    """Adds a `system_automation` subtask that calls a webhook, in a mode that calls it without the owner's approval."""
    assert send(loopline, f"auto-{ref}", "tenant.configure", at=T0, execution_mode="limited_auto").accepted
    return add(loopline, ref, task_type="system_automation", confidence=0.96,
               context={"action": "call_webhook", "params": {"event": "tag_at_risk"}}, **fields)


def webhooks_of(loopline: InMemoryLoopline, ref: str) -> list[Any]:
    return [e for e in subtask_events(loopline, Task.ActionRecorded) if e.task_ref == ref]


def test_an_automation_subtask_calls_its_webhook_only_once_the_sibling_it_depends_on_finished(
    loopline: InMemoryLoopline,
) -> None:
    plan(loopline)
    add(loopline, "research")

    assert add_automation(loopline, "tag", depends_on=["research"]).accepted
    assert (loopline.task(USER, "tag").status, webhooks_of(loopline, "tag")) == (S.WAITING, [])

    assert send(loopline, "done", "task.complete", task_id="research", summary="history pulled").accepted
    tag = loopline.task(USER, "tag")
    assert (tag.status, tag.outcome, len(webhooks_of(loopline, "tag"))) == (S.COMPLETED, "executed", 1)
    assert loopline.task(USER, "goal").subtasks["tag"]["status"] == S.COMPLETED


@pytest.mark.parametrize("sibling_done_before_start", [True, False])
def test_a_deferred_automation_subtask_calls_its_webhook_once_started_and_its_sibling_finished(
    loopline: InMemoryLoopline, sibling_done_before_start: bool,
) -> None:
    plan(loopline)
    add(loopline, "research")
    starts = T0 + timedelta(days=3)

    added = add_automation(loopline, "tag", depends_on=["research"], starts_at=format_time(starts))
    assert added.accepted, added.detail
    if sibling_done_before_start:
        send(loopline, "done", "task.complete", task_id="research", at=starts - timedelta(days=1), summary="pulled")
    loopline.tick(starts - timedelta(hours=2))
    assert (loopline.task(USER, "tag").status, webhooks_of(loopline, "tag")) == (S.WAITING, [])

    loopline.tick(starts + timedelta(minutes=1))
    if not sibling_done_before_start:
        assert (loopline.task(USER, "tag").status, webhooks_of(loopline, "tag")) == (S.WAITING, [])
        send(loopline, "done", "task.complete", task_id="research", at=starts + timedelta(hours=1), summary="pulled")
    tag = loopline.task(USER, "tag")
    assert (tag.status, tag.outcome, len(webhooks_of(loopline, "tag"))) == (S.COMPLETED, "executed", 1)


def test_a_chain_of_automation_subtasks_runs_through_in_the_step_that_frees_its_first(
    loopline: InMemoryLoopline,
) -> None:
    plan(loopline)
    add(loopline, "research")
    chain = [f"hook{n}" for n in range(6)]
    for before, ref in zip(["research", *chain], chain, strict=False):
        assert add_automation(loopline, ref, depends_on=[before], by="owner").accepted

    assert send(loopline, "done", "task.complete", task_id="research", summary="history pulled").accepted

    goal = loopline.task(USER, "goal")
    assert [loopline.task(USER, ref).outcome for ref in chain] == ["executed"] * len(chain)
    assert [goal.subtasks[ref]["status"] for ref in chain] == [S.COMPLETED] * len(chain)
