"""The CLI's error boundary: which failures become one line and which exit code (README "CLI")."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy.exc
from kafka.errors import KafkaTimeoutError

from loopline.adapters.config import InvalidSetting
from loopline.cli.context import DEPENDENCY_UNAVAILABLE, USAGE_ERROR, explain
from tests.servers import free_port


def refused_connection() -> psycopg.OperationalError:
    try:
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{free_port()}/loopline", connect_timeout=2)
    except psycopg.OperationalError as error:
        return error
    raise AssertionError("a closed port accepted a PostgreSQL connection")


def test_a_lost_postgresql_connection_is_a_dependency_failure_also_when_sqlalchemy_wraps_it() -> None:
    refused = refused_connection()
    wrapped = sqlalchemy.exc.OperationalError("SELECT 1", {}, refused)
    for error in (refused, wrapped):
        failure = explain(error)
        assert failure is not None and failure.code == DEPENDENCY_UNAVAILABLE
        assert "LOOPLINE_EVENT_STORE" in failure.message and "\n" not in failure.message


def test_a_query_the_server_cancelled_is_not_reported_as_an_unavailable_server() -> None:
    assert explain(psycopg.errors.QueryCanceled("canceling statement due to statement timeout")) is None


def test_kafka_bootstrap_timeouts_settings_and_bugs() -> None:
    kafka = explain(KafkaTimeoutError("Unable to bootstrap from broker:9092"))
    assert kafka is not None and kafka.code == DEPENDENCY_UNAVAILABLE and "LOOPLINE_KAFKA" in kafka.message
    setting = explain(InvalidSetting("LOOPLINE_KAFKA_PARTITIONS='six' is not a positive whole number"))
    assert setting is not None and setting.code == USAGE_ERROR
    assert explain(ZeroDivisionError("a bug")) is None  # its traceback is shown


@pytest.mark.parametrize("state", ["08006", "57P01"])
def test_connection_failures_by_sqlstate(state: str) -> None:
    error = psycopg.errors.lookup(state)("server closed the connection")
    assert explain(error) is not None
