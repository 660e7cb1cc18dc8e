"""The dashboard's first screen on an embedded home: what waits for the owner (tasks in review, escalations with their
handoff, proposals, questions, free-text answers) and the owner's answers, each publishing the command the CLI
publishes and showing its result; another tenant's key sees and changes none of it."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi.testclient import TestClient

from loopline.domain.timeutil import parse_time
from loopline.projections.pauses import current_pauses
from loopline.projections.proposals import find_proposal
from loopline.projections.questions import find_question
from loopline.projections.task_queries import find_tasks
from loopline.projections.timeline import task_trail
from loopline.web.command_outcome import PENDING
from loopline.web.publishing import CommandResult
from tests.conftest import command, signal
from tests.hooks.loopline_hooks import Faults
from tests.web.conftest import Served, csrf_of

GYM, OTHER = "iron_temple", "other_gym"
ANN, BOB = "ann@example.com", "bob@example.com"
PROPOSAL = "gap:stalled_task:lease:1"
ITEM = re.compile(r'<article class="card item" data-kind="(\w+)" data-id="([^"]+)">')


CONFIGURE = command("c1", "tenant.configure", "2026-03-02T08:00:00Z", GYM, execution_mode="limited_auto",
                    profile={"display_name": "Iron Temple", "sign_off": "Sam"})
"""The gym lets the agent send on its own when it is confident (a second one is a repeat: it changes nothing)."""


def _review_task(served: Served) -> None:
    """Bob's win-back waits for the owner's review (low confidence), with the agent's draft."""
    served.publish(CONFIGURE,
                   command("c2", "task.create", "2026-03-02T09:00:00Z", GYM, task_id="bob", title="Win Bob back",
                           task_type="churn_risk", contact=BOB, to_name="Bob", confidence=0.5,
                           draft={"subject": "We miss you", "body": "Come back, Bob!"}))


def _escalation(served: Served) -> None:
    """Ann's win-back is escalated: her reply asks a question only the owner can answer."""
    served.publish(CONFIGURE, command("c3", "task.create", "2026-03-12T12:00:00Z", GYM, task_id="ann",
                                      title="Win Ann back", task_type="churn_risk", contact=ANN, to_name="Ann",
                                      confidence=0.95))
    served.system.tick(parse_time("2026-03-12T13:01:00Z"))
    served.publish(signal("s1", "email.received", "2026-03-13T08:10:00Z", GYM, sender=ANN, subject="Re: hi",
                          body="Lovely! Is the discount still on?"))


def _held_draft(served: Served) -> None:
    """Cal's second touch is due while the gym is in manual mode: the agent's draft is held back for the owner."""
    served.publish(command("c9", "task.create", "2026-03-02T09:00:00Z", OTHER, task_id="cal", title="Win Cal back",
                           task_type="churn_risk", contact="cal@example.com", to_name="Cal", confidence=0.9),
                   command("c10", "task.approve", "2026-03-02T09:10:00Z", OTHER, task_id="cal"))
    served.system.tick(parse_time("2026-03-02T09:20:00Z"))
    served.system.tick(parse_time("2026-03-05T09:30:00Z"))


def _question(served: Served) -> None:
    served.publish(command("c8", "task.create", "2026-03-02T09:00:00Z", GYM, task_id="zoe", title="Keep Zoe"),
                   command("c4", "question.ask", "2026-03-02T09:05:00Z", GYM, question_id="offer", task_id="zoe",
                           asker="Retention agent", stuck_on="which offer Zoe gets",
                           question="A free week or 20% off?", options=["A free week", "20% off"]))


def _proposal(served: Served) -> None:
    """A task stalled for a week becomes a proposal that survives debate and is shown to the owner."""
    served.publish(command("c5", "task.create", "2026-03-02T10:00:00Z", GYM, task_id="lease",
                           title="Get the lease signed"))
    served.system.tick(parse_time("2026-03-05T10:05:00Z"))
    served.system.tick(parse_time("2026-03-11T10:05:00Z"))
    served.publish(signal("s2", "user.seen", "2026-03-12T10:00:00Z", GYM))
    served.system.tick(parse_time("2026-03-12T10:30:00Z"))


def _items(page: str) -> list[tuple[str, str]]:
    return ITEM.findall(page)


def _act(served: Served, browser: TestClient, path: str, **fields: str) -> str:
    """Posts a form of the first screen as the browser would (with its CSRF token); the command's result page."""
    answer = browser.post(path, data={"csrf": served.csrf(browser, "/"), **fields})
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith("/commands/dashboard-")
    result = browser.get(location)
    assert result.status_code == 200 and "Back to what needs attention" in result.text
    return result.text


