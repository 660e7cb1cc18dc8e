"""The offline policy: a draft for every tone, a keyword classifier for replies, the same answer every time."""

from __future__ import annotations

import pytest

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.task_types import CADENCES, TASK_TYPES
from loopline.domain.tenant import TenantSettings
from loopline.processors.model.tools import validate
from loopline.processors.ports import DecisionRequest, ModelUnavailable, Prompt

GYM = TenantSettings.from_dict({"profile": {"display_name": "CrossFit Renegade", "typical_greeting": "Hey!",
                                            "sign_off": "Coach Mike"}})
TONES = sorted({tone for cadence in CADENCES.values() for tone in cadence.tones})
policy = OfflinePolicy()


def request(point: str = "draft_message", *, tone: str | None = "friendly_checkin", reply: str | None = None,
            task_type: str = "churn_risk", settings: TenantSettings = GYM, contact_name: str | None = "Sam",
            purpose: str = "touch") -> DecisionRequest:
    return DecisionRequest(
        point=point, tenant="gym", task_ref="t-7", task_type=task_type, purpose=purpose, contact="sam@example.com",
        contact_name=contact_name, touch=1, tone=tone, reply_text=reply, conversation=(),
        budget_left={"messages": 3, "turns": 6, "days": 14}, outcomes=TASK_TYPES[task_type].outcome_codes,
        settings=settings, prompt=Prompt(system="s", messages=(), digest="abc"),
    )


@pytest.mark.parametrize("tone", [*TONES, "followup"])
def test_every_tone_drafts_a_letter_in_the_tenants_words(tone: str) -> None:
    decision = policy.decide(request(tone=tone, purpose="followup" if tone == "followup" else "touch"))

    assert validate("draft_message", decision.output) == decision.output
    body = decision.output["body"]
    assert body.startswith("Hey Sam!\n\n") and body.endswith("\n\nCoach Mike")
    assert "t-7" not in body and "churn" not in body.lower()
    assert (decision.adapter, decision.model, decision.prompt_digest) == ("offline", "offline-policy-v1", "abc")
    assert tone in decision.reasoning


def test_tones_draft_different_messages() -> None:
    bodies = {policy.decide(request(tone=tone)).output["body"] for tone in TONES}
    assert len(bodies) == len(TONES)


def test_without_a_profile_or_a_name_the_greeting_and_sign_off_are_neutral() -> None:
    decision = policy.decide(request(settings=TenantSettings(), contact_name=None))
    assert decision.output["body"].startswith("Hello,\n\n")
    assert decision.output["body"].endswith("\n\nThanks!")
    assert decision.output["subject"] == "Checking in"


@pytest.mark.parametrize(("reply", "decision", "outcome", "keyword"), [
    ("This is ridiculous, I was charged twice!", "escalate", None, "ridiculous"),
    ("Please unsubscribe me", "close", "opted_out", "unsubscribe"),
    ("Can I freeze my membership?", "escalate", None, "?"),
    ("Not interested anymore, I'm cancelling.", "close", "churned", "not interested"),
    ("Maybe, been really busy lately", "wait", None, "maybe"),
    ("Not sure yet", "wait", None, "not sure"),
    ("I'll be in on Tuesday for the 6am class!", "close", "verbal_commitment", "i'll be in"),
    ("Thanks, appreciate you reaching out", "reply", None, "thanks"),
])
def test_replies_are_classified_by_the_first_keyword_rule(reply: str, decision: str, outcome: str | None, keyword: str) -> None:
    answer = policy.decide(request("evaluate_reply", tone=None, reply=reply))

    assert answer.output["decision"] == decision
    assert answer.output.get("outcome") == outcome
    assert f'"{keyword}"' in answer.reasoning
    assert validate("evaluate_reply", answer.output) == answer.output


def test_a_vague_reply_waits_three_days_with_middling_confidence() -> None:
    answer = policy.decide(request("evaluate_reply", reply="yeah maybe"))
    assert (answer.output["wait_days"], answer.confidence) == (3, 0.6)


def test_a_reply_without_any_keyword_goes_to_the_owner_with_low_confidence() -> None:
    answer = policy.decide(request("evaluate_reply", reply="Hmm."))
    assert (answer.output["decision"], answer.confidence) == ("escalate", 0.3)


def test_a_thank_you_is_answered_in_the_tenants_words() -> None:
    answer = policy.decide(request("evaluate_reply", reply="Thank you!"))
    assert answer.output["reply_body"].startswith("Hey Sam!") and answer.output["reply_body"].endswith("Coach Mike")


def test_a_commitment_closes_with_a_positive_outcome_the_type_defines() -> None:
    for name in ("win_back", "lead_followup", "ad_hoc"):
        answer = policy.decide(request("evaluate_reply", reply="Yes, see you Saturday", task_type=name))
        kind = TASK_TYPES[name].outcome(answer.output["outcome"])
        assert kind is not None and kind.kind == "positive"
        assert answer.output["outcome"] not in ("self_resolved", "owner_handled")


def test_a_close_the_type_has_no_outcome_for_escalates() -> None:
    answer = policy.decide(request("evaluate_reply", reply="not interested", task_type="ad_hoc"))  # ad_hoc has no negative
    assert answer.output["decision"] == "escalate"


def test_the_same_request_always_gets_the_same_decision() -> None:
    for point, reply in (("draft_message", None), ("evaluate_reply", "maybe next week")):
        first, second = policy.decide(request(point, reply=reply)), OfflinePolicy().decide(request(point, reply=reply))
        assert first == second


@pytest.mark.parametrize("confidence", [float("nan"), float("inf"), 1.5, -0.1, "0.8"])
def test_an_answer_whose_confidence_is_no_number_from_0_to_1_is_refused_as_off_schema(
    confidence: object, monkeypatch: pytest.MonkeyPatch,
) -> None:
    drafted = OfflinePolicy._draft
    monkeypatch.setattr(OfflinePolicy, "_draft", lambda self, req: {**drafted(self, req), "confidence": confidence})
    with pytest.raises(ModelUnavailable, match="off the draft_message schema: draft_message.confidence"):
        policy.decide(request())
