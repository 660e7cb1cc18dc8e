"""Anomaly detection on a contact's reply (seed 002 §7.5): a conversation that runs on without an outcome, or a
contact writing again and again with nothing answered, goes to the owner before any model call.

A turn is a reply the model evaluated (`Task.turns_used`); the replies counted are the contact's emails since
Loopline last answered (a message sent, an evaluation that chose to wait, an automatic reply recognised).
"""

from __future__ import annotations

from loopline.domain.outreach import Escalate
from loopline.domain.safety_limits import ANOMALY_TURNS, ANOMALY_UNANSWERED_REPLIES


def reply_anomaly(*, turns_used: int, unanswered_replies: int) -> Escalate | None:
    """The escalation a new reply calls for, counting it among `unanswered_replies`; None when nothing is anomalous."""
    if turns_used >= ANOMALY_TURNS:
        return Escalate(f"{turns_used} turns of conversation without an outcome (anomaly: {ANOMALY_TURNS} or more)",
                        "anomaly_turns")
    if unanswered_replies >= ANOMALY_UNANSWERED_REPLIES:
        return Escalate(f"the contact wrote {unanswered_replies} times in a row with nothing answered and the task still "
                        f"active (anomaly: {ANOMALY_UNANSWERED_REPLIES} or more; a loop?)", "anomaly_replies")
    return None
