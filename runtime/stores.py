"""Opening the stores at start-up: every table and index is created in one step under the schema lock.

Workers started together on a fresh PostgreSQL database (compose.yml's replicas) would otherwise race
on `CREATE TABLE` (PostgreSQL's DDL is not safe to race, even with IF NOT EXISTS). A read model an
older release wrote without some table or column is dropped and projected again here, so an old home
answers its queries at once; read models are derived, so rebuilding one loses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from loopline.adapters import api_keys, delivery_state, heartbeats, sessions
from loopline.adapters.config import Settings
from loopline.adapters.event_store import event_store_env
from loopline.adapters.leader import PostgresLeader, SoleLeader
from loopline.adapters.read_model import read_model_engine
from loopline.processors.application import Loopline
from loopline.projections import (
    health, limits, loop_metrics, model_usage, open_loops, pauses, proactive_runs, proposals, questions,
    reflections, routines, scorecard, suppressions, task_memory, tasks, tenants, timeline,
)
from loopline.projections.runner import REBUILD_BATCH, Projection, ProjectionRunner

READ_MODELS = (
    tasks, open_loops, proactive_runs, timeline, task_memory, tenants, limits, suppressions, pauses, health, model_usage,
    scorecard, loop_metrics, questions, reflections, routines, proposals,
)


@dataclass(frozen=True)
class Stores:
    app: Loopline
    projections: ProjectionRunner
    ledger_engine: Engine
    """The event store's database, holding the write-side tables beside the events: delivery ledger, heartbeats,
    the last tick's time, API keys and dashboard sessions."""


def open_stores(
    settings: Settings, leader: SoleLeader | PostgresLeader, read_models: Sequence[Projection] = READ_MODELS,
) -> Stores:
    """The event store, its write-side tables and the read models, their tables created or upgraded under
    the schema lock; a read model (re)created there is caught up before this returns."""
    with leader.creating_schema():
        app = Loopline(env=event_store_env(settings.event_store))  # the events and tracking tables
        # The delivery ledger lives beside the events (not the read models): a rebuild never resends.
        ledger_engine = read_model_engine(settings.event_store)
        delivery_state.create_tables(ledger_engine)
        heartbeats.create_tables(ledger_engine)
        api_keys.create_tables(ledger_engine)  # the HTTP edge's keys: the deployment's own, never rebuilt
        sessions.create_tables(ledger_engine)  # the dashboard's sessions, beside the keys they were opened with
        projections = ProjectionRunner(
            app.process_recorder, app.mapper, read_model_engine(settings.read_model), read_models
        )
        renewed = projections.create_tables()
    if renewed:
        with leader.writing():
            projections.only(renewed).catch_up(batch_size=REBUILD_BATCH)
    return Stores(app, projections, ledger_engine)
