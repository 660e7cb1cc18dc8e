"""`loopline plan` works on a copy of an embedded SQLite event store: anything else is refused, saying why."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from loopline.adapters.config import Settings
from loopline.runtime.plan import PlanUnavailable, plan

NOW = datetime(2026, 3, 2, 14, tzinfo=timezone.utc)


def settings(home: Path, event_store: str) -> Settings:
    return Settings.load({"LOOPLINE_HOME": str(home), "LOOPLINE_EVENT_STORE": event_store}, config_file=home / "none.toml")


def test_a_plan_at_scale_is_refused_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(PlanUnavailable, match="LOOPLINE_EVENT_STORE is not one"):
        plan(settings(tmp_path, "postgresql://db/loopline"), "gym", start=NOW, days=7)


def test_a_plan_for_a_home_without_an_event_store_says_to_publish_first(tmp_path: Path) -> None:
    with pytest.raises(PlanUnavailable, match="publish commands first"):
        plan(settings(tmp_path, f"sqlite:///{tmp_path / 'events.db'}"), "gym", start=NOW, days=7)

    assert list(tmp_path.iterdir()) == []
