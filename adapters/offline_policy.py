"""The `DecisionModel` adapter used when no ANTHROPIC_API_KEY is set: deterministic, so the demo and
the tests run anywhere and the same request always gets the same decision.

Drafts come from one template per cadence tone (plus "followup" for an email loop gone unanswered),
greeting the contact by the name a message gave (never by an address, a task title or an id)
in the tenant's own greeting and sign-off. Replies go through a plain keyword classifier over the contact's
own words (quoted lines dropped; lower case, accents dropped, whole words; English, German, French, Spanish and
Dutch); the first rule that matches decides:

| order | rule       | keywords (examples)                                  | decision                       | confidence |
|-------|------------|------------------------------------------------------|--------------------------------|------------|
| 1     | opt-out    | `domain/opt_out.py`: a bare STOP, unsubscribe, abmelden, désabonner, darme de baja, afmelden | close `opted_out` (else first negative) | 0.95 |
| 2     | away       | out of office, automatic reply, abwesend, en congés, fuera de la oficina, afwezig | wait 3 days     | 0.8        |
| 3     | anger      | angry, furious, terrible, ridiculous, inadmissible   | escalate                       | 0.9        |
| 4     | complaint  | complaint, refund, disappointed, rembours*, queja    | escalate                       | 0.9        |
| 5     | question   | a "?", can i, do you, how much, what time, when is    | escalate (the owner answers)   | 0.85       |
| 6     | refusal    | not interested, no thanks, cancel, kein interesse, non merci | close with the first negative outcome | 0.85 |
| 7     | vague      | maybe, busy, not sure, vielleicht, peut-être, misschien | wait 3 days                  | 0.6        |
| 8     | commitment | see you, i'll be there, count me in, ich komme, j'y serai, nos vemos, ik kom | close with the provisional positive outcome (else the first positive one a reply can earn: never one that needs evidence, `retained`, `recovered`) | 0.7 |
| 9     | thanks     | thanks, thank you, sounds good, danke, merci, gracias | reply with a short thank-you  | 0.7        |
| -     | none       | nothing above                                        | dont_know (the owner is asked) | 0.3        |

A bare "yes" commits to nothing ("Yes?", "yes I read it"): only a commitment closes as a win. `bench/offline_policy.py`
measures the table on the labelled replies of `tests/data/labelled_replies.jsonl`.

A close only ever names a code from the request's `outcomes`; with none of the wanted kind, the
reply escalates instead. An answer the owner's guidance asks for goes back to the owner: templates
cannot follow guidance, and `task.reply` sends the owner's own words.

A research task's report (seed 002 §31.4) analyses nothing: it lists the data the task was given in its context,
closing with the type's first positive outcome, or, given none, says so with its first neutral one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from loopline.domain.opt_out import opt_out_phrase, own_words
from loopline.domain.outreach import NEEDS_EVIDENCE
from loopline.domain.task_types import task_type
from loopline.domain.wording import greeting
from loopline.processors.model.tools import InvalidToolInput, validate
from loopline.adapters.offline_brain import OFFLINE_ANSWERS
from loopline.processors.ports import Conversation, Decision, DecisionRequest, ModelUnavailable, Reply

MODEL = "offline-policy-v1"
WAIT_DAYS = 3
NOT_EARNED_BY_A_REPLY = NEEDS_EVIDENCE | {"owner_handled"}
"""Positive outcomes a contact's reply cannot bring about (a fact shows them; the owner took over)."""


@dataclass(frozen=True)
class Template:
    subject: str
    lines: str


