"""Contacts are mailboxes: however an address is spelled, one mailbox; what names none is refused, field named."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain import ids
from loopline.domain.mailbox import NotAMailbox, mailbox
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.task import Task
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.sending import Deferred, Sent, send_to_contact
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

SPELLINGS = ["bob@x.com", "<bob@x.com>", "Bob <bob@x.com>", "(a)bob@x.com", "bob@x.com.", '"bob"@x.com', "BOB@X.COM",
             '"Bob B." <Bob@X.com.> (work)', "  bob(home)@x.com  "]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_one_address_is_one_mailbox(spelling: str) -> None:
    assert mailbox(spelling) == "bob@x.com"


@pytest.mark.parametrize(("text", "why"), [
    ("<>", "empty address"), (" < > ", "empty address"), ("bob@x.com\nBcc: eve@y.com", "line break"),
    ("bob@x.com\r", "line break"), ("bob", "not an email address"), ("bob@x", "not an email address"),
    ("bob@@x.com", "not an email address"), ("(bob@x.com)", "not an email address"),
])
def test_what_names_no_mailbox_is_refused_with_the_reason(text: str, why: str) -> None:
    with pytest.raises(NotAMailbox, match=why):
        mailbox(text)


def message(kind: str, type_: str, data: dict) -> bytes:
    return json.dumps({"kind": kind, "id": "m1", "type": type_, "tenant": "gym", "at": "2026-03-02T09:00:00Z",
                       "data": data}).encode()


def create(contact: str) -> bytes:
    return message("command", "task.create", {"task_id": "t1", "title": "Check in", "task_type": "churn_risk",
                                              "contact": contact})


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_edge_keeps_a_contact_and_a_sender_as_their_mailbox(spelling: str) -> None:
    assert parse_message(create(spelling)).data["contact"] == "bob@x.com"
    assert parse_message(message("signal", "email.received", {"sender": spelling})).data["sender"] == "bob@x.com"


def test_the_recipient_of_a_recorded_email_is_kept_as_its_mailbox() -> None:
    recorded = {"task_id": "t1", "action": "send_email", "to": "Bob <BOB@x.com.>"}
    assert parse_message(message("command", "action.record", recorded)).data["to"] == "bob@x.com"
    with pytest.raises(InvalidMessage, match=r"^data\.to: <> is the empty address"):
        parse_message(message("command", "action.record", {**recorded, "to": "<>"}))


@pytest.mark.parametrize("bad", ["<>", "bob@x.com\nBcc: eve@y.com", "Bob <bob@x>"])
def test_the_edge_refuses_an_address_that_names_no_mailbox_naming_the_field(bad: str) -> None:
    with pytest.raises(InvalidMessage, match=r"^data\.contact: "):
        parse_message(create(bad))
    with pytest.raises(InvalidMessage, match=r"^data\.sender: "):
        parse_message(message("signal", "email.received", {"sender": bad}))


@pytest.mark.parametrize("name", ["Sam from the 6am class", "@sam", "Sam (front desk)"])
def test_a_contact_that_is_a_name_stays_as_given(name: str) -> None:
    """A name is a contact of a task the agent follows through (a type that sends needs an address)."""
    followed = message("command", "task.create", {"task_id": "t1", "title": "Call Sam", "contact": name})
    assert parse_message(followed).data["contact"] == name


def test_a_sender_that_is_not_an_address_is_refused() -> None:
    with pytest.raises(InvalidMessage, match=r"^data\.sender: 'Sam' is not an email address"):
        parse_message(message("signal", "email.received", {"sender": "Sam"}))


def test_an_international_domain_is_one_mailbox_whether_written_in_unicode_or_punycode() -> None:
    assert mailbox("Bob@BÜCHER.de") == mailbox("bob@xn--bcher-kva.de") == "bob@bücher.de"


@given(
    local=st.from_regex(r"[a-z0-9]([a-z0-9_+-]{0,10}[a-z0-9])?", fullmatch=True),
    domain=st.from_regex(r"[a-z0-9]{1,10}\.(com|org|de|nl|example)", fullmatch=True),
    name=st.from_regex(r"[A-Za-z]{1,8}( [A-Za-z]{1,8})?", fullmatch=True),
    comment=st.from_regex(r"[a-z ]{0,8}", fullmatch=True),
)
def test_any_address_spelled_any_of_these_ways_is_one_mailbox(local: str, domain: str, name: str, comment: str) -> None:
    address = f"{local}@{domain}"
    spellings = [address.upper(), f"{name} <{address}>", f'"{name}" <{address}.>', f"({comment}){address}",
                 f'"{local}"@{domain}', f"<{address}> ({comment})"]
    assert {mailbox(spelling) for spelling in spellings} == {address}


def register(watch: dict) -> bytes:
    return message("command", "loop.register", {"loop_id": "l1", "task_id": "t1", "channel": "email", "watch": watch,
                                                 "deadline": "2026-03-09T09:00:00Z", "if_unresolved": "send_reminder"})


def wake(watch: dict) -> bytes:
    return message("command", "task.wake", {"task_id": "t1", "when": {"channel": "email", "watch": watch}})


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_hand_written_email_watch_waits_for_the_senders_mailbox(spelling: str) -> None:
    """The reply it waits for arrives as `bob@x.com`, and a reminder to the watched sender counts on bob's ledger."""
    assert parse_message(register({"sender": spelling, "thread_id": "T1"})).data["watch"] == {
        "sender": "bob@x.com", "thread_id": "T1"}
    assert parse_message(wake({"sender": spelling})).data["when"]["watch"] == {"sender": "bob@x.com"}


