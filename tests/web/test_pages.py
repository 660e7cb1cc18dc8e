"""The scorecard, tasks and loops pages on an embedded home with two tenants: what each page shows and filters, and
that a tenant's key sees none of the other tenant's tasks, loops or numbers on any of them, whatever id it guesses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from loopline.web import app as web_app
from loopline.web.app import ServeOptions
from tests.conftest import ANY_HOUR, build_system, command, signal
from tests.integration.helpers import tick
from tests.web.conftest import Served

GYM, STUDIO = "gym", "studio"
DRAFT = {"subject": "Come back?", "body": "We kept your spot."}
CHART = '<svg class="chart" role="img" aria-label="Outcomes per type, this period against the last"'


def win_back(ref: str, at: str, tenant: str, task_id: str, contact: str) -> dict[str, Any]:
    return command(ref, "task.create", at, tenant, task_id=task_id, title=f"Win back {contact}", task_type="win_back",
                   contact=contact, confidence=0.95, draft=DRAFT)


def seed(served: Served) -> None:
    """The gym: a recovery worth 100 in week 9 and one worth 199 in week 10, a member still in the cadence (her
    reply loop past its deadline today) and a follow-up in review with a loop that expires and one a webhook answers;
    the studio: a recovery worth 555 in week 10 and a loop open for years."""
    configure = {"execution_mode": "limited_auto", "average_value": 175, "daily_send_limit": 100, **ANY_HOUR}
    served.publish(command("g-cfg", "tenant.configure", "2026-02-23T14:00:00Z", GYM, **configure),
                   command("s-cfg", "tenant.configure", "2026-02-23T14:00:00Z", STUDIO, **configure),
                   win_back("g0", "2026-02-23T14:00:00Z", GYM, "gym-dee", "dee@gym.example"))
    tick(served.system, "2026-02-23T15:00:00Z")
    served.publish(signal("g0-paid", "outcome.observed", "2026-02-25T14:00:00Z", GYM, contact="dee@gym.example",
                          outcome="reactivation", value=100.0))
    served.publish(
        win_back("g1", "2026-03-02T14:00:00Z", GYM, "gym-ann", "ann@gym.example"),
        win_back("g2", "2026-03-02T14:00:00Z", GYM, "gym-bo", "bo@gym.example"),
        command("g3", "task.create", "2026-03-02T14:00:00Z", GYM, task_id="gym-invoice", title="Chase the invoice",
                confidence=0.3),
        command("g4", "loop.register", "2026-03-02T14:00:00Z", GYM, task_id="gym-invoice", loop_id="gym-invoice/paid",
                channel="email", watch={"sender": "billing@supplier.example"}, deadline="2026-03-03T14:00:00Z",
                if_unresolved="notify_user", description="The supplier's payment"),
        command("g5", "loop.register", "2026-03-02T14:00:00Z", GYM, task_id="gym-invoice",
                loop_id="gym-invoice/receipt", channel="webhook", watch={"source": "supplier", "trigger_name": "receipt"},
                deadline="2099-01-01T00:00:00Z", if_unresolved="notify_user", description="The supplier's receipt"),
        win_back("s1", "2026-03-02T14:00:00Z", STUDIO, "studio-cy", "cy@studio.example"),
        command("s2", "task.create", "2026-03-02T14:00:00Z", STUDIO, task_id="studio-lease", title="Renew the lease",
                confidence=0.3),
        command("s3", "loop.register", "2026-03-02T14:00:00Z", STUDIO, task_id="studio-lease",
                loop_id="studio-lease/signed", channel="email", watch={"sender": "landlord@studio.example"},
                deadline="2099-01-01T00:00:00Z", if_unresolved="notify_user", description="The signed lease"))
    tick(served.system, "2026-03-02T15:00:00Z")
    served.publish(signal("g1-paid", "outcome.observed", "2026-03-04T14:00:00Z", GYM, contact="ann@gym.example",
                          outcome="reactivation", value=199.0),
                   signal("g5-receipt", "webhook.received", "2026-03-04T14:00:00Z", GYM, source="supplier",
                          trigger_name="receipt", payload={"amount": 42}),
                   signal("s1-paid", "outcome.observed", "2026-03-04T14:00:00Z", STUDIO, contact="cy@studio.example",
                          outcome="reactivation", value=555.0))
    tick(served.system, "2026-03-05T15:00:00Z")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One seeded home for the module: the pages only read it."""
    system = build_system(tmp_path_factory.mktemp("pages") / "home")
    served = Served(system, ServeOptions())
    try:
        seed(served)
        yield served
    finally:
        for client in served.clients:
            client.close()
        system.close()


