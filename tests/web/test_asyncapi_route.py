"""`/docs/asyncapi` serves the document `loopline asyncapi` prints, to a holder of a key."""

from __future__ import annotations

from loopline.adapters.asyncapi import asyncapi_document
from tests.web.conftest import Served


def test_a_key_holder_reads_the_asyncapi_document_and_an_anonymous_visitor_is_sent_to_log_in(served: Served) -> None:
    answer = served.api("acme").get("/docs/asyncapi")
    assert answer.status_code == 200
    assert answer.json() == asyncapi_document(served.system.settings)
    assert "loopline.commands" in answer.json()["channels"]
    anonymous = served.client().get("/docs/asyncapi")
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login?next=/docs/asyncapi"