TEMPLATES: dict[str, Template] = {
    # standard
    "friendly_checkin": Template("Checking in", "Just checking in to see how you're doing. Is everything okay on your end?"),
    "direct_offer_help": Template(
        "Anything I can help with?",
        "I reached out a few days ago and wanted to follow up. If something has been getting in the way, "
        "is there anything I can do to help?"),
    "final_open_door": Template(
        "The door is always open",
        "This is my last note for now. No need to reply if now isn't the right time; we'd be glad to see you "
        "whenever it suits you."),
    # urgent
    "friendly_urgent": Template(
        "A quick one that needs your attention",
        "Something needs your attention soon, and I wanted to let you know right away. Could you get back to me "
        "when you have a moment?"),
    "direct_followup": Template(
        "Following up",
        "I'm following up on my message from the other day, as this is still open. Could you let me know how "
        "you'd like to handle it?"),
    "escalation_warning": Template(
        "Last reminder before I pass this on",
        "I haven't been able to reach you about this. If I don't hear back, I'll pass it to the team so someone "
        "can sort it out with you directly."),
    # patient
    "warm_checkin": Template("Thinking of you", "I hope things are going well. How have you been?"),
    "gentle_followup": Template(
        "Just a gentle follow-up",
        "No rush at all, I just wanted to follow up on my last note. Would a different time or day work better "
        "for you?"),
    "no_pressure_final": Template(
        "No pressure",
        "I won't keep filling your inbox. Whenever you're ready, just reply to this email and we'll pick it up "
        "from there."),
    # slow_burn
    "personal_note": Template("A quick personal note", "I wanted to drop you a personal note. How are things going?"),
    "different_angle": Template(
        "Something you might like",
        "I thought of you because there's something new here you might enjoy. Would you like me to tell you "
        "more?"),
    "final_door_open": Template(
        "Whenever you're ready",
        "This is my last message for a while. The door is always open, and we'd love to see you again whenever "
        "the time is right."),
    # a follow-up to a contact's silence, for a follow-through task's email loop
    "followup": Template("Following up", "Just following up on my earlier email. Would you have a moment to reply?"),
}



@dataclass(frozen=True)
class Rule:
    name: str
    decision: str
    confidence: float
    keywords: tuple[str, ...]


RULES: tuple[Rule, ...] = (
    Rule("opt-out", "close", 0.95, ()),
    Rule("away", "wait", 0.8, (
        "out of office", "out of the office", "automatic reply", "auto-reply", "autoreply", "on vacation",
        "on holiday", "parental leave", "away from my desk", "nicht im buro", "abwesen*", "automatische antwort",
        "im urlaub", "elternzeit", "dienstreise", "absente du bureau", "absent du bureau", "reponse automatique",
        "en conges", "message d'absence", "en deplacement", "conge maternite", "fuera de la oficina",
        "respuesta automatica", "de vacaciones", "de viaje", "baja por maternidad", "mensaje automatico", "afwezig*",
        "automatisch antwoord", "met vakantie", "niet op kantoor", "zwangerschapsverlof")),
    Rule("anger", "escalate", 0.9, ("angry", "furious", "terrible", "ridiculous", "worst", "scam", "awful", "hate",
                                    "unacceptable", "rude", "filthy", "inadmissible", "inaceptable", "onacceptabel",
                                    "unfreundlich", "desagreable", "grosero", "onvriendelijk")),
    Rule("complaint", "escalate", 0.9, ("complaint", "complain", "refund", "disappointed", "overcharged",
                                        "charged twice", "lawyer", "broken", "never heard back", "geld zuruck",
                                        "enttausch*", "kaputt", "beschwer*", "abgebucht", "rembours*", "decu", "decue",
                                        "en panne", "reclamation", "preleve", "reembolso", "decepcionad*", "rotas",
                                        "queja", "cobraron", "geld terug", "teleurgesteld", "kapot", "klacht",
                                        "afgeschreven")),
    Rule("question", "escalate", 0.85, ("?", "can i", "could i", "do you", "how much", "what time", "when is",
                                        "when are", "what are", "what's", "is there")),
    Rule("refusal", "close", 0.85, ("not interested", "no thanks", "no thank you", "cancel", "cancelling",
                                    "canceling", "cancelled", "quit", "not coming back", "kein interesse",
                                    "nein danke", "gekundigt", "komme nicht", "kein bedarf", "hore mit", "pas interesse",
                                    "non merci", "resilie", "ne reviendrai pas", "ne m'interesse plus", "j'arrete",
                                    "no me interesa", "no gracias", "cancele", "no voy a volver", "lo dejo", "ya no",
                                    "geen interesse", "nee dank", "opgezegd", "niet meer terug", "ik stop met",
                                    "geen tijd meer")),
    Rule("vague", "wait", 0.6, ("maybe", "busy", "not sure", "might", "perhaps", "we'll see", "we will see",
                                "can't make it", "vielleicht", "viel los", "peut-etre", "occupe", "quizas", "tal vez",
                                "ocupado", "misschien", "druk")),
    Rule("commitment", "close", 0.7, ("see you", "i'll be there", "i will be there", "i'll come", "i will come",
                                      "i'll be in", "i will be in", "count me in", "sign me up", "booked",
                                      "ich komme", "bin dabei", "bis dann", "bis montag", "bis dienstag", "bis mittwoch",
                                      "bis donnerstag", "bis freitag", "bis samstag", "bis sonntag", "angemeldet",
                                      "je serai la", "j'y serai", "je viens", "je passe", "inscrivez-moi",
                                      "c'est reserve", "alli estare", "ahi estare", "cuenten conmigo", "nos vemos",
                                      "reserve", "paso manana", "apuntame", "voy el", "ik ben er", "ik kom", "tot dan",
                                      "geboekt", "schrijf me maar in")),
    Rule("thanks", "reply", 0.7, ("thanks", "thank you", "sounds good", "great", "appreciate", "danke", "merci",
                                  "gracias", "bedankt", "dank je")),
)
"""The keyword table of the module docstring, in the order the rules are tried; keywords are written as replies
are read (lower case, no accents), and one ending in "*" matches any word it starts."""


