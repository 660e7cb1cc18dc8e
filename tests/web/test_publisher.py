"""The dashboard's and the API's one way into the log: what `loopline publish` does, limited to the key's tenant,
and what became of a command a form published."""

from __future__ import annotations

import json

import pytest

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import parse_time
from loopline.runtime.system import System
from loopline.web.command_outcome import REFUSED, SET_ASIDE, TOOK_EFFECT
from tests.hooks.loopline_hooks import Faults
from tests.integration.test_outreach import GYM, at, configure, create, emails_to
from tests.web.conftest import Served

AT = "2026-03-02T09:00:00Z"


def _line(ref: str, tenant: str, type_: str = "task.create", **data: object) -> bytes:
    return json.dumps({"kind": "command", "id": ref, "type": type_, "tenant": tenant, "at": AT, "data": data}).encode()


def test_a_tenants_key_publishes_its_own_lines_and_another_tenants_are_refused_with_why(served: Served) -> None:
    publisher = served.app.state.publisher
    lines = [_line("c1", "gym_a", task_id="t1", title="A"), _line("c2", "gym_b", task_id="t2", title="B"), b"{nope"]
    done = publisher.publish(b"\n".join(lines), "http", "gym_a")
    reasons = {item["line"]: item["reason"] for item in done.rejected()}
    assert set(reasons) == {2, 3}
    assert "not this key's tenant" in reasons[2]
    assert [o.step.message.ref for o in done.own_outcomes() if o.accepted] == ["c1"]


def test_a_command_from_a_form_says_whether_it_took_effect_or_why_it_was_refused(served: Served) -> None:
    publisher = served.app.state.publisher
    took = publisher.command("gym_a", "tenant.configure", {"name": "Gym A"}, "dashboard")
    assert took.status == TOOK_EFFECT and took.id.startswith("dashboard-")
    refused = publisher.command("gym_a", "task.approve", {"task_id": "no-such-task"}, "dashboard")
    assert refused.status == REFUSED and refused.reason


def test_a_command_whose_handler_fails_is_set_aside_with_its_error_not_said_to_take_effect(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults = Faults()
    faults.install(monkeypatch.setattr)
    faults.configure("handler:Poisoned")
    parked = served.app.state.publisher.command("gym_a", "tenant.configure", {"name": "Poisoned"}, "dashboard")
    assert parked.status == SET_ASIDE
    assert "injected handler fault" in parked.reason and "loopline parked retry" in parked.reason


def test_serve_applies_what_it_publishes_and_leaves_delivering_and_deciding_to_loopline_run(served: Served) -> None:
    system, home = served.system, served.system.settings.home
    configure(system)
    create(system, "t1")
    system.scheduler.tick(parse_time(at(0, 1)))  # the first touch is asked of the model, not yet answered

    took = served.app.state.publisher.command(GYM, "tenant.configure", {"name": "Iron Temple"}, "dashboard")
    assert took.status == TOOK_EFFECT
    assert decisions(system) == [] and emails_to(home) == []

    system.drain()  # what `loopline run` beside serve does
    assert len(decisions(system)) == 1 and len(emails_to(home)) == 1


def decisions(system: System) -> list[Task.DecisionRecorded]:
    return [e for e in system.app.events.get(ids.task_id(GYM, "t1")) if isinstance(e, Task.DecisionRecorded)]
