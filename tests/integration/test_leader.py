"""The PostgreSQL leader lock: one per database (a server may hold several deployments), lost with its session."""

from __future__ import annotations

import psycopg

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


def test_a_lock_whose_session_ended_counts_as_lost_though_the_next_check_takes_it_again(postgres: Postgres) -> None:
    leader = PostgresLeader(postgres.new_database())
    try:
        assert leader.try_lead()
        with psycopg.connect(leader.url, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                         (leader.label,))
        assert not leader.try_lead()  # a drain's check finds the session gone, and the lock with it
        assert leader.try_lead()  # the leader loop's next check takes it on a new session
        assert leader.losses == 1
    finally:
        leader.close()
