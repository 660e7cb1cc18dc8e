"""What an ingestion request answers, line by line (README "Sending events over HTTP"): the lines accepted with
what became of them, the lines rejected with why, and the status that sums them up."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from loopline.runtime.publishing import Published

ACCEPTED, UNREADABLE_OR_INVALID, REFUSED_BY_THE_DOMAIN = 202, 400, 422


class AcceptedLine(BaseModel):
    line: int = Field(description="the line's number in the body, from 1")
    id: str = Field(description="the message's id")
    tenant: str
    type: str
    status: Literal["took effect", "set aside", "already received", "queued"] = Field(
        description="`took effect`: processed now (embedded); `set aside`: its step kept failing, parked to retry "
                    "(`loopline parked list`); `already received`: a repeat of an id, ignored; `queued`: handed to "
                    "the workers (scale)")


class RejectedLine(BaseModel):
    line: int | None = Field(description="the line's number in the body, from 1")
    id: str | None = Field(default=None, description="the message's id, when the domain refused it")
    tenant: str | None = None
    type: str | None = None
    reason: str = Field(description="why, in the words `loopline publish` uses")


class LineWarning(BaseModel):
    line: int | None
    id: str
    tenant: str
    warning: str


class IngestReport(BaseModel):
    """Every line is either accepted or rejected; accepted lines are kept whatever happened to the others."""

    accepted: list[AcceptedLine] = Field(default_factory=list)
    rejected: list[RejectedLine] = Field(default_factory=list)
    warnings: list[LineWarning] = Field(default_factory=list)


class WebhookReport(IngestReport):
    ignored: str | None = Field(default=None, description="why the delivery made no signal (an event Loopline does "
                                "not follow); it is acknowledged so the producer does not retry it")


class ErrorBody(BaseModel):
    error: str


def _errors(*described: tuple[int, str]) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorBody, "description": words} for status, words in described}


LIMITS = ((413, "the body is larger than LOOPLINE_HTTP_MAX_BODY bytes (1 MiB by default)"),
          (429, "over the rate limit; Retry-After says when to try again"))
API_ERRORS = _errors((401, "no live API key"), *LIMITS)
WEBHOOK_ERRORS = _errors((401, "a missing or wrong signature, (Slack) a timestamp over 5 minutes old, or a tenant "
                               "without this producer's secret (one answer for all): nothing is recorded"),
                         (413, LIMITS[0][1]),
                         (429, "over the rate limit: of failed signatures from this client, or of deliveries to the "
                               "tenant from this producer; Retry-After says when to try again"))
LINE_ERRORS = {
    UNREADABLE_OR_INVALID: {"model": IngestReport, "description": "a line is unreadable or invalid (or names another "
                            "tenant than the key's, or is an operator's command sent with a tenant's key); the other "
                            "lines are listed and kept"},
    REFUSED_BY_THE_DOMAIN: {"model": IngestReport, "description": "every line was valid but the domain refused one "
                            "(e.g. an unknown task); the other lines are listed and kept"},
}


def report_of(done: Published) -> tuple[int, IngestReport]:
    """The per-line report of a publish and its status: 202 when every line was accepted, 400 when one was
    unreadable or invalid, else 422 when the domain refused one."""
    rejected = done.rejected()
    refused = {(item["tenant"], item["id"]) for item in rejected if "id" in item}
    repeats = set(done.appended.repeats)
    parked = {(o.step.message.tenant, o.step.message.ref) for o in done.own_outcomes() if o.parked}
    accepted = []
    for index, (message, line) in enumerate(zip(done.parsed.valid, done.parsed.valid_lines)):
        key = (message.tenant, message.ref)
        if index in repeats:
            status = "already received"
        elif key in refused:
            continue
        else:
            status = "queued" if done.scale else "set aside" if key in parked else "took effect"
        accepted.append(AcceptedLine(line=line, id=message.ref, tenant=message.tenant, type=message.type, status=status))
    report = IngestReport(accepted=accepted, rejected=[RejectedLine(**item) for item in rejected],
                          warnings=[LineWarning(**item) for item in done.warnings()])
    if any("id" not in item for item in rejected):
        return UNREADABLE_OR_INVALID, report
    return (REFUSED_BY_THE_DOMAIN if rejected else ACCEPTED), report
