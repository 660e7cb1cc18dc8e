"""Every Task event is stored as `loopline.domain.task:Task.<Name>`, in whichever module beside the aggregate it is written."""

from __future__ import annotations

from eventsourcing.domain import CanMutateAggregate
from eventsourcing.utils import get_topic, resolve_topic

from loopline.domain.task import Task


def _event_names(cls: type) -> set[str]:
    return {
        name for name, value in vars(cls).items()
        if isinstance(value, type) and issubclass(value, CanMutateAggregate) and name != "Event"
    }


def test_every_event_of_a_task_concern_is_a_task_event_under_the_task_topic() -> None:
    concerns = [base for base in Task.__mro__[1:] if base.__module__.startswith("loopline.domain.task_")]
    names = _event_names(Task).union(*(_event_names(concern) for concern in concerns))

    # At least these are found (a new concern module adds itself to the set by being a base of Task).
    assert {"TaskInbox", "TaskReview", "TaskDecisions", "TaskOutreach", "TaskTimers", "TaskNotices"} <= {
        concern.__name__ for concern in concerns}
    for name in names:
        topic = get_topic(getattr(Task, name))
        assert topic == f"loopline.domain.task:Task.{name}", f"{name} is stored as {topic}"
        assert resolve_topic(topic) is getattr(Task, name)
