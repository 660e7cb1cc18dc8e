"""The PostgreSQL leader lock on a server that holds several deployments (a database each)."""

from __future__ import annotations

from loopline.adapters.leader import PostgresLeader
from tests.servers import Postgres


def test_the_leader_is_named_in_its_own_database_and_not_in_another_deployments(postgres: Postgres) -> None:
    ours, theirs = PostgresLeader(postgres.new_database()), PostgresLeader(postgres.new_database())
    ours.lead_as("worker-a")
    try:
        assert ours.try_lead()
        assert ours.holder() == "worker-a"
        assert theirs.holder() is None  # the lock of another database is not this deployment's leader
        assert theirs.try_lead()  # and it does not keep this deployment from having a leader of its own
    finally:
        ours.close()
        theirs.close()
