"""An out-of-office reply pauses an acting task until the return it states, with no model call, no turn counted
and no escalation, and the cadence then goes on (handlers on eventsourcing's in-memory store, fake model)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from tests.conftest import command, signal
from tests.unit.fakes import RecordingDrafter, ScriptedModel

GYM = "gym"
ANN = "ann@example.com"


class Gym:
    """One gym's acting task for Ann on the in-memory store, stepped by the tick and answered by a scripted model."""

    def __init__(self, timezone_name: str = "UTC") -> None:
        self.app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo", "IS_SNAPSHOTTING_ENABLED": "y"})
        self.model = ScriptedModel()
        bus = build_bus(self.app, RecordingDrafter())
        self.router, self.scheduler, self.agent = Router(bus), Scheduler(bus), Agent(bus, self.model)
        self.publish(
            command("cfg", "tenant.configure", "2026-06-01T08:00:00Z", GYM, execution_mode="limited_auto",
                    timezone=timezone_name),
            command("create", "task.create", "2026-06-01T09:00:00Z", GYM, task_id="ann", title="Bring Ann back",
                    task_type="churn_risk", contact=ANN, to_name="Ann", confidence=0.9),
        )
        self.tick("2026-06-01T09:05:00Z")
        assert self.touches() == [1]

    def publish(self, *messages: dict[str, Any]) -> None:
        EmbeddedLog(self.app).append([parse_message(json.dumps(m)) for m in messages], "test")
        assert all(outcome.accepted for outcome in self.router.run_once())
        self.agent.run_once()

    def tick(self, at: str) -> None:
        self.scheduler.tick(parse_time(at))
        self.agent.run_once()

    def reply(self, ref: str, at: str, **data: Any) -> None:
        self.publish(signal(ref, "email.received", at, GYM, sender=ANN, **data))

    def task(self) -> Task:
        task = UnitOfWork(self.app).get(ids.task_id(GYM, "ann"), Task)
        assert task is not None
        return task

    def events(self, kind: type, ref: str = "ann") -> list[Any]:
        return [e for e in self.app.events.get(ids.task_id(GYM, ref)) if isinstance(e, kind)]

    def touches(self) -> list[int]:
        return [e.touch for e in self.events(Task.TouchSent)]

    def evaluations(self) -> int:
        return sum(1 for request in self.model.requests if request.point == "evaluate_reply")


def test_an_out_of_office_reply_pauses_the_task_until_the_stated_date_and_the_cadence_then_resumes() -> None:
    gym = Gym()
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Automatic reply: We miss you",
              body="I am out of the office until June 10 with limited access to email.")

    task = gym.task()
    assert (task.status, task.turns_used, task.next_touch_at) == ("waiting", 0, datetime(2026, 6, 10, 9, tzinfo=timezone.utc))
    assert gym.evaluations() == 0 and task.escalation_reason is None
    [paused] = gym.events(Task.OutOfOfficeReceived)
    assert (paused.returns_on, paused.sign) == ("2026-06-10", "subject “Automatic reply”")
    assert [ref for ref in task.open_loops if ref.startswith("ann/reply/")]  # a real answer meanwhile is still read

    gym.tick("2026-06-04T09:05:00Z")  # touch 2 was due here (standard cadence: 3 days); Ann is away
    gym.tick("2026-06-10T08:59:00Z")
    assert gym.touches() == [1]
    gym.tick("2026-06-10T09:00:00Z")
    assert gym.touches() == [1, 2]
    assert [e.timestamp for e in gym.events(Task.TouchSent)][1] == datetime(2026, 6, 10, 9, tzinfo=timezone.utc)


def test_the_return_date_is_read_in_the_tenants_time_zone() -> None:
    gym = Gym("Europe/Berlin")
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Abwesenheitsnotiz: We miss you",
              body="Ich bin bis zum 10. Juni nicht im Büro.")
    assert gym.task().next_touch_at == datetime(2026, 6, 10, 7, tzinfo=timezone.utc)  # 09:00 in Berlin


