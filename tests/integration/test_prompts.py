"""Decision requests built from the event store of a running system, and `loopline prompt` showing them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import parse_time
from loopline.processors.model.prompts import build_request, next_request
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish, signal
from tests.e2e.cli import Cli

GYM = "renegade"
SAM = "sam@example.com"
T0 = "2026-03-02T09:00:00Z"
PROFILE = {"display_name": "CrossFit Renegade", "typical_greeting": "Hey!", "sign_off": "Coach Mike",
           "never_mention": ["weight loss"]}


@pytest.fixture
def gym(home: Path) -> Iterator[System]:
    system = build_system(home)
    report = publish(
        system,
        command("cfg", "tenant.configure", T0, GYM, execution_mode="limited_auto", profile=PROFILE),
        command("c1", "task.create", T0, GYM, task_id="t1", title="Sam has not been in for 18 days",
                task_type="churn_risk", contact=SAM, to_name="Sam", confidence=0.5, context={"member_tenure_days": 200}),
        command("c2", "task.create", T0, GYM, task_id="t2", title="Sam's card was declined", task_type="payment_recovery",
                contact=SAM, to_name="Sam", confidence=0.5),
    )
    assert report.rejected == []
    yield system
    system.close()


def task(system: System, ref: str) -> Task:
    found = system.app.repository.get(ids.task_id(GYM, ref))
    assert isinstance(found, Task)
    return found


def test_the_next_touch_of_a_new_acting_task_is_its_first_with_the_cadences_first_tone(gym: System) -> None:
    request = next_request(gym.app, task(gym, "t1"), parse_time("2026-03-05T09:00:00Z"))

    assert (request.point, request.purpose, request.touch, request.tone) == ("draft_message", "touch", 1, "friendly_checkin")
    assert (request.contact, request.contact_name, request.settings.profile.sign_off) == (SAM, "Sam", "Coach Mike")
    assert request.budget_left == {"messages": 3, "turns": 6, "days": 11}
    assert "verbal_commitment" in request.outcomes
    user = request.prompt.messages[0]["content"]
    assert "Write touch 1 of 3 to Sam, tone: friendly_checkin" in user
    assert "[payment_recovery, critical] Sam's card was declined (pending_review)" in user  # the contact's other task
    assert "- Business: CrossFit Renegade" in request.prompt.system
    assert "# Churn Risk" in request.prompt.system
    draft = OfflinePolicy().decide(request)
    assert draft.output["body"].startswith("Hey Sam!") and draft.prompt_digest == request.prompt.digest


def test_a_reply_evaluation_sees_the_conversation_so_far(gym: System) -> None:
    report = publish(
        gym,
        command("ok", "task.approve", "2026-03-02T09:30:00Z", GYM, task_id="t1"),
        command("a1", "action.record", "2026-03-02T10:00:00Z", GYM, task_id="t1", action="send_email", to=SAM,
                subject="Checking in", body="Hey Sam! All good?"),
        signal("r1", "email.received", "2026-03-03T08:00:00Z", GYM, sender=SAM, subject="Re: Checking in",
               body="Maybe next week, been busy"),
    )
    assert report.rejected == []
    t1 = task(gym, "t1")

    request = build_request(gym.app, t1, "evaluate_reply", purpose="reply", reply_text="Maybe next week, been busy",
                            now=parse_time("2026-03-03T08:00:00Z"))

    user = request.prompt.messages[0]["content"]
    assert [turn.author for turn in request.conversation] == ["agent", "contact"]
    assert "agent:\nSubject: Checking in\n\nHey Sam! All good?" in user
    assert "contact:\nMaybe next week, been busy" in user
    assert "Sam just replied:\n\n> Maybe next week, been busy" in user
    assert OfflinePolicy().decide(request).output["decision"] == "wait"


def loopline(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return Cli(home).run(args)


def test_loopline_prompt_prints_the_composed_prompt(gym: System, home: Path) -> None:
    expected = next_request(gym.app, task(gym, "t1"), parse_time("2026-03-05T09:00:00Z"))
    gym.close()

    shown = loopline(home, "prompt", "t1", "--tenant", GYM, "--json", "--now", "2026-03-05T09:00:00Z")
    text = loopline(home, "prompt", "t1", "--tenant", GYM, "--now", "2026-03-05T09:00:00Z")

    assert shown.returncode == 0, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    assert (data["point"], data["touch"], data["tone"], data["pending"]) == ("draft_message", 1, "friendly_checkin", False)
    assert (data["digest"], data["system"]) == (expected.prompt.digest, expected.prompt.system)
    assert text.returncode == 0, text.stderr
    assert "== system ==" in text.stdout and "# Churn Risk" in text.stdout
    assert "Write touch 1 of 3 to Sam" in text.stdout and expected.prompt.digest in text.stdout


def test_loopline_prompt_for_an_unknown_task_says_so(gym: System, home: Path) -> None:
    gym.close()
    result = loopline(home, "prompt", "nope", "--tenant", GYM)
    assert result.returncode == 1
    assert "no task 'nope' for tenant 'renegade'" in result.stderr
