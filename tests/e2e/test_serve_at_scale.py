"""The web app as `loopline serve` runs it at scale, beside a real `loopline run` worker on the suite's PostgreSQL
and Tansu: the owner approves a task from the first screen and follows the command from pending to took effect; a
signed GitHub review resolves a pull request's loop; the operator's /metrics and /system show the worker's lag.
The app only publishes and reads: every effect is the worker's, and the test waits for the read models."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from loopline.adapters.api_keys import ApiKeys
from loopline.projections.open_loops import list_loops
from loopline.web.app import create_app
from tests.conftest import command
from tests.e2e.scale import ScaleDeployment
from tests.fixtures import webhooks
from tests.servers import Broker, Postgres
from tests.waiting import eventually
from tests.web.conftest import BASE_URL, csrf_of

GYM = "iron_temple"
AT = "2026-03-02T09:00:00Z"
SECRET = "gh-s3cret"
RESULT = re.compile(r'<p class="result" data-status="([^"]+)">')
STATUS = re.compile(r'<dd data-fact="status">([^<(]+)')


@pytest.fixture
def deployment(postgres: Postgres, broker: Broker, tmp_path: Path) -> Iterator[ScaleDeployment]:
    scale = ScaleDeployment(postgres, broker, tmp_path / "home")
    scale.environ["LOOPLINE_PROGRESS_EVERY"] = "0.5"  # the worker's heartbeat (with its lag) soon after it reads
    try:
        yield scale
    finally:
        scale.close()


def _posted(client: TestClient, token: str, *messages: dict[str, Any]) -> None:
    lines = "\n".join(json.dumps(message) for message in messages)
    answer = client.post("/v1/messages", content=lines, headers={"authorization": f"Bearer {token}"})
    assert answer.status_code == 202, answer.text


def _logged_in(client: TestClient, token: str) -> None:
    answer = client.post("/login", data={"key": token, "next": "/", "csrf": csrf_of(client.get("/login").text)})
    assert answer.status_code == 303, answer.text


def _result(client: TestClient, location: str) -> str:
    page = client.get(location)
    assert page.status_code == 200, page.text
    found = RESULT.search(page.text)
    assert found, page.text
    return found.group(1)


def _page_with(client: TestClient, path: str, text: str, **headers: str) -> str | None:
    """The page, once it shows `text`."""
    page = client.get(path, headers=headers).text
    return page if text in page else None


def _task_status(client: TestClient, task_id: str) -> str | None:
    found = STATUS.search(client.get(f"/tasks/{task_id}").text)
    return found.group(1).strip() if found else None


def _loop_resolved(deployment: ScaleDeployment) -> bool | None:
    with deployment.system.projections.engine.connect() as conn:
        loops = list_loops(conn, tenant=GYM, task_id="t-pr")
    return loops[0]["resolved"] if loops else None


def test_an_owner_approves_and_a_webhook_resolves_a_loop_through_serve_at_scale(deployment: ScaleDeployment) -> None:
    worker = deployment.start_worker()
    system = deployment.system
    keys, now = ApiKeys(system.ledger_engine), datetime.now(timezone.utc)
    owner = keys.create(tenant=GYM, operator=False, label="owner", now=now).token
    operator = keys.create(tenant=None, operator=True, label="operator", now=now).token
    with TestClient(create_app(system), base_url=BASE_URL, follow_redirects=False) as client:  # its lifespan connects
        _posted(client, operator, command("c1", "tenant.configure", AT, GYM, execution_mode="limited_auto",
                                          github_webhook_secret=SECRET))
        _posted(client, owner,
                command("c2", "task.create", AT, GYM, task_id="bob", title="Win Bob back", task_type="churn_risk",
                        contact="bob@example.com", to_name="Bob", confidence=0.5,
                        draft={"subject": "We miss you", "body": "Come back, Bob!"}),
                command("c3", "task.create", AT, GYM, task_id="t-pr", title="Land the PR", confidence=0.2),
                command("c4", "task.approve", "2026-03-02T09:01:00Z", GYM, task_id="t-pr"),
                command("c5", "action.record", "2026-03-02T09:02:00Z", GYM, task_id="t-pr",
                        action="open_pull_request", repo="acme/api", resource_id="42"))

        _logged_in(client, owner)
        first_screen = eventually(lambda: _page_with(client, "/", 'data-id="bob"'),
                                  "the worker to bring Bob's task to review, and its leader to project it")
        worker.process.send_signal(signal.SIGSTOP)  # a worker busy elsewhere: the owner sees the command pending
        try:
            pressed = client.post("/attention/tasks/approve/bob", data={"csrf": csrf_of(first_screen)})
            assert pressed.status_code == 303, pressed.text
            location = pressed.headers["location"]
            assert _result(client, location) == "pending"  # on the log; the worker has not applied it yet
        finally:
            worker.process.send_signal(signal.SIGCONT)
        eventually(lambda: _result(client, location) == "took effect", "the worker to apply the approval")
        status = eventually(lambda: _task_status(client, "bob") != "pending_review" and _task_status(client, "bob"),
                            "the task page to show the approved task's status")
        assert status == "ready"  # approved: the agent may take its step (no tick runs in this test)

        eventually(lambda: _loop_resolved(deployment) is False, "the pull request's loop to be registered")
        raw = webhooks.body(webhooks.review_submitted(42))
        review = client.post(f"/v1/webhooks/github/{GYM}", content=raw,
                             headers=webhooks.github_headers(SECRET, raw, "pull_request_review"))
        assert review.status_code == 202, review.text
        assert [(a["type"], a["status"]) for a in review.json()["accepted"]] == [("github.event", "queued")]
        eventually(lambda: _loop_resolved(deployment), "the worker to resolve the loop with the review")

        commands_partition = f"{deployment.environ['LOOPLINE_KAFKA_TOPIC_PREFIX']}loopline.commands["
        scraped = eventually(lambda: _page_with(client, "/metrics", 'loopline_workers{state="alive"} 1.0',
                                                authorization=f"Bearer {operator}"), "the worker's heartbeat")
        assert re.search(rf'loopline_input_pending\{{source="{re.escape(commands_partition)}\d\]"\}} 0\.0', scraped)
        client.post("/logout", data={"csrf": csrf_of(client.get("/").text)})
        _logged_in(client, operator)
        page = client.get("/system").text
        lag = page.split('<section id="lag"')[1].split("</section>")[0]
        assert f'data-source="{commands_partition}' in lag and '<td class="ok">alive' in lag, lag
        assert client.get("/readyz").json() == {
            "ready": True, "checks": {"event_store": "ok", "read_models": "ok", "kafka": "ok"}}
        assert worker.process.poll() is None, worker.log()
