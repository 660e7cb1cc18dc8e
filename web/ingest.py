"""Ingestion over HTTP: `POST /v1/messages` (one message or JSONL, with a tenant's key, validated as `loopline
publish` validates), and the webhooks of real producers — GitHub, Slack's Events API and a generic signed one —
authenticated by their signature with the tenant's secret (`tenant.configure`) and turned into signals
(`adapters/webhook_formats.py`). A request that fails its signature records nothing."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from loopline.adapters.clock import SystemClock
from loopline.adapters.webhook_formats import (
    BadSignature,
    Conversion,
    UnreadableWebhook,
    check_generic_signature,
    check_github_signature,
    check_slack_signature,
    generic_conversion,
    github_conversion,
    read_object,
    slack_conversion,
)
from loopline.domain.setting_checks import WEBHOOK_SOURCE, WEBHOOK_SOURCES_OF_THEIR_OWN
from loopline.domain.tenant import TenantSettings
from loopline.projections.tenants import unmasked_settings
from loopline.runtime.publishing import UnreadableText
from loopline.web.auth import Principal, api_principal
from loopline.web.ingest_report import (
    API_ERRORS,
    LINE_ERRORS,
    WEBHOOK_ERRORS,
    IngestReport,
    WebhookReport,
    report_of,
)
from loopline.web.limits import read_body, too_many

router = APIRouter(tags=["ingestion"])

Check = Callable[[str, bytes, Request], None]
"""A producer's signature check: the tenant's secret, the raw body, the request (for its headers)."""
Convert = Callable[[str, bytes, Request], Conversion]
"""A producer's conversion: the tenant, the raw body, the request."""


@router.post("/v1/messages", status_code=202, response_model=IngestReport, responses={**LINE_ERRORS, **API_ERRORS})
async def post_messages(request: Request, principal: Principal = Depends(api_principal)) -> JSONResponse:
    """One JSON message or JSONL (one a line), each for the key's tenant (an operator's key: any), validated and
    applied exactly as `loopline publish` does; answered line by line."""
    body = await read_body(request, request.app.state.options.max_body)
    if not body.strip():
        raise HTTPException(400, "the body holds no message: send one JSON message, or JSONL (one a line)")
    publisher = request.app.state.publisher
    try:
        done = await run_in_threadpool(publisher.publish, body, f"http key {principal.key_id}", principal.tenant,
                                        principal.key_id)
    except UnreadableText as error:
        raise HTTPException(400, f"{error}: send the body as UTF-8") from None
    status, report = report_of(done)
    return JSONResponse(report.model_dump(mode="json"), status_code=status)


@dataclass(frozen=True)
class Producer:
    """A producer's webhook: the header its signature comes in, the tenant setting holding its secret, its check and
    its conversion."""

    source: str
    header: str
    setting: str
    secret: Callable[[TenantSettings], str | None]
    check: Check
    convert: Convert

    def refusal(self, tenant: str) -> str:
        """The one answer to an unknown tenant, a tenant without the secret and a wrong signature alike, so a
        request learns nothing of which it was."""
        return (f"{self.header} does not verify with tenant {tenant}'s {self.setting}, or none is set "
                "(tenant.configure)")


def _github_check(secret: str, body: bytes, request: Request) -> None:
    check_github_signature(secret, body, request.headers.get("x-hub-signature-256"))


def _github_convert(tenant: str, body: bytes, request: Request) -> Conversion:
    payload = read_object(body, "GitHub webhooks")
    return github_conversion(tenant, request.headers.get("x-github-event"), request.headers.get("x-github-delivery"),
                             payload)


def _slack_check(secret: str, body: bytes, request: Request) -> None:
    check_slack_signature(secret, body, request.headers.get("x-slack-request-timestamp"),
                          request.headers.get("x-slack-signature"), SystemClock().now())


def _slack_convert(tenant: str, body: bytes, request: Request) -> Conversion:
    return slack_conversion(tenant, read_object(body, "the Slack Events API"))


def _generic_check(secret: str, body: bytes, request: Request) -> None:
    check_generic_signature(secret, body, request.headers.get("x-loopline-signature"))


GITHUB = Producer("github", "X-Hub-Signature-256", "github_webhook_secret",
                  lambda settings: settings.github_webhook_secret, _github_check, _github_convert)
SLACK = Producer("slack", "X-Slack-Signature (within 5 minutes of X-Slack-Request-Timestamp)", "slack_signing_secret",
                 lambda settings: settings.slack_signing_secret, _slack_check, _slack_convert)