@pytest.fixture(scope="module")
def gym(site: Served) -> TestClient:
    return site.browser(GYM)


@pytest.fixture(scope="module")
def studio(site: Served) -> TestClient:
    return site.browser(STUDIO)


@pytest.fixture(scope="module")
def operator(site: Served) -> TestClient:
    return site.browser(operator=True)


def cell(html: str, attribute: str, name: str) -> list[str]:
    """The cells of the table row marked `attribute="name"`, as text."""
    row = re.search(rf'<tr {attribute}="{re.escape(name)}"[^>]*>(.*?)</tr>', html, re.S)
    assert row, f"no row {attribute}={name!r}"
    return [re.sub(r"<[^>]+>", "", found).strip() for found in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def test_the_scorecard_charts_outcomes_per_type_and_the_revenue_trend_against_the_week_before(gym: TestClient) -> None:
    page = gym.get("/scorecard", params={"period": "2026-W10"})

    assert page.status_code == 200 and CHART in page.text
    assert cell(page.text, "data-type", "win_back") == ["win_back", "1", "1", "="]
    assert cell(page.text, "data-number", "revenue retained") == ["revenue retained", "199.0", "100.0", "▲ 99%"]
    assert re.search(r'Revenue retained: <strong>199.0</strong> <span class="trend">▲ 99%</span>', page.text)
    assert cell(page.text, "data-number", "tasks created")[1:3] == ["3", "1"]
    assert 'href="/scorecard?period=2026-W09&amp;tenant=gym"' in page.text


def test_the_scorecard_of_the_current_week_draws_an_empty_chart_when_nothing_happened(gym: TestClient) -> None:
    page = gym.get("/scorecard")

    assert page.status_code == 200 and CHART in page.text and "no outcomes yet" in page.text


def test_a_scorecard_period_of_another_form_is_refused_naming_the_forms(gym: TestClient) -> None:
    page = gym.get("/scorecard", params={"period": "March"})

    assert page.status_code == 400 and "2026-W10" in page.text and "day, week, month" in page.text


def test_the_operator_sees_every_tenants_totals_or_picks_one(operator: TestClient) -> None:
    everyone = operator.get("/scorecard", params={"period": "2026-W10"})
    studio = operator.get("/scorecard", params={"period": "2026-W10", "tenant": STUDIO})

    assert cell(everyone.text, "data-number", "revenue retained")[1] == "754.0"
    assert cell(everyone.text, "data-type", "win_back")[1] == "2"
    assert '<option value="gym">' in everyone.text and '<option value="studio">' in everyone.text
    assert cell(studio.text, "data-number", "revenue retained")[1] == "555.0"


def test_a_tenant_sees_only_its_own_scorecard(studio: TestClient) -> None:
    page = studio.get("/scorecard", params={"period": "2026-W10"})

    assert cell(page.text, "data-number", "revenue retained")[1:3] == ["555.0", "0"]
    assert "199" not in page.text and 'name="tenant"' not in page.text
    assert studio.get("/scorecard", params={"period": "2026-W10", "tenant": GYM}).status_code == 404


def task_ids(html: str) -> list[str]:
    return re.findall(r'<tr data-task="([^"]+)"', html)


def rows_of_loops(html: str) -> list[tuple[str, str]]:
    """The loops page's rows: their class (`loop`, or `loop expired`) and loop id."""
    return re.findall(r'<tr class="(loop[^"]*)" data-loop="([^"]+)"', html)



def test_the_tasks_page_lists_the_tenants_tasks_filtered_by_status_type_and_contact(gym: TestClient) -> None:
    everything = gym.get("/tasks")

    assert sorted(task_ids(everything.text)) == ["gym-ann", "gym-bo", "gym-dee", "gym-invoice"]
    assert '<a href="/tasks/gym-ann">gym-ann</a>' in everything.text
    assert task_ids(gym.get("/tasks", params={"status": "completed"}).text) == ["gym-dee", "gym-ann"]
    assert task_ids(gym.get("/tasks", params={"type": "ad_hoc"}).text) == ["gym-invoice"]
    assert task_ids(gym.get("/tasks", params={"contact": "BO@gym.example", "status": ""}).text) == ["gym-bo"]
    assert 'class="empty"' in gym.get("/tasks", params={"status": "escalated"}).text


def test_an_unknown_status_or_type_is_refused_naming_the_known_ones(gym: TestClient) -> None:
    status = gym.get("/tasks", params={"status": "done"})
    kind = gym.get("/tasks", params={"type": "nagging"})

    assert status.status_code == 400 and "pending_review" in status.text and "completed" in status.text
    assert kind.status_code == 400 and "win_back" in kind.text


def test_a_task_page_shows_status_budgets_cadence_loops_inbox_memory_and_its_decisions(gym: TestClient) -> None:
    page = gym.get("/tasks/gym-bo")

    assert page.status_code == 200 and "<h1>Win back bo@gym.example</h1>" in page.text
    facts = re.search(r'<dl class="facts">(.*?)</dl>', page.text, re.S)
    assert facts and "waiting" in facts.group(1)
    assert "2 of 3 messages" in facts.group(1) and "touch 2 of 3" in facts.group(1)
    for section in ("loops", "inbox", "memory", "timeline"):
        assert f'<section id="{section}">' in page.text
    assert 'data-loop="gym-bo/reply/14"' in page.text and "progress.md" in page.text
    decision = re.search(r'<li class="event" data-event="Task.DecisionRecorded">(.*?)</li>', page.text, re.S)
    assert decision and "confidence 0.80" in decision.group(1) and "no model was asked" in decision.group(1)


def test_a_task_page_shows_its_inbox_and_a_memory_file(gym: TestClient) -> None:
    page = gym.get("/tasks/gym-invoice", params={"file": "progress.md"})

    inbox = re.search(r'<section id="inbox">(.*?)</section>', page.text, re.S)
    assert inbox and "webhook.received" in inbox.group(1) and "g5-receipt" in inbox.group(1)
    assert '<pre class="file"># ' in page.text
    assert gym.get("/tasks/gym-ann", params={"file": "secrets.md"}).status_code == 404


def test_a_memory_file_path_never_reaches_outside_the_tasks_folder(gym: TestClient) -> None:
    for path in ("../gym-bo/progress.md", "../../studio-cy/progress.md", "/etc/passwd", "%2e%2e/progress.md"):
        assert gym.get("/tasks/gym-ann", params={"file": path}).status_code == 404, path


def test_the_loops_page_lists_loops_by_deadline_with_the_expired_ones_highlighted(gym: TestClient) -> None:
    page = gym.get("/loops")

    assert rows_of_loops(page.text) == [("loop expired", "gym-invoice/paid"), ("loop expired", "gym-bo/reply/5"),
                    ("loop expired", "gym-bo/reply/14")]  # the last still open, its deadline long past today
    assert "past its deadline" in page.text and "gym-invoice/receipt" not in page.text  # answered: no longer waited on


def test_a_loop_reads_the_same_on_the_loops_page_and_its_tasks_page(gym: TestClient, operator: TestClient) -> None:
    on_loops = cell(gym.get("/loops").text, "class", "loop expired\" data-loop=\"gym-invoice/paid")
    on_task = cell(gym.get("/tasks/gym-invoice").text, "class", "loop expired\" data-loop=\"gym-invoice/paid")
    assert on_loops == on_task[:2] + ["gym-invoice"] + on_task[2:]
    assert on_task[-1].startswith("expired ")  # resolved as expired by the tick, when
    by_operator = cell(operator.get("/loops").text, "class", "loop expired\" data-loop=\"gym-invoice/paid")
    assert by_operator == on_loops[:3] + [GYM] + on_loops[3:]




def test_a_deadline_reads_as_the_cli_words_it_with_its_exact_time_in_the_markup(gym: TestClient) -> None:
    page = gym.get("/loops").text
    assert cell(page, "class", "loop expired\" data-loop=\"gym-invoice/paid")[0] == "3 Mar 2026 14:00 UTC"
    assert '<td><time datetime="2026-03-03T14:00:00Z">3 Mar 2026 14:00 UTC</time></td>' in page


ISOLATED_PAGES = ("/tasks", "/tasks?status=completed", "/tasks?type=win_back", "/loops", "/scorecard?period=2026-W10",
                  "/scorecard?period=2026-W09")


def test_a_tenant_sees_none_of_another_tenants_tasks_loops_or_numbers(studio: TestClient) -> None:
    for path in ISOLATED_PAGES:
        page = studio.get(path)
        assert page.status_code == 200, path
        assert "gym-" not in page.text and "gym.example" not in page.text and "199" not in page.text, path
    assert task_ids(studio.get("/tasks").text) == ["studio-cy", "studio-lease"]
    assert task_ids(studio.get("/tasks", params={"contact": "ann@gym.example"}).text) == []
    assert rows_of_loops(studio.get("/loops").text) == [("loop", "studio-lease/signed")]


def test_another_tenants_task_is_not_found_like_one_that_does_not_exist(studio: TestClient) -> None:
    for path in ("/tasks/gym-ann", "/tasks/gym-ann?file=progress.md", "/tasks/gym-ann?tenant=gym",
                 "/tasks/gym-invoice", "/tasks/no-such-task", "/tasks?tenant=gym", "/loops?tenant=gym"):
        page = studio.get(path)
        assert page.status_code == 404, path
        assert "gym-" not in page.text.replace(path, "") and "Chase the invoice" not in page.text, path


def test_the_operator_sees_both_tenants_tasks_and_loops(operator: TestClient) -> None:
    tasks = task_ids(operator.get("/tasks").text)
    loops = re.findall(r'data-loop="([^"]+)"', operator.get("/loops").text)

    assert {"gym-ann", "studio-cy"} <= set(tasks) and len(tasks) == 6
    assert "gym-invoice/paid" in loops and "studio-lease/signed" in loops
    assert task_ids(operator.get("/tasks", params={"tenant": STUDIO}).text) == ["studio-cy", "studio-lease"]
    assert rows_of_loops(operator.get("/loops", params={"tenant": STUDIO}).text) == [("loop", "studio-lease/signed")]
    assert operator.get("/tasks/gym-ann").status_code == 200
    assert operator.get("/tasks/studio-cy", params={"tenant": STUDIO}).status_code == 200


def test_a_batch_task_whose_id_has_a_slash_has_its_page_and_files(served: Served) -> None:
    served.publish(command("b", "task.batch", "2026-03-02T14:00:00Z", GYM, batch_id="spring", task_type="win_back",
                           title="Win back", confidence=0.95, contacts=[{"contact": "ann@gym.example"}], draft=DRAFT))
    browser = served.browser(GYM)

    assert '<a href="/tasks/spring%2F1">spring/1</a>' in browser.get("/tasks").text  # the id is one path segment
    for path in ("/tasks/spring%2F1", "/tasks/spring/1"):
        page = browser.get(path)
        assert page.status_code == 200 and "<h1>Win back: ann@gym.example</h1>" in page.text
    assert '<a href="/tasks/spring%2F1?file=progress.md#memory">' in page.text
    assert browser.get("/tasks/spring%2F1", params={"file": "progress.md"}).status_code == 200
    assert served.browser(STUDIO).get("/tasks/spring/1").status_code == 404


def test_a_task_page_links_a_plan_and_its_steps_within_the_tenant(served: Served) -> None:
    served.publish(command("p", "task.create", "2026-03-02T14:00:00Z", GYM, task_id="plan", title="Plan", confidence=0.95),
                   command("s", "task.add_subtask", "2026-03-02T14:00:00Z", GYM, parent_id="plan", task_id="plan-1",
                           title="Step one", requirement="required"))
    owner, operator = served.browser(GYM), served.browser(operator=True)

    assert '<a href="/tasks/plan-1">plan-1</a> (required, executing)' in owner.get("/tasks/plan").text
    assert '<a href="/tasks/plan">plan</a> (required subtask)' in owner.get("/tasks/plan-1").text
    assert '<a href="/tasks/plan-1?tenant=gym">plan-1</a>' in operator.get("/tasks/plan").text


def test_pages_carry_no_script_or_inline_style_and_the_csp_refuses_them(served: Served) -> None:
    answer = served.client().get("/login")
    assert answer.headers["content-security-policy"] == web_app.SECURITY_HEADERS["Content-Security-Policy"]
    assert "script-src" not in answer.headers["content-security-policy"]  # default-src 'self': no inline script
    web = Path(web_app.__file__).parent
    for template in (web / "templates").glob("*.html"):
        text = template.read_text()
        assert "<script" not in text and "style=" not in text, template.name
    assert [path.name for path in (web / "static").iterdir()] == ["style.css"]
