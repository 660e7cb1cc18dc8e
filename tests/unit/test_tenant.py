"""Tenant settings: defaults, later values win, the profile merges key by key, bad values are refused."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from loopline.domain import ids
from loopline.domain.pause import Pause, held_timer
from loopline.domain.tenant import ContactInfo, InvalidSettings, Tenant, TenantSettings
from loopline.processors.application import Loopline, UnitOfWork

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def make_tenant() -> Tenant:
    return Tenant.create(id=ids.tenant_id("gym"), tenant="gym", now=NOW)


def test_a_tenant_never_configured_has_the_defaults() -> None:
    settings = make_tenant().current
    assert settings == TenantSettings()
    assert (settings.timezone, settings.execution_mode, settings.member_weekly_limit, settings.daily_send_limit) == (
        "UTC", "manual", 3, 15)


def test_later_values_win_and_the_profile_merges_key_by_key() -> None:
    tenant = make_tenant()
    tenant.configure({"timezone": "America/New_York", "execution_mode": "manual",
                      "profile": {"display_name": "Renegade", "class_types": ["WOD"], "contact_info": {"phone": "555"}}},
                     now=NOW)
    tenant.configure({"execution_mode": "limited_auto", "profile": {"sign_off": "Coach Mike",
                                                             "contact_info": {"website": "r.example"}}}, now=NOW)
    settings = tenant.current
    assert (settings.timezone, settings.execution_mode) == ("America/New_York", "limited_auto")
    assert settings.profile.display_name == "Renegade" and settings.profile.sign_off == "Coach Mike"
    assert settings.profile.class_types == ("WOD",)
    assert settings.profile.contact_info == ContactInfo(phone="555", website="r.example")


def test_each_event_holds_only_the_fields_given() -> None:
    tenant = make_tenant()
    tenant.configure({"daily_send_limit": 40}, now=NOW)
    events = tenant.collect_events()
    assert events[-1].settings == {"daily_send_limit": 40}


def test_a_configure_that_changes_nothing_records_nothing() -> None:
    tenant = make_tenant()
    assert tenant.configure({"timezone": "Europe/Berlin"}, now=NOW)
    assert not tenant.configure({"timezone": "Europe/Berlin"}, now=NOW)
    assert len(tenant.collect_events()) == 2  # Created, one Configured


@pytest.mark.parametrize(("settings", "message"), [
    ({"timezone": "Mars/Olympus"}, "timezone 'Mars/Olympus' is not an IANA time zone"),
    ({"timezone": "../etc/passwd"}, "is not an IANA time zone"),
    ({"execution_mode": "yolo"}, "execution_mode 'yolo' is not one of manual, limited_auto"),
    ({"execution_mode": "auto"}, "execution_mode 'auto' is not one of manual, limited_auto"),
    ({"member_weekly_limit": -1}, "member_weekly_limit must be a whole number of 0 or more"),
    ({"daily_send_limit": True}, "daily_send_limit must be a whole number"),
    ({"profile": {"favourite_colour": "red"}}, "unknown profile field(s) favourite_colour"),
    ({"profile": {"contact_info": {"fax": "1"}}}, "unknown profile.contact_info field(s) fax"),
    ({"colour": "red"}, "unknown tenant setting(s) colour"),
    ({"timezone": None}, "timezone None is not an IANA time zone"),
    ({"owner_quiet_hours": "late"}, "owner_quiet_hours 'late' is not HH:MM-HH:MM"),
    ({"sms_url": "ftp://sms"}, "sms_url 'ftp://sms' is not an http(s) URL"),
    ({"github_webhook_secret": "two words"}, "a webhook secret must be 1 to 200 characters"),
    ({"webhook_secrets": None}, "webhook_secrets must be an object"),
])
def test_bad_settings_are_refused_naming_the_field(settings: dict, message: str) -> None:
    tenant = make_tenant()
    with pytest.raises(InvalidSettings, match=message.replace("(", r"\(").replace(")", r"\)")):
        tenant.configure(settings, now=NOW)
    assert tenant.current == TenantSettings()


def test_a_setting_absent_by_default_is_unset_again_with_null() -> None:
    tenant = make_tenant()
    tenant.configure({"owner_quiet_hours": "21:00-07:00", "sms_url": "https://sms.example/send",
                      "slack_signing_secret": "s3cret"}, now=NOW)
    tenant.configure({"owner_quiet_hours": None, "sms_url": None, "slack_signing_secret": None}, now=NOW)
    assert tenant.current == TenantSettings()


def test_a_tenant_stored_in_the_dropped_auto_mode_reads_as_limited_auto() -> None:
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    tenant = make_tenant()
    tenant.configure({"execution_mode": "limited_auto", "daily_send_limit": 4}, now=NOW)
    stored = app.mapper.to_stored_event(tenant.collect_events()[-1])
    state = json.loads(stored.state)
    state.pop("class_version")
    state["settings"]["execution_mode"] = "auto"  # as a tenant configured before version 2 stored it
    old = app.mapper.to_domain_event(replace(stored, state=json.dumps(state).encode()))
    assert old.settings == {"execution_mode": "limited_auto", "daily_send_limit": 4}


def test_a_pause_records_why_and_by_whom_until_it_is_resumed() -> None:
    tenant = make_tenant()
    assert tenant.paused is None
    assert tenant.pause("bounce rate 12 % over the 10 % limit", "bounce_rate", NOW)
    assert not tenant.pause("owner asked", "owner", NOW)
    assert tenant.paused == Pause(scope="tenant gym", reason="bounce rate 12 % over the 10 % limit", by="bounce_rate",
                                  since=NOW.isoformat())
    assert tenant.hold(held_timer("task_step", "id-1", "t1"), NOW)
    assert not tenant.hold(held_timer("task_step", "id-1", "t1"), NOW)
    assert tenant.resume("list cleaned", "owner", NOW) == [{"timer": "task_step", "target": "id-1", "task_ref": "t1"}]
    assert tenant.resume("again", "owner", NOW) is None
    assert tenant.paused is None
    assert [type(event).__name__ for event in tenant.collect_events()] == ["Created", "Paused", "WorkHeld", "Resumed"]


def test_a_paused_tenant_stays_paused_when_loaded_from_the_store() -> None:
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    tenant = make_tenant()
    tenant.pause("owner on holiday", "owner", NOW)
    app.save(tenant)
    assert app.repository.get(tenant.id).paused == Pause(
        scope="tenant gym", reason="owner on holiday", by="owner", since=NOW.isoformat())


def test_a_paused_tenant_with_its_held_work_is_restored_from_a_snapshot() -> None:
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo", "IS_SNAPSHOTTING_ENABLED": "y"})
    uow = UnitOfWork(app)
    tenant = uow.add(make_tenant())
    tenant.configure({"timezone": "Europe/Berlin"}, now=NOW)
    tenant.pause("owner on holiday", "owner", NOW)
    for n in range(97):  # the 100th event is snapshotted
        tenant.hold(held_timer("task_step", f"id-{n}", f"t{n}"), NOW)
    uow.commit()

    [snapshot] = list(app.snapshots.get(tenant.id))
    loaded = app.repository.get(tenant.id)
    assert snapshot.originator_version == 100
    assert (loaded.current.timezone, loaded.paused, len(loaded.held)) == ("Europe/Berlin", tenant.paused, 97)
