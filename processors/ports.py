"""The small ports processors depend on; adapters/ holds the real ones and tests hold fakes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from loopline.domain.conversation import Turn
from loopline.domain.tenant import TenantSettings


class Clock(Protocol):
    """The wall clock, read only at the edges (a CLI default, a worker's periodic tick); business
    time comes from the messages and `--now`."""

    def now(self) -> datetime: ...


@dataclass(frozen=True)
class Draft:
    subject: str
    body: str
    decided_by: str
    """Which template or model wrote it, recorded with the message so the audit shows who chose the words."""


class Drafter(Protocol):
    """What Loopline writes without a model: the reminder a loop's deadline sends (`send_reminder`), by a fixed
    template. Every message a model writes goes through `DecisionModel`; a draft is recorded in the event it
    leads to, never redrafted."""

    def draft_reminder(
        self, *, contact_name: str | None, about: str, ask: str, original_subject: str | None, days_waiting: int
    ) -> Draft:
        """A reminder of `about` ("the document I sent you") ending with `ask`, in the same words a contact may read."""
        ...


@dataclass(frozen=True)
class Prompt:
    """What a model is given for one decision; `digest` (sha256 hex of system and messages) is
    recorded with the decision, so the audit can tell which prompt led to it."""

    system: str
    messages: tuple[dict[str, Any], ...]
    digest: str
    system_blocks: tuple[str, ...] = ()
    """The system prompt cut after each of its layers, most stable first (joined, they are `system`), so an adapter
    can mark each as a prompt-cache breakpoint; empty: `system` is one block."""


@dataclass(frozen=True)
class DecisionRequest:
    """Everything one decision needs, read from the task's events before any model is called."""

    point: str
    """The decision asked: "draft_message", "evaluate_reply" or "write_report" (a tool of processors/model/tools.py)."""
    tenant: str
    task_ref: str
    task_type: str
    purpose: str
    """"touch" (a cadence message), "reply" (answering the contact) or "followup" (to an email loop gone unanswered)."""
    contact: str | None
    contact_name: str | None
    touch: int | None
    tone: str | None
    reply_text: str | None
    conversation: tuple[Turn, ...]
    budget_left: dict[str, int | None]
    """messages, turns and days left (days None: the budget has no end)."""
    outcomes: tuple[str, ...]
    """The outcome codes a `close` may choose from (the type's spectrum)."""
    settings: TenantSettings
    prompt: Prompt
    context: dict[str, Any] | None = None
    """The task's context (what its creator gave it): a research task's data."""


@dataclass(frozen=True)
class Decision:
    """A model's answer to one request: `output` is the tool input, checked against its schema."""

    point: str
    adapter: str
    """"anthropic" or "offline"."""
    model: str
    output: dict[str, Any]
    confidence: float
    reasoning: str
    prompt_digest: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    """Input tokens read from the prompt cache (not in `input_tokens`, as the Messages API counts them)."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache (not in `input_tokens`)."""


@dataclass(frozen=True)
class Conversation:
    """One model call that is not a task's decision (a synthesis turn, a debate role): a Messages API call with
    `tools` and tool_choice auto. `kind` is its call kind (processors/handlers/brain_calls.py CALL_KINDS); `facts`
    is what the offline policy decides from, since it reads no prompt."""

    kind: str
    tenant: str
    request_ref: str
    prompt: Prompt
    tools: tuple[dict[str, Any], ...]
    facts: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """A model's answer to a `Conversation`: its content blocks as the Messages API gives them (`text` and
    `tool_use` with id, name and input), who answered and the tokens it cost."""

    adapter: str
    model: str
    content: tuple[dict[str, Any], ...]
    prompt_digest: str
    input_tokens: int
    output_tokens: int

    def tool_calls(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block.get("type") == "tool_use"]


class ModelUnavailable(Exception):
    """No usable decision this time: the model stayed down after its retries, timed out, or answered
    off its schema; the text says which. The caller retries later or escalates; nothing is sent."""


class DecisionModel(Protocol):
    """The language-model port: one call per decision, safe to call from several threads at once."""

    name: str
    model: str

    def decide(self, request: DecisionRequest) -> Decision:
        """Raises ModelUnavailable when no decision could be had."""
        ...

    def converse(self, request: Conversation) -> Reply:
        """One turn of a brain call (processors/followers/brain.py); raises ModelUnavailable when it got no answer."""
        ...


class DeliveryFailed(Exception):
    """A channel could not deliver a message this time; the text says why (it is retried, then parked)."""


class OutboundChannel(Protocol):
    """Sends outbound messages of the kinds it `accepts`; the key lets the destination drop a repeat."""

    name: str
    drops_repeats: bool
    """The channel itself never delivers one key twice (the JSONL outbox), so a resend after a crash costs nothing."""

    def accepts(self, message: dict[str, Any]) -> bool: ...

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        """Raises DeliveryFailed when the message did not go out."""
        ...


class SmsPort(Protocol):
    """A tenant's SMS gateway: sends one text message; the key lets the gateway drop a repeat."""

    def send_sms(self, *, endpoint: str, key: str, to: str, body: str) -> None:
        """Raises DeliveryFailed when the message did not go out."""
        ...


@dataclass(frozen=True)
class Attempt:
    """One claimed delivery of a key on a channel: this process may send it now."""

    key: str
    channel: str
    message: dict[str, Any]
    attempts: int


class DeliveryLedger(Protocol):
    """The durable delivery state per key and channel: who may send, and what happened."""

    def claim(self, wanted: list[tuple[str, str, dict[str, Any]]], *, now: float) -> list[Attempt]:
        """Of (key, channel, message) triples, the ones to send now, in order: not those delivered,
        parked, waiting for a retry, or being sent by a live process."""
        ...

    def due(self, *, now: float, limit: int) -> list[Attempt]:
        """Claims retries whose time has come and sends that a dead process left in doubt."""
        ...

    def delivered(self, attempts: list[Attempt], *, now: float) -> None: ...

    def failed(self, attempt: Attempt, *, error: str, retry_at: float | None, now: float) -> None:
        """Records a failed attempt: retried at `retry_at`, or parked for good when it is None."""
        ...

    def withdraw(self, attempt: Attempt, *, reason: str, now: float) -> None:
        """Marks a claimed owner notice as withdrawn (made moot), with why: it is never sent on that channel."""
        ...

    def dry_run(self, attempt: Attempt, *, now: float) -> None:
        """Marks a claimed email of a tenant in dry run as one that would have gone: it is never sent on that channel."""
        ...

    def hold(self, attempt: Attempt, *, until: float, reason: str, message: dict[str, Any], now: float) -> None:
        """Puts a claimed send back until `until` (quiet hours, a digest), to send `message` then."""
        ...

    def owner_emails(self, tenant: str, day: str, category: str) -> list[str]:
        """The keys of the owner notices of `category` emailed singly on the tenant's local `day`."""
        ...

    def count_owner_email(self, key: str, *, tenant: str, day: str, category: str, now: float) -> None:
        """Counts an owner notice emailed singly against its day's budget (once per key)."""
        ...

    def park(self, key: str, channel: str, message: dict[str, Any], *, error: str, now: float) -> None:
        """Records a delivery as parked without a send (its event could not become a message)."""
        ...

    def parked(self) -> list[dict[str, Any]]: ...
