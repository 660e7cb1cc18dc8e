"""Hand-written fakes of the ports: a drafter, channels that record or fail, and an in-memory delivery ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from loopline.processors.bus import Outcome, Source
from loopline.processors.ports import Attempt, Decision, DecisionRequest, DeliveryFailed, Draft, ModelUnavailable


class FakeChannel:
    """Records what it sends; fails the first `failures` sends; takes the messages `accepts` says."""

    def __init__(self, name: str, accepts: Callable[[dict[str, Any]], bool] = lambda message: True, failures: int = 0) -> None:
        self.name = name
        self.drops_repeats = False
        self._accepts = accepts
        self.failures = failures
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.tries = 0

    def accepts(self, message: dict[str, Any]) -> bool:
        return self._accepts(message)

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise DeliveryFailed(f"{self.name} is down (try {self.tries})")
        self.sent.append((key, message))


class UnsendableChannel(FakeChannel):
    """A channel that cannot take any message at all, as SMTP meeting a header that holds a line break."""

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        raise ValueError("Header values may not contain linefeed or carriage return characters")


class FakeLedger:
    """The delivery ledger in a dict: one row per (key, channel)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        self.counted: dict[str, tuple[str, str, str]] = {}
        """The owner emails sent singly: key → (tenant, local day, category)."""

    def claim(self, wanted: list[tuple[str, str, dict[str, Any]]], *, now: float) -> list[Attempt]:
        attempts = []
        for key, channel, message in wanted:
            row = self.rows.setdefault((key, channel), {"status": "new", "attempts": 0, "message": message, "retry_at": None})
            if row["status"] == "new":
                attempts.append(self._take(key, channel, row))
        return attempts

    def _take(self, key: str, channel: str, row: dict[str, Any]) -> Attempt:
        row["status"], row["attempts"] = "sending", row["attempts"] + 1
        return Attempt(key=key, channel=channel, message=row["message"], attempts=row["attempts"])

    def due(self, *, now: float, limit: int) -> list[Attempt]:
        due = [(key, row) for key, row in self.rows.items() if row["status"] == "retrying" and row["retry_at"] <= now]
        return [self._take(key, channel, row) for (key, channel), row in due[:limit]]

    def delivered(self, attempts: list[Attempt], *, now: float) -> None:
        for attempt in attempts:
            self.rows[(attempt.key, attempt.channel)]["status"] = "delivered"

    def failed(self, attempt: Attempt, *, error: str, retry_at: float | None, now: float) -> None:
        row = self.rows[(attempt.key, attempt.channel)]
        row.update(status="retrying" if retry_at is not None else "failed", retry_at=retry_at, error=error)

    def withdraw(self, attempt: Attempt, *, reason: str, now: float) -> None:
        self.rows[(attempt.key, attempt.channel)].update(status="withdrawn", error=reason)

    def dry_run(self, attempt: Attempt, *, now: float) -> None:
        self.rows[(attempt.key, attempt.channel)].update(status="dry_run")

    def hold(self, attempt: Attempt, *, until: float, reason: str, message: dict[str, Any], now: float) -> None:
        self.rows[(attempt.key, attempt.channel)].update(
            status="retrying", attempts=attempt.attempts - 1, retry_at=until, error=reason, message=message
        )

    def owner_emails(self, tenant: str, day: str, category: str) -> list[str]:
        return [key for key, counted in self.counted.items() if counted == (tenant, day, category)]

    def count_owner_email(self, key: str, *, tenant: str, day: str, category: str, now: float) -> None:
        self.counted.setdefault(key, (tenant, day, category))

    def park(self, key: str, channel: str, message: dict[str, Any], *, error: str, now: float) -> None:
        self.rows.setdefault((key, channel), {"status": "failed", "attempts": 1, "message": message, "retry_at": None,
                                              "error": error})

    def parked(self) -> list[dict[str, Any]]:
        return [{"key": key, "channel": channel, **row} for (key, channel), row in self.rows.items() if row["status"] == "failed"]


@dataclass
class RecordingDrafter:
    """Drafts a fixed reminder and remembers every request, so a test sees what the template was asked for."""

    requests: list[dict[str, Any]] = field(default_factory=list)

    def draft_reminder(
        self, *, contact_name: str | None, about: str, ask: str, original_subject: str | None, days_waiting: int
    ) -> Draft:
        self.requests.append({"contact_name": contact_name, "about": about, "ask": ask,
                              "original_subject": original_subject, "days_waiting": days_waiting})
        return Draft(subject=f"Reminder: {about}", body="fake reminder", decided_by="fake drafter")


@dataclass
class ScriptedModel:
    """The decision-model port: drafts a fixed text, evaluates every reply with `evaluation`, scores every task's
    urgency `urgency`, and remembers each request; `down` makes every call fail as a model that stays unavailable
    would."""

    name: str = "fake"
    model: str = "scripted-v1"
    evaluation: dict[str, Any] = field(default_factory=lambda: {
        "decision": "reply", "reply_body": "Great, see you then!", "confidence": 0.9, "reasoning": "they said yes"})
    draft_confidence: float = 0.9
    urgency: float = 0.5
    down: bool = False
    requests: list[DecisionRequest] = field(default_factory=list)

    def decide(self, request: DecisionRequest) -> Decision:
        self.requests.append(request)
        if self.down:
            raise ModelUnavailable("the fake model is down")
        if request.point == "draft_message":
            output = {"subject": f"Touch {request.touch or 'follow-up'}", "body": f"fake draft ({request.tone})",
                      "confidence": self.draft_confidence, "reasoning": "scripted draft"}
        elif request.point == "score_urgency":
            output = {"urgency": self.urgency, "confidence": 0.8, "reasoning": "scripted urgency"}
        else:
            output = dict(self.evaluation)
        return Decision(point=request.point, adapter=self.name, model=self.model, output=output,
                        confidence=output["confidence"], reasoning=output["reasoning"],
                        prompt_digest=request.prompt.digest, input_tokens=10, output_tokens=5)


@dataclass
class SwitchableModel:
    """A real decision model that can be switched off, as a model that stays unavailable for a while."""

    policy: Any
    down: bool = False

    def decide(self, request: DecisionRequest) -> Decision:
        if self.down:
            raise ModelUnavailable("the model is switched off")
        return self.policy.decide(request)


@dataclass
class FakeClock:
    """The clock port, at whatever time the test sets."""

    moment: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def now(self) -> datetime:
        return self.moment


@dataclass
class RecordingBus:
    """The bus as a source sees it: records each batch a source hands over and accepts every message,
    applying none, so a test sees what the source read and nothing else."""

    app: Any
    batches: list[list[Any]] = field(default_factory=list)

    def process(self, source: Source) -> list[Outcome[Any]]:
        batch = source.read()
        if batch is None:
            return []
        messages = list(batch.messages)
        self.batches.append(messages)
        return [Outcome(message, accepted=True, detail=f"handled {type(message).__name__}") for message in messages]


class FakeSms:
    """The SMS port: records each text message it is given; fails the first `failures` sends."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.sent: list[dict[str, str]] = []
        self.tries = 0

    def send_sms(self, *, endpoint: str, key: str, to: str, body: str) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise DeliveryFailed(f"the SMS gateway is down (try {self.tries})")
        self.sent.append({"endpoint": endpoint, "key": key, "to": to, "body": body})
