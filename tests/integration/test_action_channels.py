"""The channels of actions beyond email against real local endpoints: a text message POSTed to the tenant's SMS
gateway on 127.0.0.1 with its idempotency key, and a calendar invitation as an email carrying its .ics."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from loopline.adapters.sms import HttpSms, SmsChannel
from loopline.adapters.smtp import compose
from loopline.processors.ports import DeliveryFailed
from tests.conftest import ANY_HOUR, command
from tests.unit.in_memory import InMemoryLoopline


class Gateway:
    """An SMS gateway on 127.0.0.1 that answers `status` and keeps what it took."""

    def __init__(self) -> None:
        self.status = 200
        self.received: list[tuple[str, dict[str, Any]]] = []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's hook name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if gateway.status == 200:
                    gateway.received.append((self.headers["X-Loopline-Delivery"], json.loads(body)))
                self.send_response(gateway.status)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/sms"


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    running = Gateway()
    yield running
    running.server.shutdown()
    running.server.server_close()


def test_an_approved_text_message_reaches_the_tenants_gateway_with_its_key(gateway: Gateway) -> None:
    loopline = InMemoryLoopline()
    loopline.delivery.add_channel(SmsChannel(HttpSms()))
    at = "2026-03-02T09:00:00Z"
    loopline.publish(
        command("c1", "tenant.configure", at, "gym", execution_mode="limited_auto", sms_url=gateway.url, **ANY_HOUR),
        command("c2", "task.create", at, "gym", task_id="ann", title="Bring Ann back", contact="ann@example.com"),
        command("c3", "action.request", at, "gym", task_id="ann", action="send_sms",
                params={"to": "+14155550123", "body": "Your 6pm spot is saved"}),
        command("c4", "action.approve", at, "gym", task_id="ann"),
    )
    loopline.close()
    [(key, posted)] = gateway.received
    assert posted == {"key": key, "to": "+14155550123", "body": "Your 6pm spot is saved"}


def test_a_gateway_refusal_is_a_failed_delivery_that_says_what_answered(gateway: Gateway) -> None:
    gateway.status = 503
    with pytest.raises(DeliveryFailed, match="answered 503"):
        HttpSms().send_sms(endpoint=gateway.url, key="k1", to="+14155550123", body="hi")


def test_a_calendar_invitation_is_an_email_with_its_event_attached() -> None:
    details = {"to": "ann@example.com", "subject": "Invitation: Intro class", "body": "You are invited.",
               "title": "Intro class; bring water", "starts_at": "2026-03-05T18:00:00Z", "duration_minutes": 45,
               "location": "Main floor"}
    email = compose(key="task-1:7", sender="coach@gym.example", message={
        "to": "ann@example.com", "kind": "calendar_invite", "text": "x", "at": "2026-03-02T09:00:00Z",
        "tenant": "gym", "details": details})
    [invite] = [part for part in email.iter_attachments() if part.get_content_type() == "text/calendar"]
    ics = invite.get_content()
    assert invite.get_param("method") == "REQUEST" and "METHOD:REQUEST" in ics
    assert "DTSTART:20260305T180000Z\nDTEND:20260305T184500Z" in ics
    assert "SUMMARY:Intro class\\; bring water" in ics and "ATTENDEE;RSVP=TRUE:mailto:ann@example.com" in ics
    assert "UID:loopline.task-1.7@gym.example" in ics
