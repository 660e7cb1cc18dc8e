"""Real producers' webhooks over HTTP: a signed GitHub review resolves the pull request's loop, a bad signature
is refused and records nothing; Slack's URL verification and messages; a generic signed webhook."""

from __future__ import annotations

import hashlib
import time

from fastapi.testclient import TestClient

from loopline.web.app import ServeOptions
from tests.conftest import command
from tests.fixtures import webhooks
from tests.integration.helpers import loop_rows
from tests.web.conftest import BASE_URL, Served

GYM, OTHER = "gym_a", "gym_b"
AT = "2026-03-02T09:00:00Z"
GITHUB_SECRET, SLACK_SECRET, DOCS_SECRET = "gh-s3cret", "sl-s3cret", "docs-s3cret"
GITHUB_REFUSAL = ("X-Hub-Signature-256 does not verify with tenant {tenant}'s github_webhook_secret, or none is set "
                  "(tenant.configure)")


def _configured(served: Served) -> None:
    served.publish(command("secrets", "tenant.configure", AT, GYM, github_webhook_secret=GITHUB_SECRET,
                           slack_signing_secret=SLACK_SECRET, webhook_secrets={"docusign": DOCS_SECRET}))


def _notifications(served: Served) -> int:
    return served.system.app.recorder.max_notification_id() or 0


def _pull_request_loop(served: Served) -> dict:
    served.publish(
        command("c1", "task.create", AT, GYM, task_id="t-pr", title="Land the PR", confidence=0.2),
        command("c2", "task.approve", "2026-03-02T09:01:00Z", GYM, task_id="t-pr"),
        command("c3", "action.record", "2026-03-02T09:02:00Z", GYM, task_id="t-pr", action="open_pull_request",
                repo="acme/api", resource_id="42"),
    )
    [loop] = loop_rows(served.system, tenant=GYM)
    return loop


def test_a_signed_github_review_resolves_the_pull_requests_loop_and_a_bad_signature_changes_nothing(served: Served) -> None:
    _configured(served)
    loop = _pull_request_loop(served)
    assert loop["resolved"] is False
    raw = webhooks.body(webhooks.review_submitted(42))
    forged = {**webhooks.github_headers(GITHUB_SECRET, raw, "pull_request_review"), "X-Hub-Signature-256": "sha256=00"}
    before = _notifications(served)
    refused = served.client().post(f"/v1/webhooks/github/{GYM}", content=raw, headers=forged)
    assert refused.status_code == 401 and refused.json()["error"] == GITHUB_REFUSAL.format(tenant=GYM)
    assert _notifications(served) == before
    assert [row["resolved"] for row in loop_rows(served.system, tenant=GYM)] == [False]
    answer = served.client().post(f"/v1/webhooks/github/{GYM}", content=raw,
                                  headers=webhooks.github_headers(GITHUB_SECRET, raw, "pull_request_review"))
    assert answer.status_code == 202, answer.text
    [accepted] = answer.json()["accepted"]
    assert (accepted["id"], accepted["type"], accepted["status"]) == (
        "72d3162e-cc78-11e3-81ab-4c9367dc0958", "github.event", "took effect")
    assert [row["resolved"] for row in loop_rows(served.system, tenant=GYM)] == [True]


def test_github_ping_is_answered_and_an_event_loopline_does_not_follow_is_acknowledged_with_why(served: Served) -> None:
    _configured(served)
    raw = webhooks.body(webhooks.ping())
    ping = served.client().post(f"/v1/webhooks/github/{GYM}", content=raw,
                                headers=webhooks.github_headers(GITHUB_SECRET, raw, "ping"))
    assert ping.status_code == 200 and ping.json()["ok"] is True
    raw = webhooks.body(webhooks.pull_request_closed(42, merged=False))
    ignored = served.client().post(f"/v1/webhooks/github/{GYM}", content=raw,
                                   headers=webhooks.github_headers(GITHUB_SECRET, raw, "pull_request"))
    assert ignored.status_code == 202 and "none Loopline follows" in ignored.json()["ignored"]
    assert ignored.json()["accepted"] == []


def test_an_unknown_tenant_a_tenant_without_the_secret_and_a_bad_signature_get_one_answer(served: Served) -> None:
    _configured(served)
    served.publish(command("c-other", "tenant.configure", AT, OTHER, name="Other"))
    raw = webhooks.body(webhooks.review_submitted(42))
    signed = webhooks.github_headers(GITHUB_SECRET, raw, "pull_request_review")
    answers = {tenant: served.client().post(f"/v1/webhooks/github/{tenant}", content=raw, headers=headers)
               for tenant, headers in (("nobody", signed), (OTHER, signed),
                                       (GYM, {**signed, "X-Hub-Signature-256": "sha256=00"}))}
    for tenant, answer in answers.items():
        assert answer.status_code == 401 and answer.json()["error"] == GITHUB_REFUSAL.format(tenant=tenant)


