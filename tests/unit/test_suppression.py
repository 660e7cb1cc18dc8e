"""Opt-out and suppression (seed 002 §22, §33.3): a STOP reply, an unsubscribe, a bounce or a complaint suppresses the
contact, closes every task of theirs in one step with no model call, and nothing reaches them again until
`contact.resubscribe`; a tenant whose bounce rate passes 10 % is paused."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from loopline.domain import ids
from loopline.domain.send_checks import SendAttempt, first_deferral
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.task import Task
from loopline.domain.tenant import Tenant, TenantSettings
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")


def at(hours: float) -> str:
    return format_time(T0 + timedelta(hours=hours))


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto"))
    yield running
    running.close()


def create(loopline: InMemoryLoopline, ref: str, task_type: str, contact: str = ANN) -> Any:
    [outcome] = loopline.publish(command(
        f"c-{ref}", "task.create", at(0), GYM, task_id=ref, title=f"{task_type} {contact}", task_type=task_type,
        contact=contact, to_name="Ann", confidence=0.95, draft={"subject": "We miss you", "body": "Hi Ann!"},
    ))
    return outcome


def two_tasks_with_a_first_touch_sent(loopline: InMemoryLoopline) -> None:
    create(loopline, "churn", "churn_risk")
    create(loopline, "lead", "lead_followup")
    loopline.tick(T0 + timedelta(hours=1))
    assert len(loopline.emails()) == 1


def notices(loopline: InMemoryLoopline, kind: str) -> list[str]:
    return [e.message for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == kind]


def suppression(loopline: InMemoryLoopline, contact: str = ANN) -> dict[str, Any] | None:
    ledger = UnitOfWork(loopline.app).get(ids.contact_sends_id(GYM, contact), ContactSends)
    return ledger.suppression if ledger is not None else None


STOPS = ["STOP", "Please unsubscribe me.", "Bitte keine E-Mails mehr.", "Merci de me désabonner.",
         "Por favor, darme de baja de la lista.", "Meld me af alsjeblieft."]


@pytest.mark.parametrize("words", STOPS)
def test_a_stop_reply_closes_every_task_of_the_contact_in_one_step_without_the_model(
        loopline: InMemoryLoopline, words: str) -> None:
    two_tasks_with_a_first_touch_sent(loopline)

    [outcome] = loopline.publish(signal("r1", "email.received", at(2), GYM, sender="Ann <ANN@example.com>",
                                        subject="Re: We miss you", body=words))

    assert outcome.accepted and "closed 2 task(s)" in outcome.detail
    for ref in ("churn", "lead"):
        task = loopline.task(GYM, ref)
        assert (task.status, task.outcome) == ("cancelled", "opted_out")
    assert loopline.model.requests == []
    assert suppression(loopline) is not None and suppression(loopline)["reason"] == "member_request"
    [told] = [e for e in loopline.events() if isinstance(e, Task.UserNotified) and e.kind == "contact_suppressed"]
    assert "ann@example.com asked to hear no more" in told.message and "contact.resubscribe" in told.message
    assert told.quote == words and told.task_ref == "churn"  # the task her reply answered, with her words


def test_the_one_click_unsubscribe_mail_every_email_carries_suppresses_the_contact(loopline: InMemoryLoopline) -> None:
    two_tasks_with_a_first_touch_sent(loopline)

    # What a mail client sends to the `List-Unsubscribe` mailto (adapters/smtp.py): that subject, no body.
    loopline.publish(signal("u1", "email.received", at(2), GYM, sender=ANN, subject=f"unsubscribe {GYM} {ANN}"))

    assert suppression(loopline) is not None
    assert loopline.task(GYM, "churn").outcome == "opted_out" and loopline.model.requests == []


def test_nothing_more_is_sent_to_a_suppressed_contact_and_no_draft_is_asked(loopline: InMemoryLoopline) -> None:
    two_tasks_with_a_first_touch_sent(loopline)
    loopline.publish(signal("r1", "email.received", at(2), GYM, sender=ANN, body="STOP"))

    for day in range(1, 30):
        loopline.tick(T0 + timedelta(days=day))

    assert len(loopline.emails()) == 1
    assert loopline.model.requests == []


def test_a_touch_due_for_a_contact_suppressed_behind_its_back_closes_the_task_undrafted(
        loopline: InMemoryLoopline) -> None:
    create(loopline, "churn", "churn_risk")
    loopline.publish(command("c-lead", "task.create", at(0), GYM, task_id="lead", title="Lead Ann",
                             task_type="lead_followup", contact=ANN, confidence=0.95))
    uow = UnitOfWork(loopline.app)  # as a suppression racing the tasks would leave it: the ledger only
    ledger = uow.add(ContactSends.open(id=ids.contact_sends_id(GYM, ANN), tenant=GYM, contact=ANN, now=T0))
    ledger.suppress(reason="complaint", source="complaint", words="", now=T0)
    uow.commit()

    loopline.tick(T0 + timedelta(hours=1))

    assert loopline.emails() == [] and loopline.model.requests == []
    assert [loopline.task(GYM, ref).outcome for ref in ("churn", "lead")] == ["opted_out", "opted_out"]


def test_the_owners_reply_to_a_suppressed_contact_is_refused_naming_the_suppression(loopline: InMemoryLoopline) -> None:
    two_tasks_with_a_first_touch_sent(loopline)
    loopline.publish(signal("r1", "email.received", at(2), GYM, sender=ANN, body="Please stop emailing me."))

    [outcome] = loopline.publish(command("rep", "task.reply", at(3), GYM, task_id="churn", body="Sorry to see you go!"))

    assert not outcome.accepted
    assert "ann@example.com asked to hear no more" in outcome.detail and "contact.resubscribe" in outcome.detail
    assert len(loopline.emails()) == 1


def test_a_new_task_for_a_suppressed_contact_is_refused_until_they_are_resubscribed(loopline: InMemoryLoopline) -> None:
    loopline.publish(signal("u1", "contact.unsubscribed", at(1), GYM, contact="ANN@example.com."))

    refused = create(loopline, "winback", "win_back")
    assert not refused.accepted and refused.detail.startswith("contact: ann@example.com unsubscribed")

    [lifted] = loopline.publish(command("rs", "contact.resubscribe", at(2), GYM, contact=ANN, reason="she asked"))
    assert lifted.accepted and suppression(loopline) is None
    assert create(loopline, "winback2", "win_back").accepted


def test_lifting_a_suppression_that_is_not_there_is_refused_naming_the_contact(loopline: InMemoryLoopline) -> None:
    [outcome] = loopline.publish(command("rs", "contact.resubscribe", at(1), GYM, contact=ANN, reason="she asked"))

    assert not outcome.accepted and outcome.detail == "contact: ann@example.com is not suppressed for tenant gym; nothing to lift"


def test_an_out_of_office_that_mentions_unsubscribing_is_no_opt_out(loopline: InMemoryLoopline) -> None:
    two_tasks_with_a_first_touch_sent(loopline)

    loopline.publish(signal("r1", "email.received", at(2), GYM, sender=ANN, subject="Out of office",
                            body="I am out of the office until Monday. To unsubscribe from my newsletter, reply STOP.",
                            auto_submitted="auto-replied"))

    assert suppression(loopline) is None
    assert loopline.task(GYM, "churn").status != "cancelled"


def test_a_complaint_suppresses_and_a_hard_bounce_closes_as_undeliverable(loopline: InMemoryLoopline) -> None:
    create(loopline, "churn", "churn_risk")
    create(loopline, "bob", "churn_risk", contact="bob@example.com")

    loopline.publish(signal("x1", "email.complained", at(1), GYM, contact=ANN),
                     signal("b1", "email.bounced", at(1), GYM, contact="bob@example.com", bounce_type="hard",
                            detail="550 no such user"))

    assert (loopline.task(GYM, "churn").outcome, suppression(loopline)["reason"]) == ("opted_out", "complaint")
    assert loopline.task(GYM, "bob").outcome == "undeliverable"
    assert suppression(loopline, "bob@example.com")["words"] == "550 no such user"


def test_three_soft_bounces_count_as_a_hard_one(loopline: InMemoryLoopline) -> None:
    for n in range(2):
        loopline.publish(signal(f"b{n}", "email.bounced", at(n), GYM, contact=ANN, bounce_type="soft"))
        assert suppression(loopline) is None

    loopline.publish(signal("b3", "email.bounced", at(3), GYM, contact=ANN, bounce_type="soft"))

    assert suppression(loopline)["reason"] == "hard_bounce"


@pytest.mark.parametrize(("action", "fields", "suppressing", "due", "what", "why"), [
    ("send_contract", {"resource_id": "doc-1"}, "contact.unsubscribed", "2026-03-20T10:00:00Z", "reminder",
     "unsubscribed"),
    ("send_email", {"subject": "Our offer"}, "email.complained", "2026-03-17T10:00:00Z", "follow-up",
     "marked our email as spam"),
])
def test_a_reminder_or_follow_up_to_a_suppressed_contact_is_not_drafted_or_sent_and_its_wait_ends(
        action: str, fields: dict[str, str], suppressing: str, due: str, what: str, why: str) -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("c", "task.create", "2026-03-13T10:00:00Z", GYM, task_id="nda", title="NDA"),
                     command("a", "action.record", "2026-03-13T10:00:00Z", GYM, task_id="nda", action=action,
                             to="legal@acme.com", **fields),
                     signal("s", suppressing, "2026-03-14T10:00:00Z", GYM, contact="legal@acme.com"))

    loopline.tick(parse_time(due))

    assert loopline.emails() == [] and loopline.model.requests == []
    [told] = notices(loopline, "contact_suppressed")
    assert f"no {what} was sent" in told and f"legal@acme.com {why}" in told
    assert loopline.task(GYM, "nda").open_loops == []


def test_a_bounce_rate_over_ten_percent_of_the_recent_sends_pauses_the_tenant(loopline: InMemoryLoopline) -> None:
    uow = UnitOfWork(loopline.app)
    sends = uow.add(TenantSends.open(id=ids.tenant_sends_id(GYM), tenant=GYM, now=T0))
    for n in range(20):
        sends.record(task_ref=f"t{n}", day=T0.date(), now=T0)
    uow.commit()
    create(loopline, "churn", "churn_risk")

    for n, contact in enumerate(["a@example.com", "b@example.com", ANN]):
        loopline.publish(signal(f"b{n}", "email.bounced", at(1), GYM, contact=contact, bounce_type="hard"))
        tenant = UnitOfWork(loopline.app).get(ids.tenant_id(GYM), Tenant)
        assert tenant is not None and (tenant.paused is not None) == (n == 2)

    assert tenant.paused.by == "bounce_rate" and "3 of the 20 emails" in tenant.paused.reason
    [told] = notices(loopline, "tenant_paused")
    assert "tenant.resume" in told


def test_a_version_1_ledger_snapshot_loads_as_a_contact_never_suppressed() -> None:
    ledger = ContactSends.open(id=ids.contact_sends_id(GYM, ANN), tenant=GYM, contact=ANN, now=T0)
    snapshot = ContactSends.Snapshot.take(ledger)
    state = {k: v for k, v in snapshot.state.items() if k not in ("suppression", "soft_bounces", "class_version")}
    old = ContactSends.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                                timestamp=snapshot.timestamp, topic=snapshot.topic, state=state)

    loaded = old.mutate(None)

    assert (loaded.suppression, loaded.soft_bounces) == (None, 0)


def test_the_suppressed_check_comes_first_and_never_frees_up() -> None:
    ledger = ContactSends.open(id=ids.contact_sends_id(GYM, ANN), tenant=GYM, contact=ANN, now=T0)
    ledger.suppress(reason="unsubscribe_link", source="unsubscribe", words="", now=T0)
    attempt = SendAttempt(contact=ANN, messages_used=9, messages_budget=1, contact_sends=ledger,
                          tenant_sends=TenantSends.open(id=ids.tenant_sends_id(GYM), tenant=GYM, now=T0),
                          limits=TenantSettings(), now=T0)

    deferral = first_deferral(attempt)

    assert deferral is not None and (deferral.rule, deferral.until) == ("suppressed", None)
    assert deferral.reason.startswith("ann@example.com unsubscribed on 2026-03-02, so they are suppressed")
