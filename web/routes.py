"""Every router of the HTTP edge, in the order they are matched (each part of the app adds its one line)."""

from __future__ import annotations

from fastapi import APIRouter

from loopline.web import (
    asyncapi_route, attention, health, ingest, login, loops_page, metrics, scorecard_page, system_page, tasks_pages,
)

ROUTERS: list[APIRouter] = [
    health.router,
    login.router,
    ingest.router,
    attention.router,
    scorecard_page.router,
    tasks_pages.router,
    loops_page.router,
    system_page.router,
    metrics.router,
    asyncapi_route.router,
]