def _pattern(keyword: str) -> re.Pattern[str]:
    if not keyword[0].isalnum():
        return re.compile(re.escape(keyword))
    if keyword.endswith("*"):
        return re.compile(rf"\b{re.escape(keyword[:-1])}\w*")
    return re.compile(rf"\b{re.escape(keyword)}\b")


_PATTERNS = [(rule, keyword, _pattern(keyword)) for rule in RULES for keyword in rule.keywords]
OPT_OUT = RULES[0]


def classify(text: str) -> tuple[Rule | None, str | None]:
    """The first rule with a keyword in the contact's own words of `text`, and that keyword; (None, None) when none
    matches. An opt-out is decided by `domain/opt_out.py` before any keyword rule."""
    phrase = opt_out_phrase(text)
    if phrase is not None:
        return OPT_OUT, phrase
    words = own_words(text)
    for rule, keyword, pattern in _PATTERNS:
        if pattern.search(words):
            return rule, keyword
    return None, None


class OfflinePolicy:
    name = "offline"
    model = MODEL

    def converse(self, request: Conversation) -> Reply:
        """A brain call answered by its kind's deterministic function (adapters/offline_brain.py)."""
        answer = OFFLINE_ANSWERS.get(request.kind)
        if answer is None:
            raise ModelUnavailable(f"the offline policy has no answer for {request.kind!r}; known: {', '.join(OFFLINE_ANSWERS)}")
        return Reply(adapter=self.name, model=MODEL, content=tuple(answer(request)), prompt_digest=request.prompt.digest,
                     input_tokens=0, output_tokens=0)

    def decide(self, request: DecisionRequest) -> Decision:
        if request.point == "draft_message":
            output = self._draft(request)
        elif request.point == "evaluate_reply":
            output = self._evaluate(request)
        elif request.point == "write_report":
            output = _report(request)
        else:
            raise ModelUnavailable(f"the offline policy has no answer for decision point {request.point!r}")
        try:
            output = validate(request.point, output)
        except InvalidToolInput as error:
            raise ModelUnavailable(f"the offline policy answered off the {request.point} schema: {error}") from None
        return Decision(
            point=request.point, adapter=self.name, model=self.model, output=output,
            confidence=output["confidence"], reasoning=output["reasoning"], prompt_digest=request.prompt.digest,
            input_tokens=0, output_tokens=0,
        )

    def _draft(self, request: DecisionRequest) -> dict[str, Any]:
        tone = "followup" if request.purpose == "followup" else request.tone
        template = TEMPLATES.get(tone or "")
        if template is None:
            raise ModelUnavailable(f"the offline policy has no template for tone {tone!r}")
        profile = request.settings.profile
        subject = template.subject
        if profile.display_name and request.purpose != "followup":
            subject = f"{subject} · {profile.display_name}"
        return {
            "subject": subject, "body": _letter(request, template.lines), "confidence": 0.8,
            "reasoning": f"Offline template for tone {tone} (touch {request.touch or 1}); no model was asked.",
        }

    def _evaluate(self, request: DecisionRequest) -> dict[str, Any]:
        if request.purpose == "guidance":  # templates cannot follow the owner's words; the owner can send them
            return {"decision": "escalate", "confidence": 0.9,
                    "reasoning": "The offline policy writes from templates and cannot answer with your guidance: "
                    "send your answer in your own words with task.reply, or configure a model."}
        rule, keyword = classify(request.reply_text or "")
        if rule is None:  # §18.3: the policy cannot tell what the reply means, so it says so and asks
            return {"decision": "dont_know", "confidence": 0.3,
                    "question": "What does the contact mean, and what should I answer?",
                    "reasoning": "No keyword of the offline classifier matched the reply; the owner should read it."}
        because = f'The reply contains "{keyword}" ({rule.name} rule)'
        if rule.decision == "wait":
            return {"decision": "wait", "wait_days": WAIT_DAYS, "confidence": rule.confidence,
                    "reasoning": f"{because}: no commitment either way, so follow up in {WAIT_DAYS} days."}
        if rule.decision == "reply":
            return {"decision": "reply", "confidence": rule.confidence,
                    "reply_body": _letter(request, "Thanks for getting back to me, it's great to hear from you."),
                    "reasoning": f"{because}: a friendly acknowledgement answers it."}
        if rule.decision == "close":
            outcome = _outcome(request, rule)
            if outcome is None:
                return {"decision": "escalate", "confidence": rule.confidence,
                        "reasoning": f"{because}, but the task type has no outcome for it; the owner decides."}
            return {"decision": "close", "outcome": outcome, "confidence": rule.confidence,
                    "reasoning": f"{because}: closing as {outcome}."}
        return {"decision": "escalate", "confidence": rule.confidence,
                "reasoning": f"{because}: the owner should answer this one."}


