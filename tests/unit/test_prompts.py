"""Prompt composition: every layer of seed 002 §23.2/§36.3 is there, and the digest names exactly the text."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import datetime, timezone

from loopline.domain import ids
from loopline.domain.conversation import Turn
from loopline.domain.task import Task
from loopline.domain.task_types import TASK_TYPES
from loopline.domain.tenant import TenantSettings
from loopline.processors.model.prompts import PendingRequest, Situation, compose_prompt, pending_request

SETTINGS = TenantSettings.from_dict({"name": "renegade", "profile": {
    "display_name": "CrossFit Renegade", "gym_type": "crossfit_box", "owner_first_name": "Mike", "vibe": "casual_friendly",
    "class_types": ["WOD", "Open Gym"], "current_promo": "Bring a friend free this month", "typical_greeting": "Hey!",
    "never_mention": ["weight loss"], "sign_off": "Coach Mike", "contact_info": {"phone": "555-0100"},
}})
AT = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
TOUCH_2 = Situation(
    point="draft_message", purpose="touch", kind=TASK_TYPES["churn_risk"], settings=SETTINGS,
    title="Sam has not been in for 18 days", description="Regular 6am member", context={"member_tenure_days": 200},
    contact="sam@example.com", contact_name="Sam", touch=2, touches=3, tone="direct_offer_help",
    conversation=(Turn("agent", AT, "Subject: Checking in\n\nHey Sam! All good?"),),
    budget_left={"messages": 2, "turns": 6, "days": 11},
    other_tasks=("[payment_recovery, critical] Card declined (waiting)",),
)


def test_a_draft_prompt_has_every_layer() -> None:
    prompt = compose_prompt(TOUCH_2)
    [message] = prompt.messages
    user = message["content"]

    assert "## Hard Rules" in prompt.system  # skills/_base.md
    assert "- Business: CrossFit Renegade (crossfit box)" in prompt.system  # the tenant profile
    assert '- Sign off as: "Coach Mike"' in prompt.system and "- NEVER mention: weight loss" in prompt.system
    assert "# Churn Risk" in prompt.system and "CrossFit Renegade's personal outreach coordinator" in prompt.system
    assert "{profile." not in prompt.system
    assert "GOAL: Re-engage a member" in prompt.system
    assert '- "verbal_commitment" (positive):' in prompt.system  # the outcome spectrum, §5.4
    assert "THE TASK" in user and "Sam has not been in for 18 days" in user and '"member_tenure_days": 200' in user
    assert "[payment_recovery, critical] Card declined" in user and "Do NOT mention" in user  # cross-task, §21.4
    assert "CONVERSATION SO FAR" in user and "agent:\nSubject: Checking in" in user
    assert "You have 2 messages remaining, 6 reasoning turns, and 11 days before this task expires" in user  # §8
    assert "Write touch 2 of 3 to Sam, tone: direct_offer_help" in user
    assert message["role"] == "user"


def test_the_system_prompt_is_cut_after_each_layer_most_stable_first_for_the_prompt_cache() -> None:
    prompt = compose_prompt(TOUCH_2)
    base, profile, skill, goal = prompt.system_blocks

    assert "".join(prompt.system_blocks) == prompt.system  # the blocks read exactly as the digest's text
    assert "## Hard Rules" in base and "CrossFit" not in base  # the same for every tenant
    assert profile.startswith("TENANT CONTEXT:") and "# Churn Risk" in skill and goal.startswith("GOAL:")


def test_a_reply_evaluation_quotes_the_reply_and_offers_the_four_decisions() -> None:
    prompt = compose_prompt(replace(TOUCH_2, point="evaluate_reply", purpose="reply", touch=None, tone=None,
                                    reply_text="Maybe next week?\nBusy at work."))
    user = prompt.messages[0]["content"]
    assert "Sam just replied:\n\n> Maybe next week?\n> Busy at work." in user
    assert all(f"`{decision}`" in user for decision in ("reply", "close", "escalate", "wait"))


def test_the_digest_is_the_sha256_of_what_the_model_reads_and_stable() -> None:
    prompt = compose_prompt(TOUCH_2)
    text = json.dumps({"system": prompt.system, "messages": list(prompt.messages)}, sort_keys=True, ensure_ascii=False)
    assert prompt.digest == hashlib.sha256(text.encode()).hexdigest()
    assert compose_prompt(TOUCH_2) == prompt
    assert compose_prompt(replace(TOUCH_2, budget_left={"messages": 1, "turns": 6, "days": 11})).digest != prompt.digest


def test_a_type_without_its_own_skill_file_gets_an_inline_prompt_and_a_new_task_says_nothing_was_sent() -> None:
    kind = replace(TASK_TYPES["churn_risk"], skill="no_such_skill.md")
    prompt = compose_prompt(replace(TOUCH_2, kind=kind, conversation=(), other_tasks=()))
    assert "# At-Risk Member (churn_risk): inline instructions" in prompt.system
    assert "Reach out to members showing signs of disengagement" in prompt.system
    assert "# Custom Task (ad_hoc)" not in prompt.system  # never another type's instructions
    assert "nothing has been sent or received yet" in prompt.messages[0]["content"]
    assert "CONTACT CONTEXT" not in prompt.messages[0]["content"]


def test_a_follow_through_task_without_budgets_leaves_the_budget_out() -> None:
    prompt = compose_prompt(replace(TOUCH_2, kind=TASK_TYPES["meeting_scheduling"], purpose="followup",
                                    budget_left={"messages": None, "turns": None, "days": None}))
    user = prompt.messages[0]["content"]
    assert "BUDGET" not in user
    assert "has not replied to the last email above" in user


def test_the_pending_request_is_the_last_one_neither_decided_nor_given_up() -> None:
    task = Task.create(
        id=ids.task_id("gym", "t1"), now=AT, tenant="gym", ref="t1", title="Book Rahul", description="",
        task_type="meeting_scheduling", status="waiting", expires_at=None, priority="medium",
        contact="rahul@example.com", confidence=0.8, context={}, reason="r",
    )
    for ref in ("r1", "r2", "r3"):
        task.request_decision(request_ref=ref, point="draft_message", purpose="followup", touch=None, tone=None,
                              loop_ref=f"{ref}/loop", reason="due", now=AT)
    task.fail_decision(request_ref="r3", attempt=1, error="down", retry_at=None, now=AT)
    task.fail_decision(request_ref="r2", attempt=1, error="down", retry_at=AT, now=AT)
    assert pending_request(task) == PendingRequest("r2", "draft_message", "followup", None, None, "r2/loop")
    task.request_decision(request_ref="r2", point="draft_message", purpose="followup", touch=None, tone=None,
                          loop_ref="r2/loop", reason="retry", attempt=2, now=AT)
    task.record_decision(request_ref="r2", attempt=2, point="draft_message", adapter="offline", model="m", decision="draft",
                         confidence=0.8, reasoning="r", prompt_digest="d", input_tokens=0, output_tokens=0, output={}, now=AT)
    assert pending_request(task).request_ref == "r1"  # type: ignore[union-attr]
