"""`POST /v1/messages`: one message or JSONL with a tenant's key, validated as `loopline publish` validates and
answered line by line (202 all accepted, 400 a line unreadable or invalid, 422 one refused by the domain); the
body size limit and the rate limits."""

from __future__ import annotations

import json

from loopline.domain.tenant import TenantSettings
from loopline.projections.pauses import current_pauses
from loopline.projections.tenants import unmasked_settings
from loopline.web.app import ServeOptions
from tests.conftest import command
from tests.fixtures import webhooks
from tests.integration.helpers import task_rows
from tests.web.conftest import Served

GYM, OTHER = "gym_a", "gym_b"
AT = "2026-03-02T09:00:00Z"


def _settings(served: Served, tenant: str) -> TenantSettings:
    with served.system.projections.engine.connect() as conn:
        return unmasked_settings(conn, tenant)


def _pauses(served: Served) -> dict:
    with served.system.projections.engine.connect() as conn:
        return current_pauses(conn)


def _jsonl(*messages: dict) -> bytes:
    return b"\n".join(json.dumps(message).encode() for message in messages) + b"\n"


def _task(ref: str, tenant: str = GYM) -> dict:
    return command(ref, "task.create", AT, tenant, task_id=ref, title="Call back Rahul", confidence=0.2)


def test_one_message_for_the_keys_tenant_is_accepted_and_took_effect(served: Served) -> None:
    answer = served.api(GYM).post("/v1/messages", content=json.dumps(_task("t1")))
    assert answer.status_code == 202, answer.text
    assert answer.json()["accepted"] == [
        {"line": 1, "id": "t1", "tenant": GYM, "type": "task.create", "status": "took effect"}]
    assert [row["task_id"] for row in task_rows(served.system, tenant=GYM)] == ["t1"]


def test_an_invalid_line_is_400_with_its_line_and_reason_and_the_valid_lines_are_kept(served: Served) -> None:
    body = _jsonl(_task("t1"), {"kind": "command", "id": "t2", "type": "task.create", "tenant": GYM, "at": AT}) + b"{nope\n"
    answer = served.api(GYM).post("/v1/messages", content=body)
    assert answer.status_code == 400
    assert [line["id"] for line in answer.json()["accepted"]] == ["t1"]
    reasons = {line["line"]: line["reason"] for line in answer.json()["rejected"]}
    assert set(reasons) == {2, 3} and "data.title" in reasons[2]
    assert [row["task_id"] for row in task_rows(served.system, tenant=GYM)] == ["t1"]


def test_another_tenants_line_is_rejected_with_why_and_never_applied(served: Served) -> None:
    answer = served.api(GYM).post("/v1/messages", content=_jsonl(_task("t1"), _task("t9", OTHER)))
    assert answer.status_code == 400
    [rejected] = answer.json()["rejected"]
    assert rejected["line"] == 2 and "not this key's tenant" in rejected["reason"]
    assert task_rows(served.system, tenant=OTHER) == []


def test_a_line_the_domain_refuses_is_422_with_its_id_and_reason(served: Served) -> None:
    approve = command("a1", "task.approve", AT, GYM, task_id="no-such-task")
    answer = served.api(GYM).post("/v1/messages", content=_jsonl(_task("t1"), approve))
    assert answer.status_code == 422
    [rejected] = answer.json()["rejected"]
    assert (rejected["line"], rejected["id"]) == (2, "a1") and "no-such-task" in rejected["reason"]
    assert [line["id"] for line in answer.json()["accepted"]] == ["t1"]


def test_a_repeated_id_is_accepted_as_already_received(served: Served) -> None:
    client = served.api(GYM)
    client.post("/v1/messages", content=json.dumps(_task("t1")))
    again = client.post("/v1/messages", content=json.dumps(_task("t1")))
    assert again.status_code == 202
    assert again.json()["accepted"][0]["status"] == "already received"


def test_no_key_is_401_and_an_operators_key_publishes_for_any_tenant(served: Served) -> None:
    assert served.client().post("/v1/messages", content=json.dumps(_task("t1"))).status_code == 401
    answer = served.api(operator=True).post("/v1/messages", content=_jsonl(_task("t1"), _task("t2", OTHER)))
    assert answer.status_code == 202, answer.text


