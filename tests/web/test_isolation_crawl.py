"""Tenant isolation over every route the app has, found from `app.routes` rather than listed (a route added later is
crawled too): gym B's owner, with a session and with an API key, asks every GET and POST with gym A's ids in its path
and in its form or body, and posts each form of B's own items with A's id in place of B's; no answer is a 200 showing
A's data, and nothing of A's changes."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

from fastapi.routing import RouteContext, iter_route_contexts
from fastapi.testclient import TestClient

from loopline.projections.task_queries import list_tasks
from loopline.projections.timeline import recent
from tests.web.conftest import Served
from tests.web.two_gyms import A, A_CONTACTS, A_IDS, A_TITLES, B, B_IDS, ESCALATED, seed

SESSION_ROUTES = {"/login", "/logout"}
"""Logging in or out concerns no tenant's data, and logging out would end the crawl's session."""
DASHBOARD_PAGES = {"/", "/scorecard", "/tasks", "/tasks/{task_id}", "/loops"}
"""The pages of PLAN22's page contracts: a crawl that missed them would prove nothing."""
FORM_ACTION = re.compile(r'<form[^>]*method="post"[^>]*action="([^"]+)"')
SOURCE = "crm"
"""A webhook source for routes that take one (`/v1/webhooks/{source}/{tenant}`)."""


def _routes(served: Served, method: str) -> list[RouteContext]:
    """Every route of the method, included routers' too: since FastAPI 0.137 `app.routes` holds an included router
    as one entry, which `iter_route_contexts` opens."""
    return [route for route in iter_route_contexts(served.app.routes)
            if method in (route.methods or ()) and route.path_format not in SESSION_ROUTES]


def _path(route: RouteContext, id_: str) -> str:
    """The route's path with every parameter naming A's id (a tenant parameter names A itself)."""
    names = re.findall(r"{(\w+)}", route.path_format)
    return route.path_format.format(**{name: A if name == "tenant" else SOURCE if name == "source" else id_
                                       for name in names})


def _leaks(text: str) -> list[str]:
    return [shown for shown in (A, *A_IDS, *A_TITLES, *A_CONTACTS) if shown in text]


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


def _own_forms(session: TestClient) -> set[str]:
    """Where the forms of B's own items on the first screen post to (approve, reject, guidance, reply, take over)."""
    return {action for action in FORM_ACTION.findall(session.get("/").text) if any(own in action for own in B_IDS)}


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
        crawled.add(route.path_format)
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
    own_forms = _own_forms(session)
    assert len(own_forms) >= 4, f"B's first screen has too few forms to replay: {own_forms}"
    for action in own_forms:
        for id_ in ids:
            path = next(action.replace(own, id_) for own in B_IDS if own in action)
            answer = session.post(path, data=_form(csrf, id_), follow_redirects=True)
            assert answer.status_code != 200 or not _leaks(answer.text), \
                f"POST {path}, B's own form with A's id, answered 200 showing A's {_leaks(answer.text)}"
    assert DASHBOARD_PAGES <= crawled, f"the crawl never reached {DASHBOARD_PAGES - crawled}"
    assert _a_state(served) == before, "a request of B's changed what A has"