def test_an_auto_submitted_reply_without_a_date_pauses_a_week() -> None:
    gym = Gym()
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Re: We miss you", body="Thanks for your email.",
              auto_submitted="auto-replied")
    task = gym.task()
    assert task.next_touch_at == datetime(2026, 6, 8, 18, 10, tzinfo=timezone.utc)
    assert (task.turns_used, gym.evaluations()) == (0, 0)


def test_a_pause_never_brings_the_next_touch_forward() -> None:
    gym = Gym()
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Out of Office", body="Back on 2 June.")
    assert gym.task().next_touch_at == datetime(2026, 6, 4, 9, 5, tzinfo=timezone.utc)  # the cadence's own touch 2


def test_a_person_who_happens_to_be_away_is_answered_by_the_model() -> None:
    gym = Gym()
    gym.reply("ann-1", "2026-06-01T18:10:00Z", subject="Re: We miss you",
              body="I'm out of the office today but yes I'd love to come back")
    assert gym.evaluations() == 1 and gym.task().turns_used == 1
    assert gym.events(Task.OutOfOfficeReceived) == []


def test_a_real_reply_during_the_pause_is_evaluated() -> None:
    gym = Gym()
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Automatic reply: We miss you", body="Out until June 10.")
    assert gym.task().outreach["away_until"] == datetime(2026, 6, 10, 9, tzinfo=timezone.utc)
    gym.reply("ann-1", "2026-06-03T07:00:00Z", subject="Re: We miss you", body="Back early! Is the discount still on?")
    assert gym.evaluations() == 1 and gym.task().turns_used == 1
    assert "away_until" not in gym.task().outreach  # she wrote: she is back


def test_an_out_of_office_reply_drops_the_touch_a_limit_held_back() -> None:
    gym = Gym()
    task = gym.task()
    uow = UnitOfWork(gym.app)
    held = uow.get(task.id, Task)
    assert held is not None
    held.defer_send(rule="member_weekly_limit", reason="three messages this week", until=parse_time("2026-06-05T09:00:00Z"),
                    draft={"subject": "Touch 2", "body": "hi", "touch": 2}, now=parse_time("2026-06-01T10:00:00Z"))
    gym.app.save(held)
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Automatic reply", body="Away until 10 June.")
    assert gym.task().deferred is None
    gym.tick("2026-06-05T09:00:00Z")
    assert gym.touches() == [1] and format_time(gym.task().next_touch_at) == "2026-06-10T09:00:00Z"



def test_every_task_working_the_away_contact_waits_for_her_return_and_her_word_ends_every_pause() -> None:
    gym = Gym()
    gym.publish(command("create-2", "task.create", "2026-06-01T09:00:00Z", GYM, task_id="ann-2",
                        title="Win Ann back", task_type="win_back", contact=ANN, to_name="Ann", confidence=0.9))
    gym.tick("2026-06-01T09:10:00Z")  # one message a day to Ann: win_back's touch 1 waits for tomorrow
    gym.reply("ooo", "2026-06-01T18:10:00Z", subject="Automatic reply", body="I am out of the office until June 10.")
    back = datetime(2026, 6, 10, 9, tzinfo=timezone.utc)
    tasks = [UnitOfWork(gym.app).get(ids.task_id(GYM, ref), Task) for ref in ("ann", "ann-2")]
    assert [task.outreach["away_until"] for task in tasks if task is not None] == [back, back]
    assert gym.evaluations() == 0

    gym.tick("2026-06-05T09:00:00Z")
    assert gym.touches() == [1] and gym.events(Task.TouchSent, "ann-2") == []  # nothing reaches Ann while she is away
    gym.reply("ann-1", "2026-06-06T07:00:00Z", subject="Re: Checking in", body="Back early! Is the discount still on?")
    tasks = [UnitOfWork(gym.app).get(ids.task_id(GYM, ref), Task) for ref in ("ann", "ann-2")]
    assert not any("away_until" in task.outreach for task in tasks if task is not None)
