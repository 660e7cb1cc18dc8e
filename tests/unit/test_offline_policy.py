"""The offline policy: a draft for every tone, a keyword classifier for replies, the same answer every time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.outreach import NEEDS_EVIDENCE
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


def test_a_reply_without_any_keyword_is_one_the_policy_says_it_does_not_know_and_asks_about() -> None:
    answer = policy.decide(request("evaluate_reply", reply="Hmm."))
    assert (answer.output["decision"], answer.confidence) == ("dont_know", 0.3)
    assert answer.output["question"] and validate("evaluate_reply", answer.output) == answer.output


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


LABELLED = [json.loads(line) for line in (Path(__file__).parents[1] / "data" / "labelled_replies.jsonl").read_text("utf-8").splitlines()]
ACTING_TYPES = ("churn_risk", "win_back", "lead_followup")


def test_the_labelled_set_is_large_and_spans_five_languages_and_every_kind_of_reply() -> None:
    assert len(LABELLED) >= 200
    assert {row["language"] for row in LABELLED} >= {"en", "de", "fr", "es", "nl"}
    assert {row["label"] for row in LABELLED} == {
        "opt_out", "out_of_office", "question", "complaint", "positive", "negative", "ambiguous_yes"}


@pytest.mark.parametrize("task_type", ACTING_TYPES)
def test_every_opt_out_of_the_labelled_set_closes_as_an_opt_out(task_type: str) -> None:
    missed = []
    for row in (row for row in LABELLED if row["label"] == "opt_out"):
        output = policy.decide(request("evaluate_reply", tone=None, reply=row["text"], task_type=task_type)).output
        wanted = "opted_out" if "opted_out" in TASK_TYPES[task_type].outcome_codes else output.get("outcome")
        kind = TASK_TYPES[task_type].outcome(output.get("outcome") or "")
        if output["decision"] != "close" or output["outcome"] != wanted or kind is None or kind.kind != "negative":
            missed.append((row["text"], output["decision"]))
    assert missed == []


@pytest.mark.parametrize("task_type", ACTING_TYPES)
def test_only_a_clear_positive_of_the_labelled_set_closes_as_a_win_and_nothing_unclear_closes(task_type: str) -> None:
    wrong = []
    for row in LABELLED:
        output = policy.decide(request("evaluate_reply", tone=None, reply=row["text"], task_type=task_type)).output
        if output["decision"] != "close":
            continue
        kind = TASK_TYPES[task_type].outcome(output["outcome"])
        assert kind is not None
        if (kind.kind == "positive") != (row["label"] == "positive") or row["label"] not in ("positive", "negative", "opt_out"):
            wrong.append((row["label"], row["text"], output["outcome"]))
    assert wrong == []


@pytest.mark.parametrize("reply", ["yes", "Yes?", "YES", "Yes I got your email.", "Ja", "Oui", "Sí", "ok yes"])
def test_a_bare_yes_closes_nothing(reply: str) -> None:
    assert policy.decide(request("evaluate_reply", tone=None, reply=reply)).output["decision"] != "close"


def test_an_opt_out_is_read_before_any_other_rule() -> None:
    answer = policy.decide(request("evaluate_reply", tone=None, reply="STOP. This is ridiculous."))
    assert (answer.output["decision"], answer.output["outcome"]) == ("close", "opted_out")
    assert '"stop"' in answer.reasoning


def test_an_out_of_office_answer_waits_instead_of_thanking_an_auto_responder() -> None:
    answer = policy.decide(request("evaluate_reply", tone=None, reply="Thank you for your email. I am out of the office until Monday."))
    assert answer.output["decision"] == "wait"


@pytest.mark.parametrize("confidence", [float("nan"), float("inf"), 1.5, -0.1, "0.8"])
def test_an_answer_whose_confidence_is_no_number_from_0_to_1_is_refused_as_off_schema(
    confidence: object, monkeypatch: pytest.MonkeyPatch,
) -> None:
    drafted = OfflinePolicy._draft
    monkeypatch.setattr(OfflinePolicy, "_draft", lambda self, req: {**drafted(self, req), "confidence": confidence})
    with pytest.raises(ModelUnavailable, match="off the draft_message schema: draft_message.confidence"):
        policy.decide(request())


@pytest.mark.parametrize("task_type", (*ACTING_TYPES, "payment_recovery"))
def test_no_reply_of_the_labelled_set_closes_with_an_outcome_only_a_fact_shows(task_type: str) -> None:
    """A commitment on a win-back is `interested`, never `recovered`: a reactivation shows that, not words."""
    closed = {policy.decide(request("evaluate_reply", tone=None, reply=row["text"], task_type=task_type)).output.get("outcome")
              for row in LABELLED}
    assert closed & NEEDS_EVIDENCE == set()
    assert task_type != "win_back" or "interested" in closed