@pytest.mark.parametrize("bad", ["<>", "bob@x.com\nBcc: eve@y.com"])
def test_a_watch_on_no_mailbox_is_refused_naming_the_watch_field(bad: str) -> None:
    with pytest.raises(InvalidMessage, match=r"^data\.watch: sender: "):
        parse_message(register({"sender": bad}))
    with pytest.raises(InvalidMessage, match=r"^data\.when\.watch: sender: "):
        parse_message(wake({"sender": bad}))


def test_a_watch_of_another_channel_is_kept_as_given() -> None:
    watch = {"repo": "acme/api", "pr_number": "7", "event_type": "review_submitted"}
    assert parse_message(message("command", "loop.register", {
        "loop_id": "l1", "task_id": "t1", "channel": "github", "watch": watch, "deadline": "2026-03-09T09:00:00Z",
        "if_unresolved": "notify_user"})).data["watch"] == watch


def test_a_send_keys_its_ledgers_on_the_mailbox_and_an_address_naming_none_is_never_counted() -> None:
    """Defence behind the edge: a recipient that reached a task some other way (an older event) is still sent
    to and counted as its mailbox, and one that names no mailbox is held for good, nothing recorded."""
    loopline = InMemoryLoopline()
    loopline.publish(command("cfg", "tenant.configure", "2026-03-02T08:00:00Z", "gym", execution_mode="limited_auto"),
                     command("c", "task.create", "2026-03-02T09:00:00Z", "gym", task_id="t1", title="Check in",
                             task_type="churn_risk", contact="bob@x.com", confidence=0.95))
    uow = UnitOfWork(loopline.app)
    task = uow.get(loopline.task("gym", "t1").id, Task)
    assert task is not None
    settings, now = TenantSettings(), parse_time("2026-03-02T10:00:00Z")

    refused = send_to_contact(uow, task, details={"to": "<>", "subject": "Hi", "body": "Hi"}, now=now, settings=settings)
    assert isinstance(refused, Deferred) and refused.deferral.rule == "undeliverable" and refused.deferral.until is None
    assert "the recipient (to) names no mailbox" in refused.deferral.reason
    assert uow.get(ids.tenant_sends_id("gym"), TenantSends) is None

    sent = send_to_contact(uow, task, details={"to": "Bob <BOB@x.com.>", "subject": "Hi", "body": "Hi"}, now=now,
                           settings=settings)
    assert sent == Sent("bob@x.com")
    ledger = uow.get(ids.contact_sends_id("gym", "bob@x.com"), ContactSends)
    assert ledger is not None and ledger.sent_within_week_of(now) == 1