def _status(result_page: str) -> str:
    found = re.search(r'<p class="result" data-status="([^"]+)">\s*(.*?)\s*</p>', result_page, re.S)
    assert found, result_page
    return found.group(1)


def _events(served: Served) -> int:
    return served.system.app.process_recorder.max_notification_id() or 0


def _task(served: Served, task_id: str) -> dict:
    with served.system.projections.engine.connect() as conn:
        return find_tasks(conn, task_id, GYM)[0][1]


def test_the_first_screen_lists_each_kind_with_what_to_decide_it_with(served: Served) -> None:
    _review_task(served)
    _question(served)
    _proposal(served)
    _escalation(served)
    served.publish(command("c6", "question.ask", "2026-03-12T11:00:00Z", GYM, question_id="colour",
                           task_id="zoe", asker="Brand agent", stuck_on="the flyer", question="Red or blue?",
                           options=["Red", "Blue"]),
                   command("c7", "question.answer", "2026-03-12T11:05:00Z", GYM, question_id="colour",
                           answer="green, like the logo"))
    page = served.browser(GYM).get("/")
    assert page.status_code == 200 and "<h1>Needs attention</h1>" in page.text
    items = _items(page.text)
    assert {("answer", "colour"), ("proposal", PROPOSAL), ("question", "offer"), ("task", "ann"),
            ("task", "bob")} <= set(items)
    assert items.index(("task", "bob")) < items.index(("answer", "colour"))  # oldest first
    bob = page.text.split('data-id="bob"')[1].split("</article>")[0]
    assert '<textarea name="draft">Come back, Bob!</textarea>' in bob and ">Approve</button>" in bob
    assert ">Approve with these words</button>" in bob and '<select name="type">' in bob
    ann = page.text.split('data-id="ann"')[1].split("</article>")[0]
    assert "Is the discount still on?" in ann and "Blocked by the agent" in ann  # the last message, the handoff
    for button in ("Give guidance", "Reply in my words", "Take over"):
        assert f">{button}</button>" in ann
    assert '<a href="/tasks/ann">' in ann
    assert ">A) A free week</button>" in page.text and "green, like the logo" in page.text

    operator = served.browser(operator=True).get("/")
    assert '<span class="tenant">iron_temple</span>' in operator.text
    assert '<input type="hidden" name="tenant" value="iron_temple">' in operator.text
    assert '<a href="/tasks/bob?tenant=iron_temple">' in operator.text  # a task id may be used by several tenants
    assert '<p class="empty">Nothing needs your attention.</p>' in served.browser(OTHER).get("/").text


def test_approving_a_task_moves_it_on_and_its_result_says_it_took_effect(served: Served) -> None:
    _review_task(served)
    browser = served.browser(GYM)
    assert ("task", "bob") in _items(browser.get("/").text)
    assert _status(_act(served, browser, "/attention/tasks/approve/bob")) == "took effect"
    assert _task(served, "bob")["status"] != "pending_review"
    assert ("task", "bob") not in _items(browser.get("/").text)


def test_the_operator_answers_for_the_tenant_the_form_names(served: Served) -> None:
    _review_task(served)
    operator = served.browser(operator=True)
    unnamed = operator.post("/attention/tasks/approve/bob", data={"csrf": served.csrf(operator, "/")})
    assert unnamed.status_code == 400 and "tenant: " in unnamed.text
    result = _act(served, operator, "/attention/tasks/approve/bob", tenant=GYM)
    assert _status(result) == "took effect" and "of tenant iron_temple" in result


def test_approving_with_the_owners_words_sends_them_instead_of_the_agents_draft(served: Served) -> None:
    _review_task(served)
    browser = served.browser(GYM)
    result = _act(served, browser, "/attention/tasks/approve/bob", subject="Your Saturday spot",
                  draft="Hi Bob, I kept your Saturday 9am spot. Sam")
    assert _status(result) == "took effect"
    with served.system.projections.engine.connect() as conn:
        [edited] = [row["payload"]["draft"] for row in task_trail(conn, "bob", GYM)
                    if row["event"] == "Task.FirstDraftEdited"]
    assert (edited["subject"], edited["body"]) == ("Your Saturday spot", "Hi Bob, I kept your Saturday 9am spot. Sam")


