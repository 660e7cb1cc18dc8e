"""The ASGI app `loopline serve` runs: the dashboard, the ingestion API and the operations endpoints over one
`System` (its read models to read, its log to publish to), for either deployment."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from importlib.metadata import version
from typing import Any
from urllib.parse import quote

import anyio
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.sessions import SessionMiddleware

from loopline.adapters.api_keys import ApiKeys
from loopline.adapters.sessions import CAP, Sessions
from loopline.adapters.config import InvalidSetting
from loopline.runtime.system import System
from loopline.web.auth import LoginRequired, session_principal
from loopline.web.limits import DEFAULT_MAX_BODY, DEFAULT_RATE, RateLimiter
from loopline.web.pages import render
from loopline.web.publishing import Publisher
from loopline.web.request_log import RequestLog
from loopline.web.routes import ROUTERS

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True)
class ServeOptions:
    max_body: int = DEFAULT_MAX_BODY
    rate_per_minute: int = DEFAULT_RATE
    secure_cookies: bool = True
    """The session cookie is `Secure` (sent over HTTPS only; browsers also send it to http://127.0.0.1 and
    localhost). `--insecure-cookies` is for a trial over plain HTTP on another host."""

    @classmethod
    def load(cls, environ: dict[str, str] | None = None, *, secure_cookies: bool = True) -> ServeOptions:
        values = os.environ if environ is None else environ
        return cls(max_body=_positive(values, "LOOPLINE_HTTP_MAX_BODY", DEFAULT_MAX_BODY),
                   rate_per_minute=_positive(values, "LOOPLINE_HTTP_RATE_LIMIT", DEFAULT_RATE),
                   secure_cookies=secure_cookies)


def _positive(values: Any, name: str, default: int) -> int:
    text = values.get(name)
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise InvalidSetting(f"{name}={text!r}: give a whole number above 0 (default {default})")
    return int(text)


def create_app(system: System, options: ServeOptions = ServeOptions()) -> FastAPI:
    # The OpenAPI document is served at /openapi.json; FastAPI's Swagger and ReDoc pages load scripts from a CDN,
    # which the pages' Content-Security-Policy (and a closed network) refuses, so they are not offered.
    producer = _faststream_producer(system)
    app = FastAPI(title="Loopline", version=version("loopline"), docs_url=None, redoc_url=None,
                  lifespan=_connected(producer),
                  description="The owner's dashboard and the HTTP edge of Loopline: ingestion, webhooks, operations.")
    keys = ApiKeys(system.ledger_engine)
    app.state.system, app.state.keys, app.state.options = system, keys, options
    app.state.sessions = sessions = Sessions(system.ledger_engine)
    # Requests run in anyio's worker threads (sync routes, or run_in_threadpool), whence the async producer is called.
    app.state.publisher = Publisher(system, append=(
        None if producer is None else lambda messages, source: anyio.from_thread.run(producer.append, messages, source)
    ))
    app.state.rate_limiter = RateLimiter(options.rate_per_minute)
    app.add_middleware(SessionMiddleware, secret_key=sessions.cookie_secret(),
                       session_cookie="loopline_session", max_age=int(CAP.total_seconds()), same_site="lax",
                       https_only=options.secure_cookies)
    app.add_middleware(RequestLog)  # outermost: it times and logs every answer, the session's and the errors' too
    app.mount("/static", StaticFiles(directory=str(Path(__file__).parent / "static")), name="static")
    for router in ROUTERS:
        app.include_router(router)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    app.add_exception_handler(LoginRequired, _to_login)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    return app


def _faststream_producer(system: System) -> Any:
    """At scale, serve appends through faststream's KafkaBroker (the publishers the AsyncAPI document describes);
    embedded, the log is the event store."""
    if not system.is_scale:
        return None
    from loopline.adapters.kafka_log import Topics
    from loopline.adapters.kafka_publish import FaststreamPublisher

    settings = system.settings
    return FaststreamPublisher(str(settings.kafka), Topics(settings.kafka_topic_prefix), settings.connect_timeout)


def _connected(producer: Any) -> Any:
    """The app's lifespan: the producer connected while the app serves."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if producer is not None:
            await producer.start()
        try:
            yield
        finally:
            if producer is not None:
                await producer.close()

    return lifespan


def wants_json(request: Request) -> bool:
    """The API, the operations endpoints and clients asking for JSON get JSON errors; the dashboard gets a page."""
    path = request.url.path
    return (path.startswith(("/v1/", "/docs", "/metrics", "/healthz", "/readyz", "/openapi"))
            or "application/json" in request.headers.get("accept", ""))


async def _to_login(request: Request, error: Exception) -> Response:
    assert isinstance(error, LoginRequired)
    return RedirectResponse(f"/login?next={quote(error.next_path, safe='/')}", status_code=303)


def _http_error(request: Request, error: Exception) -> Response:
    """A plain function, as `_invalid_request`: Starlette runs it in its threadpool, since the page's nav looks the
    session up in the database, which must not block the event loop."""
    assert isinstance(error, HTTPException)
    if wants_json(request):
        return JSONResponse({"error": error.detail}, status_code=error.status_code, headers=error.headers)
    titles = {401: "Not logged in", 403: "Not allowed", 404: "Not found", 413: "Too large", 429: "Too many requests"}
    return render(request, "error.html", session_principal(request), status_code=error.status_code,
                  title=titles.get(error.status_code, "Something went wrong"), detail=error.detail)


def _invalid_request(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    problems = [f"{'.'.join(str(part) for part in e['loc'][1:]) or e['loc'][0]}: {e['msg']}" for e in error.errors()]
    if wants_json(request):
        return JSONResponse({"error": "; ".join(problems), "problems": problems}, status_code=422)
    return render(request, "error.html", session_principal(request), status_code=400,
                  title="That request was not understood", detail="; ".join(problems))
