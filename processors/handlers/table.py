"""The bus's one handler table: one row per kind of message, each saying what applying, refusing and
parking it means (commands and signals dispatch further through `processors/handlers/command_routes.py` COMMANDS and
`processors/handlers/signals.py`; timers through `processors/handlers/timer_firings.py` TIMERS)."""

from __future__ import annotations

from functools import partial
from typing import Any

from loopline.processors.handlers.answers import DECISION_RETURNED
from loopline.processors.handlers.brain_calls import BRAIN_ANSWERED
from loopline.processors.application import Loopline
from loopline.processors.bus import Bus, Handler
from loopline.processors.handlers.inbound import INBOUND, RETRY
from loopline.processors.messages import (
    BrainAnswered,
    BucketSwept,
    DecisionReturned,
    Inbound,
    Retry,
    TimerFired,
    Unreadable,
    WheelSwept,
)
from loopline.processors.ports import Drafter
from loopline.processors.handlers.readiness import on_ready
from loopline.processors.handlers.rejects import UNREADABLE
from loopline.processors.handlers.subtasks import settle_subtasks
from loopline.processors.handlers.timer_firings import BUCKET_SWEPT, WHEEL_SWEPT, timer_handler


def handlers(drafter: Drafter) -> dict[type, Handler[Any]]:
    return {
        Inbound: INBOUND,
        Unreadable: UNREADABLE,
        Retry: RETRY,
        TimerFired: timer_handler(drafter),
        BucketSwept: BUCKET_SWEPT,
        WheelSwept: WHEEL_SWEPT,
        DecisionReturned: DECISION_RETURNED,
        BrainAnswered: BRAIN_ANSWERED,
    }


def build_bus(app: Loopline, drafter: Drafter) -> Bus:
    """The bus every source of this process hands its batches to."""
    return Bus(app, handlers(drafter), after_step=(partial(settle_subtasks, start=on_ready),))
