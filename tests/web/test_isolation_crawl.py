"""Tenant isolation over every route the app has, found from `app.routes` rather than listed (a route added later is
crawled too): gym B's owner, with a session and with an API key, asks every GET and POST with gym A's ids in its path
and in its form or body; no answer is a 200 showing A's data, and nothing of A's changes."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from fastapi.testclient import TestClient
from starlette.routing import Route

from loopline.projections.task_queries import list_tasks
from loopline.projections.timeline import recent
from tests.web.conftest import Served
from tests.web.two_gyms import A, A_CONTACTS, A_IDS, A_TITLES, B, ESCALATED, seed

SESSION_ROUTES = {"/login", "/logout"}
"""Logging in or out concerns no tenant's data, and logging out would end the crawl's session."""
DASHBOARD_PAGES = {"/", "/scorecard", "/tasks", "/tasks/{task_id}", "/loops"}
"""The pages of PLAN22's page contracts: a crawl that missed them would prove nothing."""
SOURCE = "crm"
"""A webhook source for routes that take one (`/v1/webhooks/{source}/{tenant}`)."""


def _routes(served: Served, method: str) -> list[Route]:
    return [route for route in served.app.routes
            if isinstance(route, Route) and method in (route.methods or ()) and route.path not in SESSION_ROUTES]


def _path(route: Route, id_: str) -> str:
    """The route's path with every parameter naming A's id (a tenant parameter names A itself)."""
    values = {name: A if name == "tenant" else SOURCE if name == "source" else id_ for name in route.param_convertors}
    return route.path_format.format(**values)


def _leaks(text: str) -> list[str]:
    return [shown for shown in (*A_IDS, *A_TITLES, *A_CONTACTS) if shown in text]


def _a_state(served: Served) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Everything recorded about A (its events as the audit trail reads them) and its tasks as the pages read them."""
    with served.system.projections.engine.connect() as conn:
        return recent(conn, limit=1_000_000, tenant=A), list_tasks(conn, tenant=A)


def _form(csrf: str, id_: str) -> dict[str, str]:
    """Every field a dashboard form names an item or a tenant by, A's, with text where a form wants some."""
    words = "B's owner writing about A's task"
    return {"csrf": csrf, "id": id_, "task_id": id_, "item_id": id_, "question_id": id_, "proposal_id": id_,
            "tenant": A, "guidance": words, "reply": words, "draft": words, "body": words, "answer": words,
            "option": words, "reason": words, "type": "not_now"}


def _command(id_: str) -> bytes:
    return json.dumps({"kind": "command", "id": f"crawl-{id_}", "type": "task.approve", "tenant": A,
                       "at": datetime.now(timezone.utc).isoformat(), "data": {"task_id": id_}}).encode()


def test_no_route_shows_or_changes_another_tenants_data(served: Served) -> None:
    seed(served.system, datetime.now(timezone.utc))
    a_command = served.app.state.publisher.command(A, "task.guidance", {"task_id": ESCALATED,
                                                                        "guidance": "offer a free class"}, "dashboard")
    ids = [*A_IDS, a_command.id, "a-1"]
    before = _a_state(served)
    assert all(before), "the seed recorded nothing for A to compare"
    session, api = served.browser(B), served.api(B)
    clients: list[tuple[str, TestClient]] = [("session", session), ("api key", api)]
    crawled: set[str] = set()
    for route in _routes(served, "GET"):
        crawled.add(route.path)
        for path in {_path(route, id_) for id_ in ids}:
            for who, client in clients:
                answer = client.get(path, params={"tenant": A})
                assert answer.status_code != 200 or not _leaks(answer.text), \
                    f"GET {path} with B's {who} answered 200 showing A's {_leaks(answer.text)}"
    csrf = served.csrf(session, "/login")
    for route in _routes(served, "POST"):
        for id_ in ids:
            path = _path(route, id_)
            forms = session.post(path, data=_form(csrf, id_))
            sent = api.post(path, content=_command(id_), headers={"content-type": "application/json"})
            for who, answer in (("session", forms), ("api key", sent)):
                assert answer.status_code != 200 or not _leaks(answer.text), \
                    f"POST {path} with B's {who} answered 200 showing A's {_leaks(answer.text)}"
    assert DASHBOARD_PAGES <= crawled, f"the crawl never reached {DASHBOARD_PAGES - crawled}"
    assert _a_state(served) == before, "a request of B's changed what A has"
