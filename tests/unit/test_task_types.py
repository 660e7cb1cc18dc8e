from pathlib import Path

import pytest

from loopline.domain.status import UnknownStatus
from loopline.domain.task_types import TASK_TYPES, UnknownTaskType, task_type
from tests.unit.test_task_lifecycle import NOW, make_task

SKILLS = Path(__file__).resolve().parents[2] / "skills"


@pytest.mark.parametrize("name", sorted(TASK_TYPES))
def test_every_task_type_has_its_skill_file(name: str) -> None:
    assert (SKILLS / f"{name}.md").read_text().strip()


def test_unknown_task_type_names_the_known_ones() -> None:
    with pytest.raises(UnknownTaskType, match="ad_hoc"):
        task_type("sales_blitz")


def test_progress_note_with_an_unknown_status_lists_the_statuses() -> None:
    with pytest.raises(UnknownStatus, match="pending_review"):
        make_task().note_progress(notes="hm", status="paused", now=NOW)
