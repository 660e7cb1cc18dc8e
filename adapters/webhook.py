"""Owner notifications, agent wake-ups and a task's `call_webhook` actions POSTed as signed JSON to LOOPLINE_WEBHOOK_URL.

`X-Loopline-Delivery` carries the idempotency key (the same on every retry, so the receiver can
drop a repeat) and `X-Loopline-Signature` is `sha256=` + the hex HMAC-SHA256 of the body with
LOOPLINE_WEBHOOK_SECRET.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.error
import urllib.request
from typing import Any

from loopline.processors.ports import DeliveryFailed

SEND_TIMEOUT = 10.0
AUDIENCES = ("user", "agent", "webhook")
"""`webhook`: a `call_webhook` action (its `details` hold the `event` and `payload`)."""


def signature(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


class WebhookChannel:
    name = "webhook"
    drops_repeats = False

    def __init__(self, url: str, secret: str) -> None:
        self.url = url
        self.secret = secret

    def accepts(self, message: dict[str, Any]) -> bool:
        return message.get("to") in AUDIENCES

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        body = json.dumps({"key": key, **message}, sort_keys=True).encode("utf-8")
        post_json(self.url, body, {"X-Loopline-Delivery": key, "X-Loopline-Signature": signature(body, self.secret)},
                  what=f"POST {self.url}")


def post_json(url: str, body: bytes, headers: dict[str, str], *, what: str) -> None:
    """POSTs a JSON body; a 2xx answer means the receiver took it, anything else is a DeliveryFailed naming `what`."""
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json",
                                                                             **headers})
    try:
        with urllib.request.urlopen(request, timeout=SEND_TIMEOUT) as response:
            response.read()
    except urllib.error.HTTPError as error:
        raise DeliveryFailed(f"{what} answered {error.code} {error.reason}") from error
    except (urllib.error.URLError, OSError) as error:
        raise DeliveryFailed(f"{what} failed: {getattr(error, 'reason', error)}") from error