def _report(request: DecisionRequest) -> dict[str, Any]:
    kind = task_type(request.task_type)
    data = request.context or {}
    wanted = "positive" if data else "neutral"
    outcome = next((o.code for o in kind.goal.outcomes if o.kind == wanted and o.code in request.outcomes),
                   request.outcomes[0])
    if not data:
        content = "The task was given no data to work from: give it in the task's context, or configure a model."
    else:
        rows = "\n".join(f"| {key} | {json.dumps(value, ensure_ascii=False, sort_keys=True)} |"
                         for key, value in sorted(data.items()))
        content = ("The offline policy analyses nothing; these are the data the task was given, for the owner to read."
                   f"\n\n| item | value |\n|---|---|\n{rows}\n")
    return {"title": kind.label, "content": content, "outcome": outcome, "confidence": 0.8,
            "reasoning": f"Offline report: {len(data)} item(s) of context listed; no model was asked."}


def _outcome(request: DecisionRequest, rule: Rule) -> str | None:
    """The outcome code of the request's spectrum that a closing rule means, or None."""
    kind_of = {o.code: o for o in task_type(request.task_type).goal.outcomes}
    codes = [code for code in request.outcomes if code in kind_of]
    if rule.name == "commitment":
        positive = [code for code in codes if kind_of[code].kind == "positive" and code not in NOT_EARNED_BY_A_REPLY]
        provisional = [code for code in positive if kind_of[code].provisional]
        return (provisional or positive or [None])[0]
    negative = [code for code in codes if kind_of[code].kind == "negative"]
    if rule.name == "opt-out" and "opted_out" in negative:
        return "opted_out"
    return next((code for code in negative if code != "opted_out"), negative[0] if negative else None)


def _letter(request: DecisionRequest, lines: str) -> str:
    """Greeting, text and sign-off in the tenant's words."""
    profile = request.settings.profile
    return f"{_greeting(profile.typical_greeting, request.contact_name)}\n\n{lines}\n\n{_sign_off(profile)}"


def _greeting(typical: str | None, name: str | None) -> str:
    """The tenant's greeting ("Hey!") with the contact's name in it ("Hey Sam!"), or "Hi Sam," by default."""
    if not typical:
        return greeting(name)
    words = typical.rstrip(",!. ")
    mark = typical[len(words):].strip()[:1] or ","
    return f"{words} {name}{mark}" if name else f"{words}{mark}"


def _sign_off(profile: Any) -> str:
    if profile.sign_off:
        return profile.sign_off
    if profile.owner_first_name:
        return profile.owner_first_name
    return f"The {profile.display_name} team" if profile.display_name else "Thanks!"
