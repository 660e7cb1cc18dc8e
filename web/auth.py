"""Who is asking: a tenant's or the operator's API key, as a Bearer header (the API) or a session cookie (the
dashboard, logged in with a key; the cookie names a server-side session), and the CSRF token every form carries.
Every query is scoped by the `Principal`: a tenant key sees only its tenant, and another tenant's id is answered as
if it did not exist."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, HTTPException, Request
from loopline.adapters.api_keys import ApiKeys, KeyRecord
from loopline.adapters.sessions import Sessions

NOT_FOUND = "not found"
"""What another tenant's id gets: the same answer as an id that does not exist, so ids cannot be probed."""


@dataclass(frozen=True)
class Principal:
    key_id: str
    tenant: str | None  # None for the operator
    operator: bool

    @classmethod
    def of(cls, key: KeyRecord) -> Principal:
        return cls(key.key_id, key.tenant, key.operator)

    def can_see(self, tenant: str | None) -> bool:
        return self.operator or (tenant is not None and tenant == self.tenant)

    def scope(self, asked: str | None = None) -> str | None:
        """The tenant a query is limited to: a tenant key's own (naming another is answered 404), or the tenant an
        operator names (None: all of them)."""
        if self.operator:
            return asked or None
        if asked and asked != self.tenant:
            raise HTTPException(404, NOT_FOUND)
        return self.tenant

    def check(self, tenant: str | None) -> None:
        """404 unless this key may see the tenant's data (a row found by an id the request named)."""
        if not self.can_see(tenant):
            raise HTTPException(404, NOT_FOUND)


class LoginRequired(Exception):
    """A page asked for without a live session: the app answers with a redirect to /login."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


def keys_of(request: Request) -> ApiKeys:
    return request.app.state.keys


def bearer_key(request: Request) -> KeyRecord | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return keys_of(request).find(token.strip())


def api_principal(request: Request) -> Principal:
    """The Bearer key's principal, within its rate limit; 401 without a live key, 429 over the limit."""
    key = bearer_key(request)
    if key is None:
        raise HTTPException(401, "send a live API key as `Authorization: Bearer <key>`; `loopline keys create "
                                 "--tenant T` makes one", headers={"WWW-Authenticate": "Bearer"})
    return _admitted(request, Principal.of(key))


def sessions_of(request: Request) -> Sessions:
    return request.app.state.sessions


def session_principal(request: Request) -> Principal | None:
    """The principal of the session cookie while its session is live (`adapters/sessions.py`: logged out, idle,
    too old or its key revoked, it is not, and the cookie's state is dropped)."""
    session_id = request.session.get("session")
    if not session_id:
        return None
    key = sessions_of(request).key_of(session_id)
    if key is None:
        request.session.clear()
        return None
    return Principal.of(key)


def page_principal(request: Request) -> Principal:
    """A dashboard page's principal: the session's, or a Bearer key's (for scripts); else off to /login."""
    principal = session_principal(request)
    if principal is None:
        key = bearer_key(request)
        if key is None:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            raise LoginRequired(target)
        principal = Principal.of(key)
    return _admitted(request, principal)


def _admitted(request: Request, principal: Principal) -> Principal:
    """The principal once within its key's rate limit (429 otherwise), kept for the request's log line."""
    request.app.state.rate_limiter.check(f"key:{principal.key_id}")
    request.state.principal = principal
    return principal


def operator_page(principal: Principal = Depends(page_principal)) -> Principal:
    if not principal.operator:
        raise HTTPException(403, "this page is the operator's: log in with an operator key "
                                 "(`loopline keys create --operator`)")
    return principal


def log_in(request: Request, key: KeyRecord) -> None:
    """Starts a session for the key with a fresh CSRF token (a new login never keeps an old session or its token)."""
    log_out(request)
    request.session.update({"session": sessions_of(request).start(key.key_id), "csrf": secrets.token_urlsafe(24)})


def log_out(request: Request) -> None:
    """Ends the session for good (a copy of its cookie is refused too) and drops the cookie's state."""
    session_id = request.session.get("session")
    if session_id:
        sessions_of(request).end(session_id)
    request.session.clear()


def csrf_token(request: Request) -> str:
    token = request.session.get("csrf")
    if not token:
        token = secrets.token_urlsafe(24)
        request.session["csrf"] = token
    return token


FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 64 * 1024
MAX_FORM_FIELDS = 50


async def csrf_checked(request: Request) -> dict[str, Any]:
    """A form POST's fields, once its `csrf` field is the session's token (403 otherwise). The form is read before
    any login, so it is capped first: URL-encoded only, a declared length of at most 64 KiB, at most 50 fields."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != FORM_TYPE:
        raise HTTPException(415, f"the dashboard's forms are sent as {FORM_TYPE}; send the form as the page does")
    length = request.headers.get("content-length", "")
    if not length.isdigit():
        raise HTTPException(411, "send the form with a Content-Length header")
    if int(length) > MAX_FORM_BYTES:
        raise HTTPException(413, f"a form may be at most {MAX_FORM_BYTES // 1024} KiB; shorten what was typed")
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS, max_part_size=MAX_FORM_BYTES)
    sent, expected = str(form.get("csrf") or ""), request.session.get("csrf") or ""
    if not expected or not hmac.compare_digest(sent, expected):
        raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page and submit it again")
    return {name: value for name, value in form.items() if name != "csrf"}
