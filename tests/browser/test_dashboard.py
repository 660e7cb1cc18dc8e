"""The owner's dashboard in headless Chromium, as an owner uses it: logging in with a key, approving a task from the
review queue, guiding an escalated task, reading a task's timeline and the scorecard's chart; and another tenant's
owner seeing none of it."""

from __future__ import annotations

import re
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Shoot, Site, for_readme
from tests.web.two_gyms import A, A_CONTACTS, A_IDS, A_TITLES, B, B_REVIEW, ESCALATED, LOOP, REVIEW, TIMELINE

TOOK_EFFECT = "took effect"


def log_in(page: Page, key: str, path: str = "/") -> None:
    """Opens a page behind the login and logs in through the form it is sent to, as a person would."""
    page.goto(path)
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(re.escape(path) + "$"))


def item(page: Page, item_id: str) -> Locator:
    return page.locator(f'article.item[data-id="{item_id}"]')


def expect_took_effect(page: Page) -> None:
    """The result page a form redirects to says the command was processed (embedded: before the redirect)."""
    expect(page).to_have_url(re.compile(r"/commands/[^/]+$"))
    expect(page.locator("p.result")).to_have_attribute("data-status", TOOK_EFFECT)


def test_an_owner_logs_in_with_a_key_and_sees_what_waits(page: Page, site: Site, shoot: Shoot) -> None:
    page.goto("/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    shoot(page, "login")
    log_in(page, site.keys[A])
    cookie = next(c for c in page.context.cookies() if c["name"] == "loopline_session")
    assert cookie["secure"] and cookie["httpOnly"], cookie  # Secure, yet sent to http://127.0.0.1
    expect(page.get_by_role("heading", level=1)).to_have_text("Needs attention")
    expect(item(page, ESCALATED).locator("h2")).to_contain_text("Check in on Leo")
    expect(item(page, ESCALATED)).to_have_attribute("data-kind", "task")
    for_readme(shoot(page, "needs-attention"), "dashboard.png")


def test_approving_a_task_from_the_review_queue_moves_it(page: Page, site: Site, shoot: Shoot) -> None:
    log_in(page, site.keys[A])
    waiting = item(page, REVIEW)
    expect(waiting).to_be_visible()
    waiting.get_by_role("button", name="Approve", exact=True).click()
    expect_took_effect(page)
    shoot(page, "result")
    page.get_by_role("link", name="Back to what needs attention").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Needs attention")
    expect(item(page, REVIEW)).to_have_count(0)
    shoot(page, "needs-attention")
    page.goto(f"/tasks/{REVIEW}")
    expect(page.locator("dl.facts")).to_contain_text("ready")
    shoot(page, "task")


def test_guidance_given_to_an_escalated_task_reaches_it(page: Page, site: Site, shoot: Shoot) -> None:
    guidance = "Tell Leo a friend's first class is free"
    log_in(page, site.keys[A])
    escalated = item(page, ESCALATED)
    expect(escalated.locator("h2")).to_contain_text("Check in on Leo")
    escalated.locator('textarea[name="guidance"]').fill(guidance)
    escalated.get_by_role("button", name="Give guidance").click()
    expect_took_effect(page)
    shoot(page, "result")
    page.goto(f"/tasks/{ESCALATED}")
    expect(page.locator("#timeline")).to_contain_text(guidance)
    shoot(page, "task")


def test_a_tasks_timeline_shows_each_decision_with_its_confidence(page: Page, site: Site, shoot: Shoot) -> None:
    log_in(page, site.keys[A], "/tasks")
    row = page.locator(f'tr[data-task="{TIMELINE}"]')
    expect(row).to_contain_text("completed")
    shoot(page, "tasks")
    row.locator("td").first.get_by_role("link").click()
    expect(page).to_have_url(re.compile(f"/tasks/{TIMELINE}$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Bring Maya back")
    entries = page.locator("#timeline li.event")
    expect(entries.first).to_be_visible()
    assert entries.count() >= 5, entries.all_inner_texts()
    decision = entries.and_(page.locator('[data-event="Task.DecisionRecorded"]')).first
    expect(decision).to_contain_text("confidence 0.80")  # the offline policy's first touch, with its reasoning:
    expect(decision).to_contain_text("Offline template for tone friendly_checkin")
    shoot(page, "task")


def test_the_scorecard_draws_its_chart(page: Page, site: Site, shoot: Shoot) -> None:
    log_in(page, site.keys[A], "/scorecard")
    chart = page.locator("svg.chart")
    expect(chart).to_be_visible()
    expect(chart).to_have_attribute("aria-label", "Outcomes per type, this period against the last")
    bars = chart.locator("rect.bar")  # web/svg.py's bars, apart from the legend's swatches
    expect(bars.first).to_be_visible()
    heights = [float(bars.nth(n).get_attribute("height") or 0) for n in range(bars.count())]
    assert sum(height > 0 for height in heights) >= 2, heights  # Maya retained, Omar's payment recovered
    shoot(page, "scorecard")


def test_the_loops_page_lists_the_reply_awaited(page: Page, site: Site, shoot: Shoot) -> None:
    log_in(page, site.keys[A], "/loops")
    expect(page.locator("tr.loop").filter(has_text=LOOP)).to_be_visible()
    shoot(page, "loops")


def test_another_tenant_sees_none_of_it(page: Page, site: Site, shoot: Shoot) -> None:
    log_in(page, site.keys[B])
    expect(item(page, B_REVIEW)).to_be_visible()
    for path, name in (("/", "needs-attention"), ("/tasks", "tasks"), ("/loops", "loops"),
                       ("/scorecard", "scorecard")):
        assert page.goto(path).status == 200, path
        html = page.content()  # the markup, so a hidden field or a link's address counts too
        leaked = [shown for shown in (A, *A_IDS, *A_TITLES, *A_CONTACTS) if shown in html]
        assert not leaked, f"{path} shows gym A's {leaked}"
        shoot(page, name)
    for task_id, title in zip(A_IDS, A_TITLES):
        answer = page.goto(f"/tasks/{task_id}")
        assert answer.status == 404, f"/tasks/{task_id} answered {answer.status} to gym B"
        expect(page.locator("main")).not_to_contain_text(title)
    shoot(page, "other-tenants-task")