def test_an_escalation_with_a_held_back_draft_is_sent_as_the_owner_edited_it(served: Served) -> None:
    _held_draft(served)
    browser = served.browser(OTHER)
    cal = browser.get("/").text.split('data-id="cal"')[1].split("</article>")[0]
    assert "Blocked by the system (manual_mode)" in cal and "Anything I can help with?" in cal
    assert ">Approve</button>" in cal and ">Give guidance</button>" in cal
    result = _act(served, browser, "/attention/tasks/approve/cal", tenant=OTHER, subject="Anything I can help with?",
                  draft="Hi Cal, your spot on Saturday is still yours. Sam")
    assert _status(result) == "took effect"
    with served.system.projections.engine.connect() as conn:
        trail = task_trail(conn, "cal", OTHER)
    [answered] = [row["payload"] for row in trail if row["event"] == "Task.OwnerAnswered"]
    [sent] = [row["payload"]["data"] for row in trail if row["event"] == "InboundMessage.Received"
              and row["payload"]["type"] == "task.approve" and row["payload"]["source"] == "dashboard"]
    assert answered["how"] == "edited"
    assert sent["draft"] == {"subject": "Anything I can help with?",
                             "body": "Hi Cal, your spot on Saturday is still yours. Sam"}


def test_the_owner_guides_replies_to_and_takes_over_an_escalated_task(served: Served) -> None:
    _escalation(served)
    browser = served.browser(GYM)
    assert _task(served, "ann")["status"] == "escalated"
    guided = _act(served, browser, "/attention/tasks/guidance/ann", guidance="Yes: 20% off until June.")
    assert _status(guided) == "took effect"  # the offline policy cannot write with guidance: it hands the task back
    assert _status(_act(served, browser, "/attention/tasks/reply/ann", reply="See you Saturday, Ann!")) == "took effect"
    assert _status(_act(served, browser, "/attention/tasks/takeover/ann", reason="booked her in")) == "took effect"
    assert _task(served, "ann")["status"] == "completed"
    with served.system.projections.engine.connect() as conn:
        trail = [row["summary"] for row in task_trail(conn, "ann", GYM)]
    assert "owner gave guidance; task resumed" in trail
    assert any(line.startswith("owner wrote to the contact") for line in trail)


def test_a_proposal_is_rejected_with_its_type_and_a_question_answered_with_an_option(served: Served) -> None:
    _question(served)
    _proposal(served)
    browser = served.browser(GYM)
    assert _status(_act(served, browser, f"/attention/proposals/reject/{PROPOSAL}", type="never")) == "took effect"
    assert _status(_act(served, browser, "/attention/questions/answer/offer", answer="B")) == "took effect"
    with served.system.projections.engine.connect() as conn:
        proposal, question = find_proposal(conn, GYM, PROPOSAL), find_question(conn, GYM, "offer")
    assert (proposal["status"], proposal["rejection_type"]) == ("rejected", "never")
    assert question["answer_option"] == "20% off"
    left = _items(browser.get("/").text)
    assert ("proposal", PROPOSAL) not in left and ("question", "offer") not in left


def test_a_proposal_approved_becomes_a_task(served: Served) -> None:
    _proposal(served)
    browser = served.browser(GYM)
    assert _status(_act(served, browser, f"/attention/proposals/approve/{PROPOSAL}")) == "took effect"
    assert _task(served, f"proposal-{PROPOSAL}")["title"] == "nudge or close 'Get the lease signed'"


def test_a_refused_command_shows_the_reason(served: Served) -> None:
    _question(served)
    browser = served.browser(GYM)
    _act(served, browser, "/attention/questions/answer/offer", answer="A")
    again = _act(served, browser, "/attention/questions/answer/offer", answer="B")
    assert _status(again) == "refused" and "already answered" in again


