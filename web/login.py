"""Logging in to the dashboard with an API key (a signed cookie names a server-side session, never the key) and out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from loopline.web.auth import csrf_checked, keys_of, log_in, log_out, session_principal
from loopline.web.pages import render

router = APIRouter(include_in_schema=False)


def _safe_next(path: str | None) -> str:
    """Only a path on this site (never `//host` or a URL), so a login link cannot send the owner elsewhere."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return path


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> HTMLResponse:  # noqa: A002 - the query parameter's name
    return render(request, "login.html", session_principal(request), next_path=_safe_next(next))


@router.post("/login")
def login(request: Request, form: dict[str, Any] = Depends(csrf_checked)) -> Any:
    request.app.state.rate_limiter.check(f"login:{request.client.host if request.client else '-'}")
    key = keys_of(request).find(str(form.get("key") or "").strip())
    next_path = _safe_next(str(form.get("next") or "/"))
    if key is None:
        return render(request, "login.html", None, status_code=401, next_path=next_path,
                      error="That key is not a live API key: check it was copied whole, or create one with "
                            "`loopline keys create --tenant T`.")
    log_in(request, key)
    return RedirectResponse(next_path, status_code=303)


@router.post("/logout")
def logout(request: Request, _form: dict[str, Any] = Depends(csrf_checked)) -> RedirectResponse:
    log_out(request)
    return RedirectResponse("/login", status_code=303)
