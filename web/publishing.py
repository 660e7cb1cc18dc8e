"""The dashboard's and the API's way into the log: `runtime/publishing.py`, the path `loopline publish` takes, run one
request at a time in this process (embedded, the home lock also keeps it apart from other processes). A request
never delivers or asks the model: embedded it applies what it publishes, and `loopline run` does the rest."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from loopline.processors.messages import Message
from loopline.runtime import publishing
from loopline.runtime.publishing import Append, Parsed, Published
from loopline.runtime.system import System
from loopline.web.command_outcome import PENDING, REFUSED, command_outcome

OPERATOR_COMMANDS = ("system.pause", "system.resume", "tenant.configure", "tenant.resume", "contact.resubscribe")
"""Commands only the operator publishes (the CLI, or an operator's key): limits, secrets and addresses, lifting a
pause, and lifting a suppression (bounces and complaints protect the sending reputation every tenant shares). A
tenant's key may pause its own tenant, never lift it."""

Why = Callable[[Message], str | None]
"""Why a key may not publish a valid line, or None when it may."""


@dataclass(frozen=True)
class CommandResult:
    """One command a form published: `took effect`, `refused` (with why) or `set aside` (with its error) once
    processed; `pending` while the workers have not processed it (scale)."""

    id: str
    tenant: str
    type: str
    status: str
    reason: str | None = None


class Publisher:
    def __init__(self, system: System, append: Append | None = None) -> None:
        self.system = system
        self.append = append
        self.lock = threading.Lock()

    def publish(self, data: bytes, source: str, tenant: str | None, key_id: str | None = None) -> Published:
        """The lines validated as `loopline publish` does, and a line naming another tenant than the key's, or an
        operator's command, refused (`tenant` None: the operator's key, anything); a tenant key's `tenant.pause`
        is signed `key <key_id>`, whatever `by` it claims. Raises UnreadableText for UTF-16 or UTF-32 input."""
        parsed = publishing.parse_lines(data)
        if tenant is not None:
            parsed = _only(parsed, _tenant_key_may_not(tenant))
            parsed.valid = [_paused_by(message, f"key {key_id}") for message in parsed.valid]
        return self._apply(parsed, source)

    def _apply(self, parsed: Parsed, source: str) -> Published:
        with self.lock:
            return publishing.publish(self.system, parsed, source, append=self.append, serving=True)

    def command(self, tenant: str, command_type: str, data: dict[str, Any], source: str) -> CommandResult:
        """One command, as `loopline` sub-commands that decide something publish it (`cli/context.py`): refused
        with the reason the edge or the domain gave, else told by its result page's rule (`command_outcome`)."""
        raw = publishing.command_line(tenant, command_type, data, source)
        ref, line = raw["id"], json.dumps(raw).encode()
        # The form's route decides who may press it (the system page is the operator's): only the tenant is checked.
        done = self._apply(_only(publishing.parse_lines(line), _other_tenant(tenant)), source)
        rejected = done.rejected()
        if rejected:
            return CommandResult(ref, tenant, command_type, REFUSED, rejected[0]["reason"])
        outcome = None if done.scale else command_outcome(self.system.app, tenant, ref)
        if outcome is None:
            return CommandResult(ref, tenant, command_type, PENDING)
        return CommandResult(ref, tenant, command_type, outcome.status, outcome.reason)


def _other_tenant(tenant: str) -> Why:
    def why(message: Message) -> str | None:
        if message.tenant == tenant:
            return None
        return (f"tenant: {message.tenant!r} is not this key's tenant ({tenant!r}); a tenant's key publishes only "
                "its own messages")
    return why


def _tenant_key_may_not(tenant: str) -> Why:
    """A tenant key's rule: its own tenant's messages, and none of the operator's commands."""
    other_tenant = _other_tenant(tenant)

    def why(message: Message) -> str | None:
        if message.kind == "command" and message.type in OPERATOR_COMMANDS:
            return (f"type: {message.type} is the operator's command (limits, secrets, addresses, lifting a pause or a "
                    "suppression): "
                    "a tenant's key may not publish it; the operator publishes it with the CLI or an operator's key")
        return other_tenant(message)
    return why


def _paused_by(message: Message, by: str) -> Message:
    """A tenant key's `tenant.pause` names the key in the trail: a tenant cannot claim the operator paused it."""
    if message.kind != "command" or message.type != "tenant.pause":
        return message
    return replace(message, data={**message.data, "by": by}, command=message.command.model_copy(update={"by": by}))


def _only(parsed: Parsed, why_not: Why) -> Parsed:
    """Moves every valid line the key may not publish to the invalid ones, with the reason."""
    kept = Parsed([], [], list(parsed.invalid))
    for message, number, raw in zip(parsed.valid, parsed.valid_lines, parsed.valid_raw):
        reason = why_not(message)
        if reason is None:
            kept.valid.append(message)
            kept.valid_lines.append(number)
            kept.valid_raw.append(raw)
        else:
            kept.invalid.append((number, raw, reason))
    kept.invalid.sort(key=lambda item: item[0])
    return kept
