"""Text messages to contacts (`send_sms` actions) through the tenant's SMS gateway, an HTTP endpoint set per tenant
(`tenant.configure` `sms_url`, recorded with the action).

The gateway receives a JSON POST `{"key", "to", "body"}`; `X-Loopline-Delivery` carries the idempotency key, the
same on every retry, so a gateway can drop a repeat.
"""

from __future__ import annotations

import json
from typing import Any

from loopline.adapters.webhook import post_json
from loopline.processors.ports import SmsPort


class HttpSms:
    """The SMS port over HTTP: a 2xx answer means the gateway took the message."""

    def send_sms(self, *, endpoint: str, key: str, to: str, body: str) -> None:
        payload = json.dumps({"key": key, "to": to, "body": body}, sort_keys=True).encode("utf-8")
        post_json(endpoint, payload, {"X-Loopline-Delivery": key}, what=f"SMS gateway {endpoint}")


class SmsChannel:
    """Delivers `send_sms` actions through an SMS port, to the gateway the action recorded."""

    name = "sms"
    drops_repeats = False

    def __init__(self, port: SmsPort) -> None:
        self.port = port

    def accepts(self, message: dict[str, Any]) -> bool:
        return message.get("kind") == "send_sms"

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        details = message["details"]
        self.port.send_sms(endpoint=details["sms_url"], key=key, to=details["to"], body=details["body"])
