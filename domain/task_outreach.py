"""An acting task's outreach: its plan, the touches it sends, sends a limit defers, dormancy and its outcome."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent
from loopline.domain.status import TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task

THREAD_REFERENCES = 10
"""Messages a thread's `References` name at most: its first and the latest (RFC 5322 lets a long chain be cut)."""


def drop_unsent_touches(task: Task) -> None:
    """The contact is away: the touch being drafted and a touch a limit held back are dropped, so no cadence message
    goes out before the return; the answer to an earlier reply (being drafted, or held back) still goes."""
    for ref, pending in list(task.pending_decisions.items()):
        if pending["purpose"] == "touch":
            del task.pending_decisions[ref]
    if task.deferred is not None and not task.deferred["draft"].get("reply"):
        task.deferred = None


class TaskOutreach:
    """A direct base of `Task`, keeping its `outreach` plan and counters; eventsourcing redefines its events as `Task.<Name>`."""

    class OutreachPlanned(TaskEvent):
        """An acting task's budget and cadence, copied from its type at creation: a later
        change of the registry never changes a running task."""

        budget_messages: int
        budget_turns: int
        ends_at: datetime | None
        cadence: str
        intervals: list[int]
        tones: list[str]
        on_exhaustion: str
        dormant_check_days: int | None
        dormant_max_days: int | None
        draft: dict[str, Any] | None
        contact_name: str | None

        def apply(self, task: Task) -> None:
            task.outreach = {
                "budget_messages": self.budget_messages, "budget_turns": self.budget_turns, "ends_at": self.ends_at,
                "cadence": self.cadence, "intervals": list(self.intervals), "tones": list(self.tones),
                "on_exhaustion": self.on_exhaustion, "dormant_check_days": self.dormant_check_days,
                "dormant_max_days": self.dormant_max_days, "draft": self.draft, "contact_name": self.contact_name,
            }

    class TouchSent(TaskEvent):
        """A message went to the contact (`touch` is the cadence position; a reply keeps it): counts against the budget."""

        touch: int
        messages_used: int
        next_touch_at: datetime | None

        def apply(self, task: Task) -> None:
            task.touch = self.touch
            task.messages_used = self.messages_used
            task.next_touch_at = self.next_touch_at
            task.deferred = None

    class SendDeferred(TaskEvent):
        """A send that would break a limit waits until `until`, with its draft kept (no new model call then)."""

        rule: str
        reason: str
        until: datetime
        draft: dict[str, Any]

        def apply(self, task: Task) -> None:
            task.deferred = {"rule": self.rule, "until": self.until, "draft": self.draft}

    class SendReturned(TaskEvent):
        """The email of the task's event `send_version` never left: delivery could not send it (`reason`). It no
        longer counts: a touch gives its message back to the task's budget (`messages_used` is the count after)."""

        send_version: int
        to: str
        reason: str
        messages_used: int

        def apply(self, task: Task) -> None:
            task.messages_used = self.messages_used

    class NextTouchScheduled(TaskEvent):
        """The contact answered and the evaluation said wait: the cadence resumes at `next_touch_at`."""

        next_touch_at: datetime
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.next_touch_at = self.next_touch_at
            task.status = self.status  # waiting again; the reply before it was the activity

    class OutOfOfficeReceived(TaskEvent):
        """The contact's automatic reply (`domain/auto_reply.py`) says they are away: no turn is counted and no model
        asked; the cadence waits until `next_touch_at` (the stated return, `returns_on`, else a week; never earlier
        than the cadence had planned) and then goes on. A touch being drafted or held back by a limit is dropped:
        it would reach nobody."""

        until: datetime
        returns_on: str | None
        sign: str
        next_touch_at: datetime
        status: str

        def apply(self, task: Task) -> None:
            assert task.outreach is not None
            # Kept in the outreach plan, which only an acting task has: older snapshots need no upcasting.
            task.outreach["away_until"] = self.until
            task.next_touch_at = self.next_touch_at
            task.status = self.status  # waiting again; the automatic reply before it was the activity
            drop_unsent_touches(task)

    class OutcomeSet(TaskEvent):
        """The outcome code a closing task ends with, from its type's spectrum (a provisional one is
        downgraded if no signal confirms it)."""

        code: str
        kind: str
        provisional: bool
        reason: str

        def apply(self, task: Task) -> None:
            task.outcome = self.code

    class WentDormant(TaskEvent):
        """The cadence is spent and says dormant: nothing is sent; a reply wakes the task, `until` closes it."""

        until: datetime
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.dormant_until = self.until
            task._moved(self.status, self.timestamp)

    def _join_thread(self, subject: str, key: str) -> None:
        """A message went out in the task's thread (applied with its `ActionRecorded`, whose delivery key
        `<task id>:<version>` its Message-ID derives from): the first names the thread, the latest is answered next.
        Kept in the outreach plan, which only an acting task has, so older snapshots need no upcasting."""
        assert self.outreach is not None, "only an acting task sends in a thread"
        thread = self.outreach.get("thread")
        keys = [*thread["keys"], key] if thread else [key]
        self.outreach["thread"] = {"subject": thread["subject"] if thread else subject,
                                   "keys": keys[:1] + keys[1:][-(THREAD_REFERENCES - 1):]}

    def thread_subject(self, subject: str) -> str:
        """The subject of the next message: `Re:` the thread's first subject once there is one, else its own."""
        thread = self.outreach.get("thread") if self.outreach else None
        if not thread or not thread["subject"]:
            return subject
        first = thread["subject"]
        return first if first.lower().startswith("re:") else f"Re: {first}"

    @property
    def thread_references(self) -> list[str]:
        """Delivery keys of the messages sent in the thread, oldest first: the next message answers the last."""
        thread = self.outreach.get("thread") if self.outreach else None
        return list(thread["keys"]) if thread else []

    def heard_from_contact(self) -> None:
        """Applied with any message from the contact: it ends an absence an automatic reply stated (an automatic one
        starts it again at once, `OutOfOfficeReceived`)."""
        if self.outreach is not None:
            self.outreach.pop("away_until", None)

    @property
    def is_acting(self) -> bool:
        """Loopline works it itself: drafts, sends, follows the cadence (not a follow-through task of an outside agent)."""
        return self.outreach is not None

    def plan_outreach(
        self, *, budget_messages: int, budget_turns: int, ends_at: datetime | None, cadence: str,
        intervals: list[int], tones: list[str], on_exhaustion: str, dormant_check_days: int | None,
        dormant_max_days: int | None, draft: dict[str, Any] | None, contact_name: str | None, now: datetime,
    ) -> None:
        self.trigger_event(
            self.OutreachPlanned, timestamp=now, budget_messages=budget_messages, budget_turns=budget_turns,
            ends_at=ends_at, cadence=cadence, intervals=list(intervals), tones=list(tones),
            on_exhaustion=on_exhaustion, dormant_check_days=dormant_check_days, dormant_max_days=dormant_max_days,
            draft=dict(draft) if draft is not None else None, contact_name=contact_name,
        )

    def touch_sent(self, *, touch: int, next_touch_at: datetime | None, now: datetime) -> None:
        self.trigger_event(self.TouchSent, timestamp=now, touch=touch, messages_used=self.messages_used + 1,
                           next_touch_at=next_touch_at)

    def return_send(self, *, send_version: int, to: str, reason: str, touch: bool, now: datetime) -> None:
        """Stops counting the send of event `send_version`, which never left; a `touch` counted against the budget."""
        used = max(self.messages_used - 1, 0) if touch else self.messages_used
        self.trigger_event(self.SendReturned, timestamp=now, send_version=send_version, to=to, reason=reason,
                           messages_used=used)

    def defer_send(self, *, rule: str, reason: str, until: datetime, draft: dict[str, Any], now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.SendDeferred, timestamp=now, rule=rule, reason=reason, until=until, draft=dict(draft))

    def schedule_next_touch(self, at: datetime, *, reason: str, now: datetime) -> None:
        """Waits for the contact again (a loop on their reply is opened with it) until the cadence's next touch."""
        self.check_open()
        status = self._target(TaskStatus.WAITING) if self.status is TaskStatus.EXECUTING else self.status
        self.trigger_event(self.NextTouchScheduled, timestamp=now, next_touch_at=at, reason=reason, status=status)

    def pause_out_of_office(self, *, until: datetime, returns_on: date | None, sign: str, now: datetime) -> datetime:
        """Waits for the contact's return (a loop on their reply is opened with it); returns when the cadence goes on."""
        self.check_open()
        next_touch_at = max(until, self.next_touch_at) if self.next_touch_at is not None else until
        status = self._target(TaskStatus.WAITING) if self.status is TaskStatus.EXECUTING else self.status
        self.trigger_event(self.OutOfOfficeReceived, timestamp=now, until=until,
                           returns_on=returns_on.isoformat() if returns_on else None, sign=sign,
                           next_touch_at=next_touch_at, status=status)
        return next_touch_at

    def set_outcome(self, *, code: str, kind: str, provisional: bool, reason: str, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.OutcomeSet, timestamp=now, code=code, kind=kind, provisional=provisional, reason=reason)

    def go_dormant(self, *, until: datetime, reason: str, now: datetime) -> None:
        self.trigger_event(self.WentDormant, timestamp=now, until=until, reason=reason,
                           status=self._target(TaskStatus.DORMANT))
