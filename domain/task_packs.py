"""The packs of task types: the gym pack (an outreach agent that sends), the catch-all `ad_hoc`, and the
assistant pack (follow-through on what an outside agent does)."""

from __future__ import annotations

from loopline.domain.task_contract import (
    CADENCES,
    STAFF_REMINDERS,
    UNRESPONSIVE,
    Budget,
    Goal,
    GoalSignal,
    TaskType,
    outcome,
)

GYM_PACK: tuple[TaskType, ...] = (
    TaskType(
        name="churn_risk", label="At-Risk Member", pack="gym", category="communication", agent="retention",
        description="Reach out to members showing signs of disengagement",
        goal=Goal(
            summary="Re-engage a member who hasn't visited recently", shape="fuzzy", completion="composite",
            signals=(GoalSignal("checkin", 100, True, 14), GoalSignal("reply_positive", 60, False, 14)),
            judgment_criteria=(
                "The member has expressed a clear, specific intent to return (named a day, mentioned a class, "
                'etc). Vague positivity ("yeah maybe") does NOT count.'
            ),
            outcomes=(
                outcome("retained", "Member Retained", "positive", "Member checked in within 14 days of outreach", 1.0),
                outcome("verbal_commitment", "Verbal Commitment", "positive",
                   "Member said they would return. Provisional — downgrades after 14 days with no checkin.",
                   0.5, provisional=True, downgrades_to="engaged_conversation",
                   next_step="Look out for them at the class or day they named, and welcome them back in person."),
                outcome("engaged_conversation", "Engaged Conversation", "neutral", "Replied positively but made no commitment."),
                outcome("self_resolved", "Self-Resolved", "positive", "Member came back before outreach sent."),
                outcome(UNRESPONSIVE, "No Response", "neutral", "All touches exhausted, no reply, no checkin."),
                outcome("opted_out", "Opted Out", "negative", "Member requested to stop receiving messages."),
                outcome("churned", "Confirmed Churn", "negative", "Member cancelled during or after outreach."),
                outcome("escalated_unresolved", "Escalated (Unresolved)", "neutral", "Escalated to owner, never resolved."),
            ),
        ),
        priority="high", budget=Budget(messages=3, days=14, turns=6), cadence=CADENCES["standard"],
        auto_threshold=0.75, escalation_triggers=("member_tenure_over_1_year", "monthly_value_over_200"),
        outcome_signals=("checkin", "reply_positive"), skill="churn_risk.md",
        signal_outcomes=(("checkin", "retained"), ("class_booked", "retained"), ("cancellation", "churned")),
    ),
    TaskType(
        name="win_back", label="Win-Back", pack="gym", category="communication", agent="retention",
        description="Re-engage a member who has cancelled their membership",
        goal=Goal(
            summary="Bring a cancelled member back", shape="fuzzy", completion="composite",
            signals=(GoalSignal("reactivation", 100, True, 30), GoalSignal("reply_positive", 50, False, 30)),
            judgment_criteria="The member has expressed genuine interest in returning — not just politeness.",
            outcomes=(
                outcome("recovered", "Member Recovered", "positive", "Membership reactivated", 3.0),
                outcome("interested", "Interested", "positive", "Expressed interest but hasn't reactivated yet",
                   next_step="Reactivate their membership with them: write or call with how to rejoin."),
                outcome(UNRESPONSIVE, "No Response", "neutral", "No reply after all touches"),
                outcome("declined", "Declined", "negative", "Member explicitly said no"),
                outcome("opted_out", "Opted Out", "negative", "Requested no further contact"),
                outcome("self_resolved", "Self-Resolved", "positive", "Membership reactivated before outreach sent"),
                outcome("refunded", "Refunded", "negative", "The reactivation's payment was refunded"),
            ),
        ),
        priority="high", budget=Budget(messages=3, days=30, turns=4), cadence=CADENCES["slow_burn"],
        auto_threshold=0.80,
        escalation_triggers=("cancellation_reason_complaint", "cancellation_reason_billing", "member_tenure_over_2_years"),
        outcome_signals=("reactivation", "reply_positive"), skill="win_back.md",
        signal_outcomes=(("reactivation", "recovered"), ("refund", "refunded")),
    ),
    TaskType(
        name="lead_followup", label="Lead Follow-up", pack="gym", category="communication", agent="sales",
        description="Nurture a new lead toward booking a trial or first visit",
        goal=Goal(
            summary="Get the lead to book a trial or visit the gym", shape="fuzzy", completion="composite",
            signals=(GoalSignal("trial_booked", 100, True, 21), GoalSignal("checkin", 100, True, 21)),
            judgment_criteria="The lead has committed to a specific date/time to visit.",
            outcomes=(
                outcome("converted", "Lead Converted", "positive", "Trial booked or first checkin", 1.0,
                   next_step="Book them into the class or trial they asked for, and confirm the time with them."),
                outcome("engaged", "Engaged", "positive", "Replying, asking questions, but hasn't committed"),
                outcome(UNRESPONSIVE, "No Response", "neutral", "No reply"),
                outcome("not_interested", "Not Interested", "negative", "Lead explicitly declined"),
            ),
        ),
        priority="medium", budget=Budget(messages=5, days=21, turns=8), cadence=CADENCES["patient"],
        auto_threshold=0.70, escalation_triggers=(),
        outcome_signals=("trial_booked", "reply_positive", "checkin"), skill="lead_followup.md",
        signal_outcomes=(("trial_booked", "converted"), ("class_booked", "converted"), ("checkin", "converted")),
    ),
    TaskType(
        name="payment_recovery", label="Payment Recovery", pack="gym", category="communication", agent="retention",
        description="Notify a member about a failed payment in a non-embarrassing way",
        goal=Goal(
            summary="Recover a failed payment without embarrassing the member", shape="binary", completion="composite",
            signals=(GoalSignal("payment_succeeded", 100, True, 7),),
            judgment_criteria=(
                "The member has acknowledged the issue and indicated they will update payment. But do NOT mark "
                "complete until payment actually succeeds."
            ),
            outcomes=(
                outcome("recovered", "Payment Recovered", "positive", "Payment succeeded", 1.0),
                outcome("self_resolved", "Self-Resolved", "positive", "Payment succeeded before outreach sent"),
                outcome("acknowledged", "Acknowledged", "neutral", "Member acknowledged but payment still failing"),
                outcome(UNRESPONSIVE, "No Response", "neutral", "No reply, payment still failing"),
                outcome("cancelled", "Member Cancelled", "negative", "Member cancelled instead of fixing payment"),
                outcome("refunded", "Refunded", "negative", "The recovered payment was refunded"),
            ),
        ),
        priority="critical", budget=Budget(messages=2, days=7, turns=4), cadence=CADENCES["urgent"],
        auto_threshold=0.90, escalation_triggers=("always",),
        outcome_signals=("payment_succeeded",), skill="payment_recovery.md",
        signal_outcomes=(("payment_succeeded", "recovered"), ("refund", "refunded"), ("cancellation", "cancelled")),
    ),
    TaskType(
        name="onboarding", label="New Member Onboarding", pack="gym", category="communication", agent="retention",
        description="Welcome a new member and help them build the habit in their first 30 days",
        goal=Goal(
            summary="Help a new member check in at least 3 times in their first 30 days", shape="progressive",
            completion="composite",
            signals=(GoalSignal("checkin_count_3", 100, True, 30), GoalSignal("checkin", 33, False, 30)),
            judgment_criteria=(
                "The member is engaged and forming a habit. 3+ checkins is the signal. 1-2 checkins is progress. "
                "0 checkins after 14 days is concerning."
            ),
            outcomes=(
                outcome("habit_formed", "Habit Forming", "positive", "3+ checkins in first 30 days", 1.0),
                outcome("some_engagement", "Some Engagement", "neutral", "1-2 checkins, still building habit"),
                outcome("no_show", "No-Show", "negative", "0 checkins after 14+ days"),
                outcome(UNRESPONSIVE, "No Response", "neutral", "No reply to onboarding messages"),
            ),
        ),
        priority="medium", budget=Budget(messages=4, days=30, turns=6), cadence=CADENCES["slow_burn"],
        auto_threshold=0.85, escalation_triggers=(),
        outcome_signals=("checkin_count_3", "reply_positive"), skill="onboarding.md",
        signal_outcomes=(("checkin_count_3", "habit_formed"),),
    ),
    TaskType(
        name="staff_call_member", label="Call Member", pack="gym", category="staff_todo", agent="gm",
        assignment="owner", description="A human at the gym needs to call this member",
        goal=Goal(
            summary="Have a personal phone conversation with this member", shape="binary", completion="human_confirms",
            signals=(), judgment_criteria=None,
            outcomes=(
                outcome("completed", "Call Made", "positive", "Staff called the member"),
                outcome("member_unreachable", "Unreachable", "neutral", "Tried calling, no answer"),
                outcome("skipped", "Skipped", "neutral", "Owner decided not to call"),
            ),
        ),
        priority="high", budget=Budget(messages=0, days=3, turns=0), cadence=STAFF_REMINDERS,
        auto_threshold=0.0, escalation_triggers=("always",),
        outcome_signals=("checkin",), skill="staff_call_member.md",
    ),
    TaskType(
        name="monthly_churn_analysis", label="Monthly Churn Analysis", pack="gym", category="research", agent="gm",
        description="Analyze member data and produce a churn risk report",
        goal=Goal(
            summary="Produce a structured churn analysis report for the gym", shape="binary", completion="deliverable",
            signals=(), judgment_criteria=None,
            deliverable_spec=(
                "A report containing: total members, at-risk count, churn rate trend, top risk factors, recommended "
                "actions. Structured as markdown with a data summary."
            ),
            outcomes=(
                outcome("report_produced", "Report Produced", "positive", "Analysis complete, report delivered"),
                outcome("insufficient_data", "Insufficient Data", "neutral", "Not enough data to produce meaningful analysis"),
            ),
        ),
        priority="low", budget=Budget(messages=0, days=1, turns=5), cadence=CADENCES["single_shot"],
        auto_threshold=0.95, escalation_triggers=(), outcome_signals=(), skill="monthly_churn_analysis.md",
    ),
    TaskType(
        name="system_automation", label="Automation", pack="gym", category="automation", agent="gm",
        assignment="system", description="Carry out one system action (a webhook call) with no contact and no conversation",
        goal=Goal(
            summary="The action the task's context names is carried out", shape="binary", completion="signal",
            signals=(), judgment_criteria=None,
            outcomes=(
                outcome("executed", "Executed", "positive", "The action was handed to its channel, which retries it"),
                outcome("not_executed", "Not Executed", "negative", "The action was refused or the owner dropped it"),
            ),
        ),
        priority="low", budget=Budget(messages=0, days=1, turns=0), cadence=CADENCES["single_shot"],
        auto_threshold=0.95, escalation_triggers=(), outcome_signals=(), skill="system_automation.md",
    ),
)

