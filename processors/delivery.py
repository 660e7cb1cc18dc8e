"""Delivers what Loopline itself sends (user notifications, follow-ups, reminders, wake-ups for the
agent runtime) through a channel.

Each delivery carries an idempotency key (event id), and the channel refuses a key it has seen,
so redelivery after a crash between sending and recording the position sends nothing twice.
"""

from __future__ import annotations

from eventsourcing.persistence import Tracking
from eventsourcing.utils import get_topic

from loopline.domain.task import Task
from loopline.domain.timeutil import format_time
from loopline.processors.application import Loopline
from loopline.processors.ports import OutboundChannel

TOPICS = [get_topic(Task.UserNotified), get_topic(Task.ActionRecorded), get_topic(Task.WokenUp)]


class Delivery:
    name = "delivery"

    def __init__(self, app: Loopline, channel: OutboundChannel, batch_size: int = 200) -> None:
        self.app = app
        self.channel = channel
        self.batch_size = batch_size

    def run_once(self) -> int:
        notifications = self.app.process_recorder.select_notifications(
            start=self.app.position(self.name) + 1, limit=self.batch_size, topics=TOPICS
        )
        delivered = 0
        for notification in notifications:
            event = self.app.mapper.to_domain_event(notification)
            message = outbound_message(event)
            if message is not None:
                message = {"tenant": event.tenant, "task_id": event.task_ref, **message}
                key = f"{event.originator_id}:{event.originator_version}"
                delivered += self.channel.deliver(key=key, message=message)
            self.app.process_recorder.insert_tracking(Tracking(self.name, notification.id))
        return len(notifications)


def outbound_message(event: object) -> dict | None:
    if isinstance(event, Task.UserNotified):
        return {"to": "user", "kind": event.kind, "text": event.message, "at": format_time(event.timestamp)}
    if isinstance(event, Task.WokenUp):  # the agent runtime resumes the task
        return {"to": "agent", "kind": "task_wakeup", "wake_id": event.wake_ref, "cause": event.cause,
                "text": event.reason, "at": format_time(event.timestamp)}
    if isinstance(event, Task.ActionRecorded) and event.performed_by == "loopline":
        return {"to": event.details.get("to", "counterpart"), "kind": event.action, "text": event.summary,
                "details": event.details, "at": format_time(event.timestamp)}
    return None
