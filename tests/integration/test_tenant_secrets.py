"""Webhook secrets set with `tenant.configure`: readers see them masked, the HTTP edge reads them whole from the
`tenants` read model, and a rebuild restores them (tenants configured before they existed: test_stored_events.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.projections.tenants import find_tenant, list_tenants, unmasked_settings
from loopline.projections.timeline import timeline
from tests.conftest import build_system, command, publish
from tests.fixtures.stored_events import GYM

SECRETS = {"github_webhook_secret": "gh-s3cret", "slack_signing_secret": "sl-s3cret", "webhook_secrets": {"ci": "ci-s3cret"}}


def test_secrets_read_masked_everywhere_but_the_edge_and_a_rebuild_restores_them(home: Path) -> None:
    system = build_system(home)
    try:
        report = publish(
            system,
            command("c1", "tenant.configure", "2026-03-01T09:00:00Z", GYM, **SECRETS),
            command("c2", "tenant.configure", "2026-03-02T09:00:00Z", GYM, webhook_secrets={"stripe": "st-s3cret"}),
        )
        assert report.rejected == []
        with system.projections.engine.connect() as conn:
            shown, [listed] = find_tenant(conn, GYM), list_tenants(conn)
            trail = [row.payload for row in conn.execute(select(timeline).where(timeline.c.tenant == GYM))]
        assert shown is not None and shown["settings"]["github_webhook_secret"] == "set"
        assert shown["settings"]["slack_signing_secret"] == "set"
        assert shown["settings"]["webhook_secrets"] == {"ci": "set", "stripe": "set"}
        assert "s3cret" not in json.dumps([shown, listed]) + json.dumps(trail)
        system.rebuild(["tenants"])
        with system.projections.engine.connect() as conn:
            settings = unmasked_settings(conn, GYM)
        assert (settings.github_webhook_secret, settings.slack_signing_secret) == ("gh-s3cret", "sl-s3cret")
        assert settings.webhook_secrets == {"ci": "ci-s3cret", "stripe": "st-s3cret"}
    finally:
        system.close()


def test_a_secret_naming_github_as_a_generic_source_is_refused_at_the_edge() -> None:
    line = command("c1", "tenant.configure", "2026-03-01T09:00:00Z", GYM, webhook_secrets={"github": "gh-s3cret"})
    with pytest.raises(InvalidMessage, match="set github's own secret setting"):
        parse_message(json.dumps(line))

