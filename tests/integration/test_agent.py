"""The decision processor on a real embedded system: one decision per request and one send per decision
whatever crashes, repeats or rival processes do, and a model that stays down sends nothing and escalates."""

from __future__ import annotations

from concurrent import futures
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import parse_time
from loopline.processors.followers.agent import Agent
from loopline.processors.ports import Decision, DecisionModel, DecisionRequest
from loopline.runtime.system import System
from tests.conftest import build_system
from tests.integration.helpers import tick
from tests.integration.test_outreach import GYM, at, configure, create, emails_to, task
from tests.messages_api import MessagesApi, Reply

ANSWER = {"subject": "Missed you", "body": "Hey Sam, Saturday's class has a spot for you.\n\nCoach Dana",
          "confidence": 0.85, "reasoning": "A friendly first touch, as the skill asks."}


class Crash(BaseException):
    """A process dying at this instruction: not an error any step catches."""


@dataclass
class ThenMeanwhile:
    """The model port answering as `model` does, then running `meanwhile` before its answer is recorded
    (a crash, or a rival process): what happens between the model's answer and its record."""

    model: DecisionModel
    meanwhile: Callable[[], None]

    def decide(self, request: DecisionRequest) -> Decision:
        decision = self.model.decide(request)
        self.meanwhile()
        return decision


@pytest.fixture
def api() -> Iterator[MessagesApi]:
    with MessagesApi(default_inputs={"draft_message": ANSWER}) as server:
        yield server


