"""The operator's System page and the operations endpoints: only the operator's key sees or presses anything, a
pause pressed there is the same `tenant.pause` the CLI publishes (and holds), `/metrics` reports what the stores
hold, and every request leaves one JSON log line."""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime, timezone
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.exc import OperationalError

from loopline.projections.model_usage import model_usage
from loopline.projections.pauses import current_pauses
from loopline.runtime.status import system_status
from loopline.runtime.worker_log import JsonLines
from tests.conftest import command
from tests.integration.test_quarantine import append_raw
from tests.web.conftest import Served, csrf_of

T0 = "2026-03-13T10:00:00Z"


def pauses(served: Served) -> dict[str, Any]:
    with served.system.projections.engine.connect() as conn:
        return current_pauses(conn)


def press(client: TestClient, button: str, **fields: str) -> Response:
    """Submits the System page's form with the button of that text, as a browser would."""
    page = client.get("/system").text
    own = re.search(rf'formaction="([^"]+)">{button}</button>', page)
    forms = re.findall(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', page, re.S)
    action = own.group(1) if own else next(action for action, body in forms if f">{button}</button>" in body)
    return client.post(action, data={"csrf": csrf_of(page), **fields})


def test_a_tenant_key_neither_sees_the_system_page_nor_presses_its_buttons(served: Served) -> None:
    tenant = served.browser("gym_a")
    token = served.csrf(tenant, "/login")
    assert tenant.get("/system").status_code == 403
    assert served.api("gym_a").get("/system").status_code == 403
    for button in ("pause-tenant", "resume-tenant", "pause", "resume"):
        answer = tenant.post(f"/system/{button}", data={"csrf": token, "tenant": "gym_a", "reason": "mine"})
        assert answer.status_code == 403
    assert pauses(served) == {"system": None, "tenants": []}
    assert "/system" not in tenant.get("/login").text  # no System link in a tenant's navigation


def test_the_operator_sees_a_parked_message_with_its_reason_and_the_lag(served: Served) -> None:
    append_raw(served.system, command("p-1", "task.create", T0, "gym_a", task_id="far", title="Far",
                                      expires_in_days=3_000_000))
    served.publish(command("ok-1", "task.create", T0, "gym_a", task_id="t", title="Fine"),
                   command("bad-1", "task.reject", T0, "gym_a", task_id="nope", reason="x"))
    page = served.browser(operator=True).get("/system")
    assert page.status_code == 200
    parked = re.search(r'<section id="parked".*?</section>', page.text, re.S).group(0)
    assert "command task.create p-1" in parked and "expires_in_days" in parked
    assert "bad-1" in parked  # the refused message, with the domain's reason
    lag = re.search(r'<section id="lag".*?</section>', page.text, re.S).group(0)
    assert 'data-source="embedded log"' in lag and 'data-read-model="tasks"' in lag
    for section in ("limits", "pauses"):
        assert f'<section id="{section}"' in page.text


def test_pause_tenant_pauses_it_until_resume_tenant(served: Served) -> None:
    operator = served.browser(operator=True)
    answer = press(operator, "Pause tenant", tenant="gym_a", reason="templates under review")
    assert answer.status_code == 303 and answer.headers["location"] == "/system"
    page = operator.get("/system").text
    assert 'data-status="took effect"' in page and 'data-tenant="gym_a"' in page
    (paused,) = pauses(served)["tenants"]
    assert paused["tenant"] == "gym_a" and paused["reason"] == "templates under review"
    assert paused["by"].startswith("operator key ")
    assert system_status(served.system, datetime.now(timezone.utc))["pauses"]["tenants"][0]["tenant"] == "gym_a"
    press(operator, "Resume tenant", tenant="gym_a", reason="reviewed")
    assert pauses(served)["tenants"] == [] and 'data-tenant="gym_a"' not in operator.get("/system").text


def test_pause_everything_holds_every_tenant_until_resume_everything(served: Served) -> None:
    operator = served.browser(operator=True)
    press(operator, "Pause everything", reason="incident 42")
    assert pauses(served)["system"]["reason"] == "incident 42"
    assert "Everything is paused" in operator.get("/system").text
    press(operator, "Resume everything", reason="incident over")
    assert pauses(served)["system"] is None


def test_a_refused_press_is_shown_with_the_reason(served: Served) -> None:
    operator = served.browser(operator=True)
    press(operator, "Pause tenant", tenant="gym_a", reason="")
    result = re.search(r'<p class="result[^"]*" data-status="([^"]+)">(.*?)</p>', operator.get("/system").text, re.S)
    assert result and result.group(1) == "refused"
    assert "tenant.pause for gym_a" in result.group(2) and "data.reason: must not be empty" in result.group(2)
    assert pauses(served)["tenants"] == []


def test_a_press_without_the_forms_token_is_refused_and_publishes_nothing(served: Served) -> None:
    operator = served.browser(operator=True)
    before = served.system.messages_processed()
    answer = operator.post("/system/pause-tenant", data={"tenant": "gym_a", "reason": "forged"})
    assert answer.status_code == 403
    assert operator.post("/system/pause", data={"reason": "forged", "csrf": "stale"}).status_code == 403
    assert served.system.messages_processed() == before and pauses(served) == {"system": None, "tenants": []}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_needs_the_operators_key(served: Served) -> None:
    assert served.client().get("/metrics").status_code == 401
    assert served.api("gym_a").get("/metrics").status_code == 403


def test_metrics_report_what_was_applied_refused_and_ticked(served: Served) -> None:
    served.publish(command("c-1", "task.create", T0, "gym_a", task_id="t", title="One"),
                   command("c-2", "task.reject", T0, "gym_a", task_id="nope", reason="x"),
                   command("c-3", "task.complete", T0, "gym_a", task_id="t", summary="done"))
    served.system.tick(datetime(2026, 3, 14, tzinfo=timezone.utc))
    with served.system.projections.engine.begin() as conn:  # what the agent's decisions spent, as projected
        conn.execute(model_usage.insert().values(key="gym_a 2026-03-13", tenant="gym_a", day="2026-03-13", calls=3,
                                                 held=1, decisions=2, input_tokens=1200, output_tokens=300,
                                                 cache_read_tokens=800, cache_write_tokens=0))
    answer = served.api(operator=True).get("/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    found = samples(answer.text)
    assert found[("loopline_messages_processed_total", ())] == 3
    assert found[("loopline_messages_applied_total", ())] == 2
    assert found[("loopline_messages_rejected_total", ())] == 1
    assert found[("loopline_input_pending", (("source", "embedded log"),))] == 0
    assert found[("loopline_read_model_lag", (("read_model", "tasks"),))] == 0
    delivered = [value for (name, labels), value in found.items()
                 if name == "loopline_deliveries" and ("status", "delivered") in labels]
    assert delivered == [1]  # the owner's notice that the task was completed
    assert found[("loopline_tick_duration_seconds", ())] > 0
    assert found[("loopline_system_paused", ())] == 0
    assert found[("loopline_model_calls_total", (("tenant", "gym_a"),))] == 3
    assert found[("loopline_model_tokens_total", (("kind", "cache_read"), ("tenant", "gym_a")))] == 800


@pytest.fixture
def request_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="loopline.http")
    return caplog


def test_an_operators_answer_for_a_tenant_logs_that_tenant_and_the_task(
    served: Served, request_log: pytest.LogCaptureFixture
) -> None:
    served.publish(command("c-1", "task.create", T0, "gym_a", task_id="spring/1", title="One", confidence=0.5))
    operator = served.browser(operator=True)
    token = served.csrf(operator, "/")
    request_log.clear()
    answer = operator.post("/attention/tasks/reject/spring%2F1", data={"csrf": token, "tenant": "gym_a"})
    assert answer.status_code == 303
    (line,) = (json.loads(JsonLines("host:1").format(record)) for record in request_log.records)
    assert (line["tenant"], line["task_id"], line["path"]) == ("gym_a", "spring/1", "/attention/tasks/reject/spring/1")
    assert line["key_id"] is not None


def test_every_request_leaves_one_json_line_with_who_asked(served: Served, request_log: pytest.LogCaptureFixture) -> None:
    client = served.api("gym_a")
    client.get("/test/whoami")
    client.get("/tasks/t-42")
    served.client().get("/healthz")
    keyed, task, anonymous = (json.loads(JsonLines("host:1").format(record)) for record in request_log.records)
    assert keyed["event"] == "http.request" and keyed["method"] == "GET" and keyed["path"] == "/test/whoami"
    assert keyed["status"] == 200 and keyed["tenant"] == "gym_a" and keyed["key_id"] == served.keys.list("gym_a")[0].key_id
    assert isinstance(keyed["duration_ms"], float) and "task_id" not in keyed
    assert task["task_id"] == "t-42"
    assert anonymous["status"] == 200 and anonymous["key_id"] is None and anonymous["tenant"] is None
    assert set(keyed) >= {"at", "level", "method", "path", "status", "duration_ms", "key_id", "tenant"}


def test_readyz_answers_unavailable_to_anyone_and_logs_why_for_the_operator(
    served: Served, request_log: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused() -> None:
        raise OperationalError("connect", {}, Exception('password authentication failed for "secret-path"'))

    monkeypatch.setattr(served.system.projections.engine, "connect", refused)
    answer = served.client().get("/readyz")
    assert answer.status_code == 503
    assert answer.json() == {"ready": False, "checks": {"event_store": "ok", "read_models": "unavailable"}}
    assert "secret-path" not in answer.text
    [logged] = [json.loads(JsonLines("host:1").format(record)) for record in request_log.records
                if record.getMessage() == "readyz.unavailable"]
    assert logged["check"] == "read_models" and "secret-path" in logged["error"] and logged["level"] == "warning"
