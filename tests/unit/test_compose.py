"""compose.yml and the Dockerfile against Loopline's configuration contract (BRIEF §2, §5).

Docker does not run on the build machines, so the scale deployment is checked by reading it:
the services, their health checks and ports, and the workers' environment as Loopline's own
configuration code (adapters/config.py, adapters/event_store.py) understands it.
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

import loopline.adapters.config
from loopline.adapters.config import Settings
from loopline.adapters.event_store import postgres_env

ROOT = Path(__file__).resolve().parents[2]


def _environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment as strings, from either the mapping or the list form."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(key): "" if value is None else str(value) for key, value in env.items()}


def _published(service: dict[str, Any]) -> dict[int, int]:
    """Container port -> host port, from short ("9094:9094", "127.0.0.1:9094:9094") or long syntax."""
    published: dict[int, int] = {}
    for port in service.get("ports") or []:
        if isinstance(port, dict):
            published[int(port["target"])] = int(port.get("published", port["target"]))
            continue
        parts = str(port).split("/")[0].split(":")
        target = int(parts[-1])
        published[target] = int(parts[-2]) if len(parts) > 1 else target
    return published


def _listeners(value: str) -> dict[str, tuple[str, int]]:
    """'NAME://host:port,...' -> {NAME: (host, port)}."""
    result = {}
    for item in value.split(","):
        name, address = item.strip().split("://", 1)
        host, _, port = address.rpartition(":")
        result[name] = (host, int(port))
    return result


def _healthcheck(service: dict[str, Any]) -> str:
    test = (service.get("healthcheck") or {}).get("test")
    assert test, "no healthcheck"
    return " ".join(test) if isinstance(test, list) else str(test)


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n", " ", text)
    instructions = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    return instructions


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "compose.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]


@pytest.fixture(scope="module")
def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_compose_is_valid_against_the_compose_spec_schema(compose: dict[str, Any]) -> None:
    """tests/fixtures/compose-spec.json is schema/compose-spec.json of github.com/compose-spec/compose-spec."""
    schema = json.loads((ROOT / "tests" / "fixtures" / "compose-spec.json").read_text(encoding="utf-8"))
    errors = [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
              for error in jsonschema.Draft7Validator(schema).iter_errors(compose)]
    assert not errors, errors


def test_the_four_services_exist_and_nothing_runs_zookeeper(services: dict[str, Any]) -> None:
    assert {"kafka", "postgres", "worker", "serve"} <= set(services)
    for name, service in services.items():
        assert "zookeeper" not in name.lower()
        assert "zookeeper" not in str(service.get("image", "")).lower()


def test_kafka_is_apache_kafka_in_kraft_combined_mode(services: dict[str, Any]) -> None:
    kafka = services["kafka"]
    env = _environment(kafka)
    assert str(kafka["image"]).startswith("apache/kafka:")
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert not any(key.startswith("KAFKA_ZOOKEEPER") for key in env)
    for key in ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
                "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"):
        assert env[key] == "1", f"{key} must be 1 on a single broker"
    assert env["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == "0"
    assert int(env["KAFKA_NUM_PARTITIONS"]) >= 1


def test_kafka_listeners_are_consistent(services: dict[str, Any]) -> None:
    env = _environment(services["kafka"])
    listeners = _listeners(env["KAFKA_LISTENERS"])
    advertised = _listeners(env["KAFKA_ADVERTISED_LISTENERS"])
    protocols = dict(item.split(":", 1) for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    controllers = env["KAFKA_CONTROLLER_LISTENER_NAMES"].split(",")

    assert set(listeners) <= set(protocols), "every listener needs a security protocol"
    assert set(controllers) <= set(listeners)
    assert not set(controllers) & set(advertised), "controller listeners are not advertised to clients"
    for name, (_, port) in advertised.items():
        assert name in listeners and listeners[name][1] == port, f"advertised {name} is not a listener on that port"
    # A single voter: this node, on its controller listener.
    node, _, voter = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].partition("@")
    assert node == env["KAFKA_NODE_ID"]
    voter_host, _, voter_port = voter.rpartition(":")
    assert voter_host in {"kafka", services["kafka"].get("hostname")}
    assert int(voter_port) in {listeners[name][1] for name in controllers}


def test_kafka_has_a_healthcheck_and_publishes_its_host_listener_on_9094(services: dict[str, Any]) -> None:
    kafka = services["kafka"]
    assert "kafka-broker-api-versions.sh" in _healthcheck(kafka)
    advertised = _listeners(_environment(kafka)["KAFKA_ADVERTISED_LISTENERS"])
    host_facing = [port for host, port in advertised.values() if host == "localhost"]
    assert host_facing == [9094], "the host reaches Kafka through a listener advertised as localhost:9094"
    assert _published(kafka).get(9094) == 9094


def test_postgres_has_a_healthcheck_and_publishes_5432(services: dict[str, Any]) -> None:
    postgres = services["postgres"]
    assert str(postgres["image"]).startswith("postgres:")
    assert "pg_isready" in _healthcheck(postgres)
    assert _published(postgres).get(5432) == 5432
    env = _environment(postgres)
    assert env["POSTGRES_USER"] and env["POSTGRES_PASSWORD"] and env["POSTGRES_DB"]


def test_worker_is_built_here_runs_loopline_run_and_waits_for_healthy_servers(services: dict[str, Any]) -> None:
    worker = services["worker"]
    build = worker["build"]
    context, dockerfile = (build, "Dockerfile") if isinstance(build, str) else (build.get("context", "."), build.get("dockerfile", "Dockerfile"))
    assert (ROOT / context / dockerfile).resolve() == ROOT / "Dockerfile"
    assert worker["command"] in (["run"], "run")
    depends = worker["depends_on"]
    for server in ("kafka", "postgres"):
        assert depends[server]["condition"] == "service_healthy"
    assert int(worker["deploy"]["replicas"]) >= 2
    assert worker.get("restart") in {"unless-stopped", "always", "on-failure"}


def test_serve_runs_the_web_on_8080_with_the_workers_configuration(services: dict[str, Any]) -> None:
    serve, worker = services["serve"], services["worker"]
    assert serve["build"] == worker["build"]
    assert serve["command"] == ["serve", "--host", "0.0.0.0", "--port", "8080"]
    assert _environment(serve) == _environment(worker)
    assert _published(serve).get(8080) == 8080
    assert "/healthz" in _healthcheck(serve) and "curl" not in _healthcheck(serve)
    for server in ("kafka", "postgres"):
        assert serve["depends_on"][server]["condition"] == "service_healthy"


@pytest.mark.parametrize("key", ["LOOPLINE_EVENT_STORE", "LOOPLINE_READ_MODEL"])
def test_worker_databases_are_the_postgres_service(services: dict[str, Any], key: str) -> None:
    env = _environment(services["worker"])
    postgres = _environment(services["postgres"])
    url = urlsplit(env[key])
    assert url.scheme == "postgresql"
    assert url.hostname == "postgres"
    assert (url.port or 5432) == 5432
    assert url.username == postgres["POSTGRES_USER"]
    assert url.password == postgres["POSTGRES_PASSWORD"]
    assert url.path.lstrip("/") == postgres["POSTGRES_DB"]


def test_worker_kafka_is_the_brokers_internal_listener(services: dict[str, Any]) -> None:
    env = _environment(services["worker"])
    advertised = _listeners(_environment(services["kafka"])["KAFKA_ADVERTISED_LISTENERS"])
    internal = [f"{host}:{port}" for host, port in advertised.values() if host in {"kafka", services["kafka"].get("hostname")}]
    assert internal, "no listener advertised under the kafka service name"
    assert env["LOOPLINE_KAFKA"] in internal


def test_worker_environment_is_what_loopline_reads(services: dict[str, Any]) -> None:
    env = _environment(services["worker"])
    known = set(re.findall(r'"((?:LOOPLINE|ANTHROPIC)_[A-Z_]+)"', Path(loopline.adapters.config.__file__).read_text(encoding="utf-8")))
    unknown = {key for key in env if key.startswith(("LOOPLINE_", "ANTHROPIC_"))} - known
    assert not unknown, f"adapters/config.py reads no such variable: {unknown}"

    settings = Settings.load(env, config_file=ROOT / "no-such-loopline.toml")
    assert settings.kafka == env["LOOPLINE_KAFKA"]
    assert settings.kafka_partitions >= 1
    assert settings.event_store == env["LOOPLINE_EVENT_STORE"]
    assert settings.read_model == env["LOOPLINE_READ_MODEL"]
    store = postgres_env(settings.event_store)
    postgres = _environment(services["postgres"])
    assert store["PERSISTENCE_MODULE"] == "loopline.adapters.postgres_recorder:TimeoutsPostgresFactory"
    assert (store["POSTGRES_HOST"], store["POSTGRES_PORT"]) == ("postgres", "5432")
    assert (store["POSTGRES_USER"], store["POSTGRES_PASSWORD"], store["POSTGRES_DBNAME"]) == (
        postgres["POSTGRES_USER"], postgres["POSTGRES_PASSWORD"], postgres["POSTGRES_DB"]
    )


def test_worker_home_is_one_named_volume_shared_by_every_replica(compose: dict[str, Any], services: dict[str, Any]) -> None:
    home = _environment(services["worker"])["LOOPLINE_HOME"]
    mounts = {}
    for volume in services["worker"].get("volumes") or []:
        source, target = (volume["source"], volume["target"]) if isinstance(volume, dict) else str(volume).split(":")[:2]
        mounts[target.rstrip("/")] = source
    source = mounts.get(home.rstrip("/"))
    assert source, f"LOOPLINE_HOME={home} is not a mounted volume, so each replica would keep its own outbox"
    assert source in (compose.get("volumes") or {}), "LOOPLINE_HOME must be a named volume, not a bind mount"


def test_dockerfile_installs_the_scale_extra_and_runs_loopline(pyproject: dict[str, Any]) -> None:
    instructions = _dockerfile_instructions()
    by_keyword: dict[str, list[str]] = {}
    for keyword, rest in instructions:
        by_keyword.setdefault(keyword, []).append(rest)

    assert by_keyword["FROM"][0].startswith("python:3.11")
    assert "scale" in pyproject["project"]["optional-dependencies"]
    # The lock (tests/unit/test_image.py checks it covers the scale extra), then Loopline alone.
    assert any(re.search(r"pip install .*--require-hashes -r requirements\.lock", run) for run in by_keyword["RUN"])
    assert any(re.search(r"pip install .*--no-deps .*\.$", run) for run in by_keyword["RUN"])
    assert json.loads(by_keyword["ENTRYPOINT"][-1]) == ["loopline"]
    assert "loopline" in pyproject["project"]["scripts"]
    assert json.loads(by_keyword["CMD"][-1]) == ["run"]
    assert by_keyword["USER"][-1].split(":")[0] not in {"root", "0"}


def test_dockerfile_copies_every_package_and_dockerignore_keeps_them(pyproject: dict[str, Any]) -> None:
    copied = set()
    for keyword, rest in _dockerfile_instructions():
        if keyword == "COPY":
            sources = [arg for arg in rest.split() if not arg.startswith("--")][:-1]
            copied |= {source.rstrip("/") for source in sources}
    packages = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    needed = packages | {"pyproject.toml", pyproject["project"]["readme"]}
    assert needed <= copied, f"the image build needs {sorted(needed - copied)}"

    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    for source in copied:
        assert not any(fnmatch.fnmatch(source, pattern.rstrip("/")) for pattern in ignored), f".dockerignore drops {source}"


def test_dockerfile_gives_the_worker_user_its_home(services: dict[str, Any]) -> None:
    """A fresh named volume takes the ownership of the image's directory, so the user must own it."""
    home = _environment(services["worker"])["LOOPLINE_HOME"].rstrip("/")
    runs = [rest for keyword, rest in _dockerfile_instructions() if keyword == "RUN"]
    assert any(re.search(rf"chown\s+\S+\s+(?:\S+\s+)*{re.escape(home)}(?:\s|$)", run) for run in runs)
