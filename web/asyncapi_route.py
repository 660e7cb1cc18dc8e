"""`/docs/asyncapi`: the AsyncAPI document `loopline asyncapi` prints, for the topics this server publishes to.

JSON only: faststream's HTML view loads its renderer from a CDN, which the pages' Content-Security-Policy (and a
closed network) refuses. It takes a key (a session or a Bearer key), as it names the Kafka brokers."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request

from loopline.adapters.asyncapi import asyncapi_document
from loopline.web.auth import page_principal

router = APIRouter(tags=["documentation"])


@router.get("/docs/asyncapi", dependencies=[Depends(page_principal)])
def asyncapi(request: Request) -> dict[str, Any]:
    """The message contract (commands, signals, events, dead letters) as an AsyncAPI 3.0 document."""
    if find_spec("faststream") is None:
        raise HTTPException(501, "the AsyncAPI document needs faststream, part of the scale extra: "
                                 "pip install 'loopline[scale]'")
    return asyncapi_document(request.app.state.system.settings)
