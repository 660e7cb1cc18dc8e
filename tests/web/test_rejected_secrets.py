"""A refused `tenant.configure` is kept as a reject with its secrets masked, whichever way it came; a reject stored
before that reads masked in the timeline all the same."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from uuid import uuid4

from loopline.domain.inbound import RejectedInput
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.rejects import reject_input
from loopline.projections.timeline import _payload
from tests.conftest import command
from tests.web.conftest import Served

GYM = "gym_a"
AT = "2026-03-02T09:00:00Z"
SECRETS = {"github_webhook_secret": "gh-s3cret", "slack_signing_secret": "sl-s3cret",
           "webhook_secrets": {"stripe": "st-s3cret"}}


def _stored_raws(served: Served) -> list[str]:
    app = served.system.app
    events = [app.mapper.to_domain_event(n) for n in app.recorder.select_notifications(start=1, limit=10_000)]
    return [event.raw for event in events if isinstance(event, RejectedInput.Recorded)]


def test_a_tenant_keys_tenant_configure_is_kept_with_its_secrets_masked(served: Served) -> None:
    line = command("c1", "tenant.configure", AT, GYM, sms_url="https://sms.example/send", **SECRETS)
    answer = served.api(GYM).post("/v1/messages", content=json.dumps(line))
    assert answer.status_code == 400, answer.text
    [raw] = _stored_raws(served)
    assert "s3cret" not in raw
    assert json.loads(raw) == {**line, "data": {"sms_url": "https://sms.example/send", "github_webhook_secret": "set",
                                                "slack_signing_secret": "set", "webhook_secrets": {"stripe": "set"}}}


def test_an_invalid_tenant_configure_from_any_source_is_kept_masked_and_other_lines_as_they_came(served: Served) -> None:
    bad = json.dumps(command("c2", "tenant.configure", AT, GYM, daily_send_limit="many", **SECRETS)).encode()
    unrelated = b'{"type": "tenant.configure", "data": ['  # not JSON: nothing tells its secrets apart
    app = served.system.app
    uow = UnitOfWork(app)
    reject_input(uow, source="commands", position="0:7", raw=bad, reason="invalid", key=b"k", now=datetime.now(timezone.utc))
    reject_input(uow, source="commands", position="0:8", raw=unrelated, reason="bad JSON", key=None,
                 now=datetime.now(timezone.utc))
    uow.commit()
    masked, kept = _stored_raws(served)
    assert "s3cret" not in masked and json.loads(masked)["data"]["webhook_secrets"] == {"stripe": "set"}
    assert kept.encode() == unrelated


def test_a_reject_stored_with_its_secrets_reads_masked_in_the_timeline() -> None:
    raw = json.dumps(command("c1", "tenant.configure", AT, GYM, **SECRETS))
    reject = RejectedInput.record(id=uuid4(), now=datetime.now(timezone.utc), source="http key k1", position="1", raw=raw,
                                  encoding="utf-8", key=None, reason="the operator's command")
    [recorded] = reject.collect_events()
    payload = _payload(recorded)
    assert "s3cret" not in json.dumps(payload)
    assert json.loads(payload["raw"])["data"]["github_webhook_secret"] == "set"


def test_a_refused_line_naming_a_secret_is_kept_masked_whatever_else_is_wrong_with_it() -> None:
    from loopline.domain.masking import CUT, masked_line

    lone_surrogate = b'{"kind":"command","type":"tenant.configure","data":{"sms_url":"\\ud800","github_webhook_secret":"s3"}}'
    assert b"s3" not in masked_line(lone_surrogate) and masked_line(lone_surrogate).decode("ascii")
    typo = b'{"type":"tenant.configure","data":{"github_webhook_secret":"s3",}}'
    assert masked_line(typo) == b'{"type":"tenant.configure","data":{"' + CUT
    cut_at_the_limit = b'{"type":"tenant.configure","data":{"slack_signing_secret":"s3'
    assert b"s3" not in masked_line(cut_at_the_limit)
    unset = b'{"type":"tenant.configure","data":{"name":"Gym","github_webhook_secret":null}}'
    assert masked_line(unset) == unset  # nothing to hide: kept byte for byte, so its fingerprint stays
    other = b'{"kind":"signal","type":"email.received","data":{"subject":"hi"}}'
    assert masked_line(other) == other
