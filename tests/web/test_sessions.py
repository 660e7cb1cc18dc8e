"""Dashboard sessions live on the server: logging out, two hours idle or twelve hours in all ends one, a copied cookie
included (revoking the key: tests/web/test_auth.py); the cookie-signing secret is no API key."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fastapi.testclient import TestClient

from loopline.adapters.sessions import Sessions
from tests.unit.fakes import FakeClock
from tests.web.conftest import Served

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def copy_of(served: Served, browser: TestClient) -> TestClient:
    """Another client carrying the same session cookie, as one copied off the owner's machine would."""
    copy = served.client()
    copy.cookies.update(browser.cookies)
    return copy


def test_a_copied_cookie_is_refused_once_its_owner_logs_out(served: Served) -> None:
    browser = served.browser("gym_a")
    copy = copy_of(served, browser)
    assert copy.get("/test/whoami").json() == {"tenant": "gym_a", "operator": False}

    assert browser.post("/logout", data={"csrf": served.csrf(browser)}).status_code == 303
    assert copy.get("/test/whoami").status_code == 303
    assert browser.get("/test/whoami").status_code == 303


def test_two_hours_idle_ends_a_session_and_use_keeps_it_going(served: Served) -> None:
    clock = FakeClock(START)
    served.app.state.sessions.clock = clock
    active, idle = served.browser("gym_a"), served.browser("gym_a")
    for hours in (1.9, 3.8, 5.7, 7.6, 9.5, 11.4):  # each request within two hours of the last one
        clock.moment = START + timedelta(hours=hours)
        assert active.get("/test/whoami").status_code == 200
    assert idle.get("/test/whoami").status_code == 303

    clock.moment = START + timedelta(hours=12, minutes=1)  # the cap, however busy the session was
    assert active.get("/test/whoami").status_code == 303


def test_a_session_is_marked_seen_at_most_once_a_minute(served: Served) -> None:
    clock = FakeClock(START)
    sessions = Sessions(served.system.ledger_engine, clock)
    session_id = sessions.start(served.keys.create(tenant="gym_a", operator=False, label="t", now=START).key_id)

    def last_seen() -> str:
        with served.system.ledger_engine.connect() as conn:
            return conn.exec_driver_sql("SELECT last_seen FROM loopline_sessions").scalar()

    clock.moment = START + timedelta(seconds=59)
    assert sessions.key_of(session_id) is not None and last_seen().startswith("2026-03-02 09:00:00")
    clock.moment = START + timedelta(minutes=1, seconds=1)
    assert sessions.key_of(session_id) is not None and last_seen().startswith("2026-03-02 09:01:01")


def test_logging_in_drops_the_sessions_past_the_cap(served: Served) -> None:
    clock = FakeClock(START)
    sessions = Sessions(served.system.ledger_engine, clock)
    key_id = served.keys.create(tenant="gym_a", operator=False, label="t", now=START).key_id
    first = sessions.start(key_id)
    clock.moment = START + timedelta(hours=12, seconds=1)
    sessions.start(key_id)
    with served.system.ledger_engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM loopline_sessions").scalar() == 1
    assert sessions.key_of(first) is None


def test_the_cookie_secret_is_no_api_key_and_every_serve_process_shares_it(served: Served) -> None:
    issued = served.keys.create(tenant="gym_a", operator=False, label="ci", now=START)
    with served.system.ledger_engine.connect() as conn:
        stored_keys = [row[0] for row in conn.exec_driver_sql("SELECT key_id FROM loopline_api_keys")]
        secrets = [row[0] for row in conn.exec_driver_sql("SELECT secret FROM loopline_session_secret")]
    assert stored_keys == [issued.key_id] and [k.key_id for k in served.keys.list()] == [issued.key_id]
    assert secrets == [Sessions(served.system.ledger_engine).cookie_secret()]