@pytest.fixture
def gym(home: Path, api: MessagesApi, monkeypatch: pytest.MonkeyPatch) -> Iterator[System]:
    """An embedded system whose decisions go to the local Messages API through the real SDK."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    system = build_system(home, ANTHROPIC_API_KEY="test-key", LOOPLINE_MODEL_RETRIES="0", LOOPLINE_MODEL_TIMEOUT="5")
    yield system
    system.close()


def requested(system: System) -> None:
    """A ready churn_risk task whose first touch the tick asks the model for (not yet answered)."""
    configure(system)
    create(system, "t1")
    system.scheduler.tick(parse_time(at(0, 1)))


def decisions(system: System) -> list[Task.DecisionRecorded]:
    return [e for e in system.app.events.get(ids.task_id(GYM, "t1")) if isinstance(e, Task.DecisionRecorded)]


def test_the_text_the_messages_api_returns_is_what_is_sent_with_model_and_reasoning_recorded(
        gym: System, api: MessagesApi) -> None:
    requested(gym)
    gym.drain()

    [sent] = emails_to(gym.settings.home)
    assert (sent["details"]["subject"], sent["details"]["body"]) == (ANSWER["subject"], ANSWER["body"])
    [decision] = decisions(gym)
    assert (decision.adapter, decision.model, decision.confidence) == ("anthropic", "claude-sonnet-5-5", 0.85)
    assert decision.reasoning == ANSWER["reasoning"] and decision.input_tokens == 321
    assert api.forced_tools() == ["draft_message"]


def test_a_crash_between_the_model_call_and_the_record_decides_and_sends_once(gym: System, api: MessagesApi) -> None:
    requested(gym)

    def crash() -> None:
        raise Crash

    dying = Agent(gym.bus, ThenMeanwhile(gym.agent.model, crash))
    with pytest.raises(Crash):
        dying.run_once()
    dying.close()
    assert decisions(gym) == [] and len(api.requests) == 1  # the model answered, nothing was recorded

    gym.drain()  # the restarted process: the request is still pending, so it is asked again and recorded once
    gym.drain()
    assert len(decisions(gym)) == 1 and len(emails_to(gym.settings.home)) == 1
    assert len(api.requests) == 2


def test_a_repeated_request_records_nothing_and_calls_no_model(gym: System, api: MessagesApi) -> None:
    requested(gym)
    gym.drain()

    replay = Agent(gym.bus, gym.agent.model)
    replay.name = "agent-replay"  # a processor reading every request again from the start
    assert replay.run_once().read == 1
    replay.close()
    gym.drain()
    assert len(decisions(gym)) == 1 and len(emails_to(gym.settings.home)) == 1
    assert len(api.requests) == 1


def test_two_agents_racing_on_the_same_position_decide_and_send_once(gym: System, api: MessagesApi) -> None:
    requested(gym)
    rival = Agent(gym.bus, gym.agent.model)
    racing = Agent(gym.bus, ThenMeanwhile(gym.agent.model, rival.run_once))

    racing.run_once()  # the rival reads the same request, answers and records it while this one holds its answer
    rival.close()
    racing.close()
    gym.drain()
    assert len(decisions(gym)) == 1 and len(emails_to(gym.settings.home)) == 1
    assert len(api.requests) == 2  # both asked; only one answer was recorded
    assert gym.app.position("agent") >= 1


def test_a_model_that_stays_down_is_retried_then_escalates_and_nothing_is_sent(gym: System, api: MessagesApi) -> None:
    api.script(*[Reply(status=500)] * 3)
    requested(gym)
    gym.drain()
    failed = task(gym, "t1")
    assert failed.status == "ready" and [p["failed"] for p in failed.pending_decisions.values()] == [1]

    tick(gym, at(0, 7))  # 5 minutes later: asked again, down again
    tick(gym, at(0, 28))  # 20 minutes after that: the third failure hands the task to the owner
    given_up = task(gym, "t1")
    assert given_up.status == "escalated" and "tried 3 times" in given_up.escalation_reason
    assert emails_to(gym.settings.home) == [] and len(api.requests) == 3
    failures = [e for e in gym.app.events.get(given_up.id) if isinstance(e, Task.DecisionFailed)]
    assert [f.attempt for f in failures] == [1, 2, 3] and "500" in failures[0].error


def test_a_hanging_model_holds_the_drain_one_calls_timeout_and_its_late_answer_is_recorded_without_asking_again(
        home: Path, api: MessagesApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    system = build_system(home, ANTHROPIC_API_KEY="test-key", LOOPLINE_MODEL_RETRIES="2", LOOPLINE_MODEL_TIMEOUT="0.3")
    try:
        api.script(Reply(delay=3), Reply(delay=3), Reply(tool_input=ANSWER))  # two tries hang; the SDK's last answers
        configure(system)
        create(system, "t1")
        system.scheduler.tick(parse_time(at(0, 1)))

        system.drain()

        calls = [call.answer for call in system.agent.in_flight.values()]
        # The drain came back while the SDK was still trying (three tries and its backoff between them take
        # over a second): it waited one try's 0.3 s, not the whole call, and the decision waits.
        assert calls and not any(call.done() for call in calls)
        assert decisions(system) == []
        assert not futures.wait(calls, timeout=10).not_done  # the call answers in the background
        system.drain()
        assert len(decisions(system)) == 1 and len(emails_to(system.settings.home)) == 1
        assert len(api.requests) == 3  # the SDK's three tries: the request was not asked again
    finally:
        system.close()


def test_a_tenants_second_decision_reads_the_stable_prompt_layers_from_the_cache_and_records_it(
        gym: System, api: MessagesApi) -> None:
    configure(gym)
    create(gym, "t1")
    create(gym, "t2", contact="lea@example.com")
    tick(gym, at(0, 1))

    recorded = [e for ref in ("t1", "t2") for e in gym.app.events.get(ids.task_id(GYM, ref))
                if isinstance(e, Task.DecisionRecorded)]
    assert all(block.get("cache_control") for block in api.requests[0]["json"]["system"])
    assert sorted(bool(e.cache_read_tokens) for e in recorded) == [False, True]  # the first wrote what the second read
    assert all(e.day == "2026-03-02" for e in recorded)
