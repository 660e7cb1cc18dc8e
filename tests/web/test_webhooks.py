"""Real producers' webhooks over HTTP: a signed GitHub review resolves the pull request's loop, a bad signature
is refused and records nothing; Slack's URL verification and messages; a generic signed webhook."""

from __future__ import annotations

import time

from tests.conftest import command
from tests.fixtures import webhooks
from tests.integration.helpers import loop_rows
from tests.web.conftest import Served

GYM, OTHER = "gym_a", "gym_b"
AT = "2026-03-02T09:00:00Z"
GITHUB_SECRET, SLACK_SECRET, DOCS_SECRET = "gh-s3cret", "sl-s3cret", "docs-s3cret"


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
    assert refused.status_code == 401 and "does not match" in refused.json()["error"]
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


def test_a_tenant_without_a_secret_is_told_which_setting_to_configure(served: Served) -> None:
    raw = webhooks.body(webhooks.review_submitted(42))
    answer = served.client().post(f"/v1/webhooks/github/{OTHER}", content=raw,
                                  headers=webhooks.github_headers(GITHUB_SECRET, raw, "pull_request_review"))
    assert answer.status_code == 404
    assert answer.json()["error"] == (f"no github_webhook_secret configured for tenant {OTHER}; "
                                      "set it with tenant.configure")


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
    assert stale.status_code == 401 and "more than 5 minutes" in stale.json()["error"]


def test_a_generic_signed_webhook_is_a_webhook_signal_of_its_source_and_a_repeat_is_already_received(
    served: Served,
) -> None:
    _configured(served)
    raw = webhooks.body({"trigger": "envelope_completed", "envelope": "lease-7"})
    headers = webhooks.generic_headers(DOCS_SECRET, raw, **{"X-Loopline-Delivery": "env-1"})
    first = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw, headers=headers)
    again = served.client().post(f"/v1/webhooks/docusign/{GYM}", content=raw, headers=headers)
    assert first.status_code == again.status_code == 202, first.text
    assert [(line["id"], line["type"], line["status"]) for line in first.json()["accepted"]] == [
        ("env-1", "webhook.received", "took effect")]
    assert again.json()["accepted"][0]["status"] == "already received"
    unknown = served.client().post(f"/v1/webhooks/stripe/{GYM}", content=raw, headers=headers)
    assert unknown.status_code == 404 and "webhook_secrets entry for stripe" in unknown.json()["error"]

