"""Whether the servers the settings name answer at all, checked once before a command connects, so an
unreachable one is reported in seconds (`LOOPLINE_CONNECT_TIMEOUT`) with the setting that names it,
instead of after each client's own retries."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Iterator

from loopline.adapters.config import Settings


class DependencyUnavailable(Exception):
    """A server Loopline needs does not answer; the text names the setting and the address."""


def check_reachable(settings: Settings) -> None:
    databases: dict[str, list[str]] = {}  # the same database is checked once, naming every setting that names it
    for setting, url in (("LOOPLINE_EVENT_STORE", settings.event_store), ("LOOPLINE_READ_MODEL", settings.read_model)):
        if url.startswith(("postgresql://", "postgres://")):
            databases.setdefault(url, []).append(setting)
    for url, names in databases.items():
        _check("PostgreSQL", " and ".join(names), list(_postgres_addresses(url)), settings.connect_timeout,
               _postgres_answers)
    if settings.kafka:
        check_kafka(settings.kafka, settings.connect_timeout)


def check_kafka(bootstrap: str, timeout: float) -> None:
    """Raises DependencyUnavailable unless a broker of LOOPLINE_KAFKA accepts a connection within the timeout."""
    _check("Kafka", "LOOPLINE_KAFKA", list(_kafka_addresses(bootstrap)), timeout)


def _check(server: str, setting: str, addresses: list[str], timeout: float,
           answers: Callable[[socket.socket], None] = lambda _: None) -> None:
    """Passes if any of the addresses accepts a connection, and `answers`, within the timeout (clients try them all)."""
    errors = []
    for address in addresses:
        try:
            with _connect(address, timeout) as sock:
                answers(sock)
            return
        except TimeoutError:
            errors.append(f"{address}: no answer within {timeout:g} s (LOOPLINE_CONNECT_TIMEOUT)")
        except OSError as error:
            errors.append(f"{address}: {error.strerror or error}")
    raise DependencyUnavailable(
        f"{server} is unreachable ({'; '.join(errors)}); check {setting} and that the server is running"
    )


def _connect(address: str, timeout: float) -> socket.socket:
    if address.startswith("/"):  # a PostgreSQL Unix socket
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError:
            sock.close()
            raise
        return sock
    host, _, port = address.rpartition(":")
    return socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)


def _postgres_answers(sock: socket.socket) -> None:
    """A PostgreSQL server answers an SSLRequest with one byte, S or N, before any authentication:
    a listener that is not one (or a server that hangs) is caught here within the same timeout."""
    sock.sendall(struct.pack("!ii", 8, 80877103))
    if sock.recv(1) not in (b"S", b"N"):
        raise OSError(0, "answered, but not as PostgreSQL does")


def _postgres_addresses(url: str) -> Iterator[str]:
    """libpq's hosts and ports (`host=a,b`, a socket directory for `host=/dir`), with its defaults."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # without the scale extras the event store reports what to install
        return
    params = conninfo_to_dict(url)
    hosts = str(params.get("host") or "localhost").split(",")
    ports = str(params.get("port") or "5432").split(",")
    for index, host in enumerate(hosts):
        port = ports[index] if len(ports) == len(hosts) else ports[0]
        yield f"{host}/.s.PGSQL.{port}" if host.startswith("/") else f"{host}:{port}"


def _kafka_addresses(bootstrap: str) -> Iterator[str]:
    for server in bootstrap.split(","):
        address = server.strip().split("://")[-1]
        yield address if ":" in address else f"{address}:9092"
