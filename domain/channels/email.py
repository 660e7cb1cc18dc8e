"""email: sender (case-insensitive), and the thread when the watch names one."""

from __future__ import annotations

from loopline.domain.channels.rule import ChannelRule, SignalData, SignalField, Watch


def _matches(watch: Watch, signal: SignalData) -> bool:
    if str(signal.get("sender", "")).lower() != str(watch["sender"]).lower():
        return False
    return not watch.get("thread_id") or watch["thread_id"] == signal.get("thread_id")


RULE = ChannelRule(
    channel="email",
    signal_type="email.received",
    signal_fields=(
        SignalField("sender", "who sent it, kept as its mailbox as `task.create`'s `contact` is; matched ignoring case",
                    required=True, mailbox=True),
        SignalField("thread_id", "its thread; matched when the watch names one"),
        SignalField("subject", "kept with the signal"),
        SignalField("body", "kept with the signal"),
        SignalField("in_reply_to", "the Message-ID it answers; one Loopline sent picks the contact's task that answers it"),
        SignalField("auto_submitted", "its RFC 3834 `Auto-Submitted` header: any value but `no` marks an automatic "
                    "reply (out of office): a task Loopline works pauses until the return it states, unanswered"),
    ),
    required_watch=("sender",),
    optional_watch=("thread_id",),
    rule="email: sender (case-insensitive) and thread_id when the watch names one",
    summary="sender equal ignoring case; thread too when the watch names one",
    watch_key=lambda watch: (str(watch["sender"]).lower(),),
    signal_key=lambda signal: (str(signal["sender"]).lower(),) if signal.get("sender") else None,
    matches=_matches,
)
