"""The `questions` read model on the embedded system: an open question shows where it stands on its ladder, and an
answer that picked no option leaves the open list for the list of answers to review."""

from __future__ import annotations

from pathlib import Path

from loopline.projections.questions import answers_for_review, open_questions
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish
from tests.integration.helpers import T0, TENANT, tick


def _rows(system: System) -> tuple[list[dict], list[dict]]:
    with system.projections.engine.connect() as conn:
        return open_questions(conn, TENANT), answers_for_review(conn, TENANT)


def test_an_open_question_climbs_and_a_free_text_answer_is_kept_for_review(home: Path) -> None:
    system = build_system(home)
    publish(system, command("c1", "task.create", T0, task_id="auth", title="Implement user authentication"),
            command("c2", "question.ask", T0, question_id="q1", task_id="auth", asker="Build agent",
                    stuck_on="Which OAuth provider", question="Auth0, Firebase or our own?",
                    options=["Auth0", "Firebase", "Custom"], blocked_tasks=["login", "sso"]))
    tick(system, "2026-03-13T12:30:00Z")
    [waiting], review = _rows(system)
    assert {key: waiting[key] for key in ("question_id", "task_id", "urgency", "last_step", "paused", "blocked")} == {
        "question_id": "q1", "task_id": "auth", "urgency": "urgent", "last_step": "resend_urgent", "paused": False,
        "blocked": 2}
    assert (waiting["options"], review) == (["Auth0", "Firebase", "Custom"], [])

    publish(system, command("c3", "question.answer", "2026-03-13T13:00:00Z", question_id="q1", answer="ask Dana"))
    waiting, [reviewed] = _rows(system)
    assert waiting == []
    assert (reviewed["answer_option"], reviewed["answer_text"], reviewed["answered_at"]) == (
        None, "ask Dana", "2026-03-13T13:00:00Z")
