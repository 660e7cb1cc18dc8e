"""The `tenants` read model shows the settings the Tenant aggregate runs under, merged by the same rule."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from loopline.domain import ids
from loopline.domain.tenant import Tenant
from loopline.projections.tenants import find_tenant
from tests.conftest import build_system, command, publish

GYM = "renegade"


def test_a_second_configure_merges_the_contact_info_key_by_key_in_the_view_as_in_the_tenant(home: Path) -> None:
    system = build_system(home)
    try:
        report = publish(
            system,
            command("c1", "tenant.configure", "2026-03-01T09:00:00Z", GYM, profile={"contact_info": {"phone": "555"}}),
            command("c2", "tenant.configure", "2026-03-02T09:00:00Z", GYM,
                    profile={"sign_off": "Coach Mike", "contact_info": {"website": "r.example"}}),
        )
        assert report.rejected == []
        with system.projections.engine.connect() as conn:
            shown = find_tenant(conn, GYM)
        tenant = system.app.repository.get(ids.tenant_id(GYM))
        assert isinstance(tenant, Tenant) and shown is not None
        assert shown["settings"]["profile"] == {"sign_off": "Coach Mike", "contact_info": {"phone": "555", "website": "r.example"}}
        assert asdict(tenant.current.profile.contact_info) == {"phone": "555", "address": None, "website": "r.example"}
    finally:
        system.close()