def test_a_body_over_loopline_http_max_body_is_413_and_says_the_limit(served: Served) -> None:
    small = Served(served.system, ServeOptions.load({"LOOPLINE_HTTP_MAX_BODY": "200"}))
    served.clients += small.clients
    answer = small.api(GYM).post("/v1/messages", content=_jsonl(_task("t1"), _task("t2")))
    assert answer.status_code == 413 and "200 allowed" in answer.json()["error"]
    assert task_rows(served.system, tenant=GYM) == []


def test_a_signed_producer_is_rate_limited_per_tenant_and_source(served: Served) -> None:
    served.publish(command("secrets", "tenant.configure", AT, GYM, github_webhook_secret="gh-s3cret"),
                   command("secrets", "tenant.configure", AT, OTHER, github_webhook_secret="gh-s3cret"))
    limited = Served(served.system, ServeOptions(rate_per_minute=2))
    raw = webhooks.body(webhooks.ping())
    headers = webhooks.github_headers("gh-s3cret", raw, "ping")
    answers = [limited.client().post(f"/v1/webhooks/github/{GYM}", content=raw, headers=headers) for _ in range(3)]
    other_tenant = limited.client().post(f"/v1/webhooks/github/{OTHER}", content=raw, headers=headers)
    served.clients += limited.clients
    assert [answer.status_code for answer in answers] == [200, 200, 429] and other_tenant.status_code == 200
    assert int(answers[2].headers["Retry-After"]) >= 1


def test_a_key_over_its_rate_limit_is_429_with_retry_after(served: Served) -> None:
    limited = Served(served.system, ServeOptions(rate_per_minute=2))
    client = limited.api(GYM)
    served.clients += limited.clients
    answers = [client.post("/v1/messages", content=json.dumps(_task(f"t{n}"))) for n in range(3)]
    assert [answer.status_code for answer in answers] == [202, 202, 429]
    assert int(answers[2].headers["Retry-After"]) >= 1 and "2 requests a minute" in answers[2].json()["error"]
    assert [row["task_id"] for row in task_rows(served.system, tenant=GYM)] == ["t0", "t1"]


def test_a_tenants_key_may_not_pause_the_system_configure_or_resume_and_nothing_changes(served: Served) -> None:
    lines = [command("p1", "system.pause", AT, GYM, reason="mine now"),
             command("c1", "tenant.configure", AT, GYM, daily_send_limit=100_000, sms_url="https://evil.example/sms"),
             command("r1", "tenant.resume", AT, GYM, reason="let me go"),
             command("u1", "contact.resubscribe", AT, GYM, contact="ann@example.com", reason="she asked")]
    answer = served.api(GYM).post("/v1/messages", content=_jsonl(*lines))
    assert answer.status_code == 400 and answer.json()["accepted"] == []
    reasons = {line["line"]: line["reason"] for line in answer.json()["rejected"]}
    assert set(reasons) == {1, 2, 3, 4}
    assert all("operator's command" in reason and "tenant's key may not publish it" in reason
               for reason in reasons.values())
    assert _pauses(served) == {"system": None, "tenants": []}
    assert _settings(served, GYM) == TenantSettings()


def test_a_tenants_key_pauses_its_tenant_in_its_own_name_whatever_by_it_claims(served: Served) -> None:
    key = served.key(GYM)
    key_id = served.keys.find(key).key_id
    answer = served.client(authorization=f"Bearer {key}").post(
        "/v1/messages", content=json.dumps(command("p1", "tenant.pause", AT, GYM, reason="hold on", by="operator")))
    assert answer.status_code == 202, answer.text
    assert [pause["by"] for pause in _pauses(served)["tenants"]] == [f"key {key_id}"]


def test_the_operators_key_may_pause_the_system_and_configure_a_tenant(served: Served) -> None:
    lines = [command("c1", "tenant.configure", AT, GYM, sms_url="https://sms.example/send"),
             command("p1", "system.pause", AT, "operator", reason="maintenance")]
    answer = served.api(operator=True).post("/v1/messages", content=_jsonl(*lines))
    assert answer.status_code == 202, answer.text
    assert _pauses(served)["system"]["reason"] == "maintenance"
    assert _settings(served, GYM).sms_url == "https://sms.example/send"


def test_a_utf16_body_is_refused_whole_asking_for_utf8_without_a_files_hint(served: Served) -> None:
    answer = served.api(GYM).post("/v1/messages", content=json.dumps(_task("t1")).encode("utf-16"))
    assert answer.status_code == 400
    assert answer.json()["error"] == "the input is UTF-16 text and Loopline reads UTF-8: send the body as UTF-8"
    assert task_rows(served.system, tenant=GYM) == []
