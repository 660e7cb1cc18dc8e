"""Keys and sessions: the API takes a live Bearer key, the dashboard a session from logging in with one, forms a
CSRF token; a revoked key stops both at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

from tests.web.conftest import Served, csrf_of


def test_the_api_refuses_a_request_without_a_live_key(served: Served) -> None:
    anonymous = served.client()
    assert anonymous.get("/readyz").status_code == 200  # operations endpoints need no key
    for headers in ({}, {"authorization": "Bearer ll_nope_nope"}, {"authorization": "Basic abc"}):
        answer = anonymous.post("/v1/messages", content=b"{}", headers=headers)
        assert answer.status_code == 401, (headers, answer.text)


def test_a_page_without_a_session_sends_the_owner_to_log_in_and_back(served: Served) -> None:
    browser = served.client()
    answer = browser.get("/test/whoami?status=executing")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login?next=/test/whoami%3Fstatus%3Dexecuting"
    page = browser.get("/login?next=/test/whoami")
    key = served.key("gym_a")
    logged_in = browser.post("/login", data={"key": key, "next": "/test/whoami", "csrf": csrf_of(page.text)})
    assert logged_in.status_code == 303 and logged_in.headers["location"] == "/test/whoami"
    cookie = logged_in.headers["set-cookie"].lower()
    assert "secure" in cookie and "httponly" in cookie and "samesite=lax" in cookie
    assert key not in logged_in.headers["set-cookie"]  # the cookie names the key's id, never the key
    assert browser.get("/test/whoami").json() == {"tenant": "gym_a", "operator": False}


def test_a_wrong_key_or_a_missing_csrf_token_logs_no_one_in(served: Served) -> None:
    browser = served.client()
    token = csrf_of(browser.get("/login").text)
    wrong = browser.post("/login", data={"key": "ll_abc_def", "csrf": token})
    assert wrong.status_code == 401 and "not a live API key" in wrong.text
    forged = browser.post("/login", data={"key": served.key("gym_a")})
    assert forged.status_code == 403 and "CSRF" in forged.text
    assert served.client().post("/login", data={"key": served.key("gym_a"), "csrf": token}).status_code == 403


def test_login_never_redirects_off_the_site(served: Served) -> None:
    browser = served.client()
    token = csrf_of(browser.get("/login").text)
    for target in ("https://evil.example/", "//evil.example/", "/\\evil.example"):
        answer = browser.post("/login", data={"key": served.key("gym_a"), "next": target, "csrf": token})
        assert answer.headers["location"] == "/"
        token = csrf_of(browser.get("/login").text)


def test_revoking_a_key_ends_its_session_and_its_api_calls(served: Served) -> None:
    browser = served.browser("gym_a")
    token = served.key("gym_a")
    api = served.client(authorization=f"Bearer {token}")
    assert browser.get("/test/whoami").status_code == 200 and api.get("/test/whoami").status_code == 200
    for record in served.keys.list("gym_a"):
        served.keys.revoke(record.key_id, datetime.now(timezone.utc))
    assert browser.get("/test/whoami").status_code == 303
    assert api.get("/test/whoami").status_code == 303
    assert served.keys.find(token) is None


def test_logging_out_needs_the_forms_token_and_ends_the_session(served: Served) -> None:
    browser = served.browser("gym_a")
    assert browser.post("/logout", data={"next": "/"}).status_code == 403
    token = csrf_of(browser.get("/login").text)
    assert browser.post("/logout", data={"csrf": token}).headers["location"] == "/login"
    assert browser.get("/test/whoami").status_code == 303


def test_a_form_is_read_only_when_url_encoded_and_small(served: Served) -> None:
    browser = served.client()
    token = csrf_of(browser.get("/login").text)
    multipart = browser.post("/login", data={"csrf": token}, files={"upload": ("big.bin", b"x" * 1024)})
    assert multipart.status_code == 415 and "application/x-www-form-urlencoded" in multipart.text
    form = {"content-type": "application/x-www-form-urlencoded"}
    too_big = browser.post("/login", content=f"csrf={token}&key={'k' * 70_000}", headers=form)
    assert too_big.status_code == 413 and "64 KiB" in too_big.text

    def chunks() -> Iterator[bytes]:
        yield f"csrf={token}".encode()

    assert browser.post("/login", content=chunks(), headers=form).status_code == 411
    many = "&".join(f"f{i}=1" for i in range(60))
    assert browser.post("/login", content=f"csrf={token}&{many}", headers=form).status_code == 400
    assert browser.post("/login", content=f"csrf={token}&key=nope", headers=form).status_code == 401


def test_keys_are_kept_as_hashes_and_revoked_once(served: Served) -> None:
    issued = served.keys.create(tenant="gym_a", operator=False, label="ci", now=datetime.now(timezone.utc))
    with served.system.ledger_engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT secret_sha256 FROM loopline_api_keys WHERE key_id = ?",
                                      (issued.key_id,)).scalar()
    assert stored and issued.token.split("_", 2)[2] not in stored
    assert served.keys.find(issued.token).tenant == "gym_a"
    first = served.keys.revoke(issued.key_id, datetime(2026, 1, 1, tzinfo=timezone.utc))
    again = served.keys.revoke(issued.key_id, datetime(2026, 2, 1, tzinfo=timezone.utc))
    assert first.revoked_at == again.revoked_at and served.keys.find(issued.token) is None


def test_ready_names_what_is_checked_and_health_needs_nothing(served: Served) -> None:
    client = served.client()
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"ready": True, "checks": {"event_store": "ok", "read_models": "ok"}}


def test_the_http_api_is_described_by_the_frameworks_openapi_document(served: Served) -> None:
    document = served.client().get("/openapi.json").json()
    assert document["info"]["title"] == "Loopline" and "/readyz" in document["paths"]
    assert "/login" not in document["paths"]  # the dashboard's pages are not API


def test_a_page_not_found_still_shows_a_logged_in_owner_the_nav(served: Served) -> None:
    page = served.browser("gym_a").get("/tasks/no-such-task")
    assert page.status_code == 404 and 'href="/scorecard"' in page.text