def test_an_answer_whose_handler_fails_is_shown_set_aside_with_its_error(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    _escalation(served)
    faults = Faults()
    faults.install(monkeypatch.setattr)
    faults.configure("handler:Poisoned")
    page = _act(served, served.browser(GYM), "/attention/tasks/guidance/ann", guidance="Poisoned advice")
    assert _status(page) == "set aside" and "injected handler fault" in page and "loopline parked retry" in page


def test_a_command_not_yet_processed_is_pending_and_its_page_refreshes_itself(served: Served) -> None:
    _question(served)
    browser = served.browser(GYM)
    served.app.state.publisher.command = lambda tenant, type_, data, source: CommandResult(
        "dashboard-notyet", tenant, type_, PENDING)  # at scale: on the log, not processed by a worker yet
    page = _act(served, browser, "/attention/questions/answer/offer", answer="A")
    assert _status(page) == "pending" and '<meta http-equiv="refresh" content="2">' in page
    assert served.browser(GYM).get("/commands/dashboard-notyet").status_code == 404  # no receipt, not this session's


def test_an_incomplete_form_is_refused_naming_the_field_and_publishes_nothing(served: Served) -> None:
    _proposal(served)
    _escalation(served)
    browser = served.browser(GYM)
    before = _events(served)
    for path, fields, field in (("/attention/tasks/guidance/ann", {"guidance": "  "}, "guidance"),
                                ("/attention/tasks/reply/ann", {}, "reply"),
                                (f"/attention/proposals/reject/{PROPOSAL}", {"type": "whenever"}, "type")):
        answer = browser.post(path, data={"csrf": served.csrf(browser, "/"), **fields})
        assert answer.status_code == 400 and f"{field}: " in answer.text, answer.text
    assert _events(served) == before


def test_another_tenants_key_sees_and_changes_none_of_its_items(served: Served) -> None:
    _review_task(served)
    _question(served)
    _proposal(served)
    _escalation(served)
    owner = served.browser(GYM)
    published = owner.post("/attention/tasks/approve/bob", data={"csrf": served.csrf(owner, "/")})
    theirs = published.headers["location"]
    other = served.browser(OTHER)
    page = other.get("/").text
    assert not _items(page) and not any(word in page for word in ("Win Ann", "Win Bob", "lease", "offer"))
    assert other.get(f"/?tenant={GYM}").status_code == 404
    before = _events(served)
    attempts = [("tasks/approve/ann", {}), ("tasks/reject/ann", {}), ("tasks/guidance/ann", {"guidance": "x"}),
                ("tasks/reply/ann", {"reply": "x"}), ("tasks/takeover/ann", {}), ("tasks/approve/nobody", {}),
                (f"proposals/approve/{PROPOSAL}", {}), (f"proposals/reject/{PROPOSAL}", {"type": "never"}),
                ("questions/answer/offer", {"answer": "A"}), ("questions/answer/offer", {"answer": "A", "tenant": GYM})]
    for path, fields in attempts:
        answer = other.post(f"/attention/{path}", data={"csrf": served.csrf(other, "/"), **fields})
        assert answer.status_code == 404, (path, answer.text)
    assert _events(served) == before
    assert other.get(theirs).status_code == 404
    assert other.get(f"{theirs}?tenant={GYM}").status_code == 404
    assert owner.get(theirs).status_code == 200


def test_a_form_without_its_csrf_token_is_refused_and_publishes_nothing(served: Served) -> None:
    _question(served)
    browser = served.browser(GYM)
    before = _events(served)
    for data in ({"answer": "A"}, {"answer": "A", "csrf": "forged"}):
        assert browser.post("/attention/questions/answer/offer", data=data).status_code == 403
    assert _events(served) == before
    assert csrf_of(browser.get("/").text)  # the page's forms carry the token


def test_an_id_naming_another_path_stays_inside_its_items_forms_and_links(served: Served) -> None:
    """A tenant chooses its task ids: one spelling a path up and out must neither lead the owner's click to
    another page (here the operator's pause) nor fail to reach its own task."""
    climber = "../../../system/pause"
    served.publish(CONFIGURE, command("c11", "task.create", "2026-03-02T09:00:00Z", GYM, task_id=climber,
                                      title="Climb", task_type="churn_risk", contact=BOB, confidence=0.5,
                                      draft={"subject": "Hi", "body": "Hello"}))
    browser = served.browser(GYM)
    page = browser.get("/")
    article = page.text.split(f'data-id="{climber}"')[1].split("</article>")[0]
    forms = re.findall(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', article, re.S)
    reject = urljoin(str(page.url), unescape(next(action for action, body in forms if ">Reject</button>" in body)))
    link = urljoin(str(page.url), unescape(re.search(r'<a href="([^"]+)">', article).group(1)))
    assert urlsplit(reject).path.startswith("/attention/tasks/reject/") and urlsplit(link).path.startswith("/tasks/")
    assert "<h1>Climb</h1>" in browser.get(link).text
    assert _status(_act(served, browser, reject, type="never")) == "took effect"
    assert _task(served, climber)["status"] == "cancelled"
    with served.system.projections.engine.connect() as conn:
        assert current_pauses(conn) == {"system": None, "tenants": []}
