"""The HTTP edge on a real embedded home, driven in this process through FastAPI's TestClient (no server, no
network): `served.api(tenant)` calls the API with a tenant's Bearer key, `served.browser(tenant)` is logged in to
the dashboard with a session cookie, and `served.csrf(client)` is the token its forms must carry."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from fastapi import Depends
from fastapi.testclient import TestClient

from loopline.adapters.api_keys import ApiKeys
from loopline.runtime.system import DrainReport, System
from loopline.web.app import ServeOptions, create_app
from loopline.web.auth import Principal, page_principal
from tests.conftest import build_system, publish

BASE_URL = "https://testserver"  # the session cookie is Secure: the client sends it over https only
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Served:
    system: System
    options: ServeOptions
    clients: list[TestClient] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.app = create_app(self.system, self.options)
        self.app.add_api_route("/test/whoami", _whoami)  # a page behind the login, before any real page is tested
        self.keys = ApiKeys(self.system.ledger_engine)

    def key(self, tenant: str | None = None, *, operator: bool = False) -> str:
        return self.keys.create(tenant=tenant, operator=operator, label="test",
                                now=datetime.now(timezone.utc)).token

    def client(self, **headers: str) -> TestClient:
        client = TestClient(self.app, base_url=BASE_URL, headers=headers, follow_redirects=False)
        self.clients.append(client)
        return client

    def api(self, tenant: str | None = None, *, operator: bool = False) -> TestClient:
        return self.client(authorization=f"Bearer {self.key(tenant, operator=operator)}")

    def browser(self, tenant: str | None = None, *, operator: bool = False) -> TestClient:
        """A client logged in to the dashboard through the login form, as a person would."""
        client = self.client()
        page = client.get("/login")
        answer = client.post("/login", data={"key": self.key(tenant, operator=operator), "next": "/",
                                              "csrf": csrf_of(page.text)})
        assert answer.status_code == 303, answer.text
        return client

    def csrf(self, client: TestClient, path: str = "/login") -> str:
        return csrf_of(client.get(path).text)

    def publish(self, *messages: dict[str, Any]) -> DrainReport:
        return publish(self.system, *messages)


def _whoami(principal: Principal = Depends(page_principal)) -> dict[str, Any]:
    return {"tenant": principal.tenant, "operator": principal.operator}


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, "the page has no form carrying a CSRF token"
    return found.group(1)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    system = build_system(tmp_path / "home")
    served = Served(system, ServeOptions())
    try:
        yield served
    finally:
        for client in served.clients:
            client.close()
        system.close()