def _generic(source: str) -> Producer:
    def convert(tenant: str, body: bytes, request: Request) -> Conversion:
        return generic_conversion(tenant, source, body, read_object(body, f"{source}'s webhook"))

    return Producer(source, "X-Loopline-Signature", f"webhook_secrets entry for {source}",
                    lambda settings: settings.webhook_secrets.get(source), _generic_check, convert)


NO_SECRET = secrets.token_hex(32)
"""What a signature is checked against for a tenant without the secret: no producer knows it."""

WEBHOOK_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "an answer the producer expects: GitHub's ping, Slack's URL verification (its challenge)"},
    400: {"model": WebhookReport, "description": "the body is not what the producer sends, or its signal is invalid"},
    **WEBHOOK_ERRORS,
}


@router.post("/v1/webhooks/github/{tenant}", status_code=202, response_model=WebhookReport, responses=WEBHOOK_RESPONSES)
async def github_webhook(tenant: str, request: Request) -> JSONResponse:
    """GitHub's webhooks, signed with the tenant's `github_webhook_secret` (`X-Hub-Signature-256`): a review
    submitted, a pull request merged or an issue closed becomes a `github.event` whose id is the delivery's."""
    return await _webhook(request, tenant, GITHUB)


@router.post("/v1/webhooks/slack/{tenant}", status_code=202, response_model=WebhookReport, responses=WEBHOOK_RESPONSES)
async def slack_webhook(tenant: str, request: Request) -> JSONResponse:
    """Slack's Events API, signed with the tenant's `slack_signing_secret` (v0, within 5 minutes): URL verification
    is answered, a person's message becomes a `slack.message` whose id is the event's."""
    return await _webhook(request, tenant, SLACK)


@router.post("/v1/webhooks/{source}/{tenant}", status_code=202, response_model=WebhookReport, responses=WEBHOOK_RESPONSES)
async def generic_webhook(source: str, tenant: str, request: Request) -> JSONResponse:
    """Any producer's JSON object, signed with the tenant's `webhook_secrets[source]` (`X-Loopline-Signature:
    sha256=<hex>`), becomes a `webhook.received` of `source`; its trigger, id and time come from the signed body
    (`trigger`; `source:` and `id`, else the body's SHA-256; `at`, required)."""
    if not WEBHOOK_SOURCE.fullmatch(source) or source in WEBHOOK_SOURCES_OF_THEIR_OWN:
        raise HTTPException(400, f"{source!r} is no webhook source: 1 to 64 letters, digits, - or _, and not "
                                 f"{' or '.join(WEBHOOK_SOURCES_OF_THEIR_OWN)}, which have routes of their own")
    return await _webhook(request, tenant, _generic(source))


async def _webhook(request: Request, tenant: str, producer: Producer) -> JSONResponse:
    """Failures are counted per client, tenant and producer (a shared proxy's forgeries for one tenant block no
    other); once their bucket is empty, that client's next request for them is 429 before its body or the tenant's
    settings are read, signed or not, until the bucket refills. A delivery is charged to the tenant and producer only once it
    verifies, so unsigned floods cannot use up a tenant's deliveries."""
    limiter = request.app.state.rate_limiter
    client = request.client.host if request.client else "-"
    failures = f"bad-signature:{client}:{tenant}:{producer.source}"
    # A client whose forgeries for this tenant and producer used up their bucket is refused before any work.
    too_many(limiter.wait(failures), limiter.per_minute, "failed signatures")
    body = await read_body(request, request.app.state.options.max_body)

    def read() -> TenantSettings:
        with request.app.state.system.projections.engine.connect() as conn:
            return unmasked_settings(conn, tenant)

    secret = producer.secret(await run_in_threadpool(read))
    try:
        # Checked with a stand-in when none is set, so the answer takes as long whether or not the tenant has one.
        producer.check(secret or NO_SECRET, body, request)
        if not secret:
            raise BadSignature(producer.refusal(tenant))
    except BadSignature:
        limiter.take(failures)
        raise HTTPException(401, producer.refusal(tenant)) from None
    limiter.check(f"webhook:{tenant}:{producer.source}")
    try:
        conversion = await run_in_threadpool(producer.convert, tenant, body, request)
    except UnreadableWebhook as error:
        raise HTTPException(400, str(error)) from None
    if conversion.answer is not None:
        return JSONResponse(conversion.answer, status_code=200)
    if conversion.message is None:
        return JSONResponse(WebhookReport(ignored=conversion.ignored).model_dump(mode="json"), status_code=202)
    line = json.dumps(conversion.message).encode()
    done = await run_in_threadpool(request.app.state.publisher.publish, line, f"webhook {producer.source}", tenant)
    status, report = report_of(done)
    return JSONResponse(WebhookReport(**report.model_dump()).model_dump(mode="json"), status_code=status)