AD_HOC = TaskType(
    name="ad_hoc", label="Custom Task", pack="gym", category="communication", agent="gm",
    description="A custom task created by the owner or agent for a specific purpose",
    goal=Goal(
        summary="Accomplish the specific goal described by the owner", shape="fuzzy", completion="judgment",
        signals=(),
        judgment_criteria=(
            "The owner's stated goal has been achieved or the member has responded in a way that resolves the situation."
        ),
        outcomes=(
            outcome("resolved", "Resolved", "positive", "Goal achieved"),
            outcome(UNRESPONSIVE, "No Response", "neutral", "No reply"),
            outcome("owner_handled", "Owner Handled", "positive", "Owner took over and handled it"),
        ),
    ),
    priority="medium", budget=Budget(messages=3, days=14, turns=6), cadence=CADENCES["standard"],
    auto_threshold=0.0, escalation_triggers=("always",), outcome_signals=(), skill="ad_hoc.md",
    # Shared by both packs: the follow-through gate (review below 0.5) stays for tasks without a contact.
    follow_through_threshold=0.5,
)
"""The catch-all, and the type of a task created without one: an acting ad_hoc task always needs review."""

# The assistant pack: follow-through types (budget messages 0: the outside agent acts, Loopline watches its loops).
ASSISTANT_PACK: tuple[TaskType, ...] = (
    TaskType(
        name="meeting_scheduling", label="Meeting Scheduling", pack="assistant", category="communication",
        agent="assistant", description="Agree a meeting time with someone through a few back-and-forth emails",
        goal=Goal(
            summary="A meeting time agreed and on the calendar", shape="binary", completion="composite",
            signals=(GoalSignal("invite_accepted", 100, True, 14), GoalSignal("email_reply", 50, False, 14)),
            judgment_criteria="The other person has agreed to a specific time, or the invite was accepted.",
            outcomes=(
                outcome("scheduled", "Meeting Scheduled", "positive", "A time was agreed or the invite accepted"),
                outcome("declined", "Declined", "negative", "The other person declined to meet"),
                outcome(UNRESPONSIVE, "No Response", "neutral", "No reply before the task ran out"),
                outcome("owner_handled", "Owner Handled", "positive", "The user arranged it themselves"),
            ),
        ),
        priority="medium", budget=Budget(messages=0, days=14, turns=6), cadence=CADENCES["single_shot"],
        auto_threshold=0.5, escalation_triggers=(), outcome_signals=("invite_accepted", "email_reply"),
        skill="meeting_scheduling.md",
    ),
    TaskType(
        name="inbox_management", label="Inbox Management", pack="assistant", category="recurring",
        agent="assistant", description="Keep the user's inbox triaged over weeks: a long-running task that owns workflows",
        goal=Goal(
            summary="The inbox stays triaged and nothing that needs an answer is left waiting", shape="progressive",
            completion="human_confirms", signals=(),
            judgment_criteria="Every message that needs the user has been surfaced or answered; nothing is stuck.",
            outcomes=(
                outcome("maintained", "Inbox Maintained", "positive", "The user ended the task with the inbox in order"),
                outcome("handed_back", "Handed Back", "neutral", "The user took inbox handling back"),
                outcome("owner_handled", "Owner Handled", "positive", "The user dealt with what was pending themselves"),
            ),
        ),
        priority="low", budget=Budget(messages=0, days=None, turns=0), cadence=CADENCES["single_shot"],
        auto_threshold=0.5, escalation_triggers=(), outcome_signals=(), skill="inbox_management.md",
        stalled_after_days=2,
    ),
)
