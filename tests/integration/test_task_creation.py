"""Creation through the embedded system (DESIGN11 §2–§3): tenant settings decide the gate, acting tasks
record their outreach plan, and a second task for the same contact and type merges into the first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.task import Task
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish

T0 = "2026-03-02T09:00:00Z"
GYM = "gym"
SAM = "sam@example.com"


@pytest.fixture
def gym(home: Path) -> Any:
    system = build_system(home)
    yield system
    system.close()


def churn(ref: str, task_id: str, **data: Any) -> dict[str, Any]:
    fields = {"title": "Check in with Sam", "task_type": "churn_risk", "contact": SAM, **data}
    return command(ref, "task.create", T0, GYM, task_id=task_id, **fields)


def task(system: System, ref: str) -> Task:
    found = system.app.repository.get(ids.task_id(GYM, ref))
    assert isinstance(found, Task)
    return found


def configure(system: System, **settings: Any) -> None:
    ref = "cfg-" + "-".join(f"{key}.{value}" for key, value in sorted(settings.items()))
    assert publish(system, command(ref, "tenant.configure", T0, GYM, **settings)).rejected == []


def test_a_tenant_never_configured_is_manual_and_reviews_every_acting_task(gym: System) -> None:
    assert publish(gym, churn("c1", "t1", confidence=0.99)).rejected == []
    created = task(gym, "t1")
    assert created.status == "pending_review"
    assert created.outreach is not None and created.outreach["cadence"] == "standard"


def test_limited_auto_lets_a_confident_task_through_and_plans_its_outreach(gym: System, monkeypatch: pytest.MonkeyPatch) -> None:
    readied: list[str] = []
    for handlers in ("commands", "owner"):  # creation, and the owner's approval
        monkeypatch.setattr(f"loopline.processors.handlers.{handlers}.on_ready", lambda uow, t, now: readied.append(t.ref))
    configure(gym, execution_mode="limited_auto")
    draft = {"subject": "Hey Sam", "body": "How are things?"}
    assert publish(gym, churn("c1", "t1", confidence=0.8, draft=draft, to_name="Sam"),
                   churn("c2", "t2", confidence=0.5, contact="jo@example.com")).rejected == []
    ready, review = task(gym, "t1"), task(gym, "t2")
    assert (ready.status, review.status) == ("ready", "pending_review")
    assert ready.outreach is not None
    assert {k: ready.outreach[k] for k in ("budget_messages", "budget_turns", "intervals", "tones", "on_exhaustion",
                                           "draft", "contact_name")} == {
        "budget_messages": 3, "budget_turns": 6, "intervals": [3, 5, 6],
        "tones": ["friendly_checkin", "direct_offer_help", "final_open_door"], "on_exhaustion": "cancel",
        "draft": draft, "contact_name": "Sam",
    }
    assert ready.outreach["ends_at"] == ready.expires_at
    assert (ready.priority, review.priority) == ("high", "high")  # the type's, as none was given
    events = [type(e).__name__ for e in gym.app.events.get(ready.id)]
    assert events[:2] == ["Created", "OutreachPlanned"]
    assert readied == ["t1"]  # the hook runs once, for the task that became ready
    assert publish(gym, command("a1", "task.approve", T0, GYM, task_id="t2")).rejected == []
    assert readied == ["t1", "t2"]


def test_a_second_create_for_the_same_contact_and_type_merges_into_the_active_task(gym: System) -> None:
    report = publish(gym, churn("c1", "t1", context={"risk": 0.7, "last_visit": "2026-02-01"}),
                     churn("c2", "t2", contact="SAM@Example.com", context={"risk": 0.9}))
    assert report.rejected == []
    [warning] = [o.warning for o in report.outcomes if o.warning]
    assert warning.startswith("merged into active task t1")
    assert task(gym, "t1").context == {"risk": 0.9, "last_visit": "2026-02-01"}
    assert not list(gym.app.events.get(ids.task_id(GYM, "t2")))
    index = gym.app.repository.get(ids.contact_index_id(GYM, SAM))
    assert isinstance(index, ContactIndex) and index.tasks == {"churn_risk": "t1"}


def test_another_type_or_a_closed_task_gets_its_own_task(gym: System) -> None:
    assert publish(
        gym, churn("c1", "t1"), churn("c2", "w1", task_type="win_back"),
        command("x1", "task.cancel", T0, GYM, task_id="t1", reason="member came back"),
        churn("c3", "t2"),
    ).rejected == []
    assert (task(gym, "w1").task_type, task(gym, "t2").status) == ("win_back", "pending_review")
    index = gym.app.repository.get(ids.contact_index_id(GYM, SAM))
    assert index.tasks == {"churn_risk": "t2", "win_back": "w1"}


@pytest.mark.parametrize(("data", "refusal"), [
    ({"task_type": "winback"}, "data.task_type: unknown task type 'winback'; did you mean 'win_back'? the task types are"),
    ({"task_type": "payment_recovery", "contact": "not-an-email"},
     "data.contact: 'not-an-email' is not an email address, and task_type payment_recovery sends email to its contact"),
])
def test_an_unknown_type_or_a_sending_type_without_an_address_is_refused_at_the_edge(data: dict[str, Any],
                                                                                      refusal: str) -> None:
    with pytest.raises(InvalidMessage) as refused:
        parse_message(json.dumps(churn("c1", "t1", **data)))
    assert str(refused.value).startswith(refusal)


def test_a_type_that_sends_nothing_takes_any_contact() -> None:
    created = parse_message(json.dumps(command("c1", "task.create", T0, GYM, task_id="f1", title="Meet Ana",
                                               task_type="meeting_scheduling", contact="Ana (Slack U42)")))
    assert created.data["contact"] == "Ana (Slack U42)"


def test_follow_through_tasks_keep_todays_behaviour(gym: System) -> None:
    configure(gym, execution_mode="manual")
    assert publish(
        gym,
        # No type: the agent works it, even with an address and a draft (kept in its context).
        command("c1", "task.create", T0, GYM, task_id="f1", title="Meet", contact=SAM,
                draft={"subject": "Hi", "body": "Lunch?"}, to_name="Sam"),
        command("c2", "task.create", T0, GYM, task_id="f2", title="Meet", contact=SAM, confidence=0.2),
        # A type that sends nothing stays follow-through.
        command("c3", "task.create", T0, GYM, task_id="f3", title="Meet", contact=SAM, task_type="meeting_scheduling"),
    ).rejected == []
    assert [task(gym, ref).status for ref in ("f1", "f2", "f3")] == ["executing", "pending_review", "executing"]
    assert task(gym, "f1").context == {"draft": {"subject": "Hi", "body": "Lunch?"}, "to_name": "Sam"}
    assert all(task(gym, ref).outreach is None and task(gym, ref).priority is None for ref in ("f1", "f2", "f3"))
    assert not list(gym.app.events.get(ids.contact_index_id(GYM, SAM)))
