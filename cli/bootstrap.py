"""The composition root: builds the whole embedded system from settings. Nothing connects at import time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from adapters.channels import JsonlOutbox
from adapters.config import Settings
from adapters.drafting import TemplateDrafter
from adapters.embedded_log import EmbeddedLog
from adapters.event_store import event_store_env
from adapters.read_model import read_model_engine
from processors.application import Loopline
from processors.delivery import Delivery
from processors.maintenance import Maintenance
from processors.router import Outcome, Router
from projections import open_loops, proactive_runs, tasks, timeline
from projections.runner import ProjectionRunner

READ_MODELS = (tasks, open_loops, proactive_runs, timeline)


@dataclass
class DrainReport:
    outcomes: list[Outcome] = field(default_factory=list)
    delivered: int = 0
    projected: int = 0

    @property
    def rejected(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if not outcome.accepted]


@dataclass
class System:
    settings: Settings
    app: Loopline
    log: EmbeddedLog
    router: Router
    maintenance: Maintenance
    delivery: Delivery
    projections: ProjectionRunner

    def drain(self, progress: Callable[[int], None] | None = None) -> DrainReport:
        """Runs every processor until none has work left, so the next query sees all effects."""
        report = DrainReport()
        while True:
            outcomes = self.router.run_once()
            report.outcomes += outcomes
            if progress and outcomes:
                progress(len(outcomes))
            if outcomes:
                continue
            delivered = self.delivery.run_once()
            report.delivered += delivered
            if not delivered:
                break
        report.projected = self.projections.catch_up()
        return report

    def close(self) -> None:
        self.projections.engine.dispose()
        self.app.factory.close()


def build(settings: Settings | None = None) -> System:
    settings = settings or Settings.load()
    settings.home.mkdir(parents=True, exist_ok=True)
    app = Loopline(env=event_store_env(settings.event_store))
    return System(
        settings=settings,
        app=app,
        log=EmbeddedLog(app),
        router=Router(app),
        maintenance=Maintenance(app, TemplateDrafter()),
        delivery=Delivery(app, JsonlOutbox(settings.home / "outbox.jsonl")),
        projections=ProjectionRunner(app, read_model_engine(settings.read_model), READ_MODELS),
    )