def test_a_flood_of_bad_signatures_is_refused_before_any_work_for_that_client_tenant_and_source_only(
    served: Served,
) -> None:
    _configured(served)
    served.publish(command("c-other", "tenant.configure", AT, OTHER, github_webhook_secret=GITHUB_SECRET))
    limited = Served(served.system, ServeOptions(rate_per_minute=3))
    raw = webhooks.body(webhooks.ping())
    signed = webhooks.github_headers(GITHUB_SECRET, raw, "ping")
    forged = {**signed, "X-Hub-Signature-256": "sha256=00"}
    flooder = TestClient(limited.app, base_url=BASE_URL, client=("203.0.113.66", 40000))
    github = TestClient(limited.app, base_url=BASE_URL, client=("192.0.2.10", 40000))
    served.clients += [flooder, github, *limited.clients]
    flood = [flooder.post(f"/v1/webhooks/github/{GYM}", content=raw, headers=forged) for _ in range(4)]
    assert [answer.status_code for answer in flood] == [401, 401, 401, 429]
    assert int(flood[3].headers["Retry-After"]) >= 1 and "failed signatures" in flood[3].json()["error"]
    # The spent bucket refuses that client for that tenant and producer before reading anything, signed or not ...
    assert flooder.post(f"/v1/webhooks/github/{GYM}", content=raw, headers=signed).status_code == 429
    # ... and nobody else: the real producer's deliveries, and the same client's for another tenant.
    assert [github.post(f"/v1/webhooks/github/{GYM}", content=raw, headers=signed).status_code
            for _ in range(3)] == [200, 200, 200]
    assert flooder.post(f"/v1/webhooks/github/{OTHER}", content=raw, headers=signed).status_code == 200
    assert flooder.post(f"/v1/webhooks/github/{OTHER}", content=raw, headers=forged).status_code == 401


def test_a_generic_webhook_source_must_be_a_source_name(served: Served) -> None:
    answer = served.client().post(f"/v1/webhooks/{'x' * 65}/{GYM}", content=b"{}")
    assert answer.status_code == 400 and "no webhook source" in answer.json()["error"]


def test_slack_url_verification_answers_the_challenge_and_a_message_is_a_slack_signal(served: Served) -> None:
    _configured(served)
    now = int(time.time())
    raw = webhooks.body(webhooks.slack_url_verification())
    verified = served.client().post(f"/v1/webhooks/slack/{GYM}", content=raw,
                                    headers=webhooks.slack_headers(SLACK_SECRET, raw, now))
    assert verified.status_code == 200
    assert verified.json() == {"challenge": webhooks.slack_url_verification()["challenge"]}
    raw = webhooks.body(webhooks.slack_message())
    message = served.client().post(f"/v1/webhooks/slack/{GYM}", content=raw,
                                   headers=webhooks.slack_headers(SLACK_SECRET, raw, now))
    assert message.status_code == 202, message.text
    assert [(line["id"], line["type"]) for line in message.json()["accepted"]] == [("Ev0PV52K21", "slack.message")]
    stale = served.client().post(f"/v1/webhooks/slack/{GYM}", content=raw,
                                 headers=webhooks.slack_headers(SLACK_SECRET, raw, now - 600))
    assert stale.status_code == 401 and "within 5 minutes" in stale.json()["error"]
    huge = served.client().post(f"/v1/webhooks/slack/{GYM}", content=raw,
                                headers={**webhooks.slack_headers(SLACK_SECRET, raw, now), "X-Slack-Request-Timestamp": "9" * 30})
    assert huge.status_code == 401 and "slack_signing_secret" in huge.json()["error"]


def test_a_generic_signed_webhook_is_a_webhook_signal_of_its_source_and_a_repeat_is_already_received(
    served: Served,
) -> None:
    _configured(served)
    raw = webhooks.body({"trigger": "envelope_completed", "id": "env-1", "at": AT, "envelope": "lease-7"})
    headers = webhooks.generic_headers(DOCS_SECRET, raw)
    first = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw, headers=headers)
    again = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw, headers=headers)
    assert first.status_code == again.status_code == 202, first.text
    assert [(line["id"], line["type"], line["status"]) for line in first.json()["accepted"]] == [
        ("docusign:env-1", "webhook.received", "took effect")]
    assert again.json()["accepted"][0]["status"] == "already received"
    unknown = served.client().post(f"/v1/webhooks/stripe/{GYM}", content=raw, headers=headers)
    assert unknown.status_code == 401 and "webhook_secrets entry for stripe" in unknown.json()["error"]



def test_a_generic_webhook_replayed_with_other_headers_later_is_the_same_message(served: Served) -> None:
    _configured(served)
    raw = webhooks.body({"trigger": "envelope_completed", "envelope": "lease-7", "at": AT})
    first = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw,
                                 headers=webhooks.generic_headers(DOCS_SECRET, raw))
    replay = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw, headers=webhooks.generic_headers(
        DOCS_SECRET, raw, **{"X-Loopline-Trigger": "forged", "X-Loopline-Delivery": "forged-1"}))
    assert first.status_code == replay.status_code == 202, replay.text
    [took] = first.json()["accepted"]
    assert replay.json()["accepted"] == [{**took, "status": "already received"}] and replay.json()["warnings"] == []
    assert took["id"] == f"docusign:{hashlib.sha256(raw).hexdigest()[:32]}"


def test_a_generic_webhook_cannot_claim_a_messages_id_nor_go_without_its_time(served: Served) -> None:
    _configured(served)
    served.publish(command("t1", "task.create", AT, GYM, task_id="t1", title="Call back Rahul", confidence=0.2))
    raw = webhooks.body({"trigger": "envelope_completed", "id": "t1", "at": AT})
    claimed = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw,
                                   headers=webhooks.generic_headers(DOCS_SECRET, raw))
    assert claimed.status_code == 202 and claimed.json()["accepted"][0]["status"] == "took effect", claimed.text
    raw = webhooks.body({"trigger": "envelope_completed", "id": "env-2"})
    untimed = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw,
                                   headers=webhooks.generic_headers(DOCS_SECRET, raw))
    assert untimed.status_code == 400 and "body's at field" in untimed.json()["error"]
