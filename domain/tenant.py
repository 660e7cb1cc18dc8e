"""The Tenant aggregate: one business or person Loopline works for, and the settings it runs under.

`tenant.configure` records only the fields it was given (`Tenant.Configured`); later values win,
and the profile (seed 002 §23.1, in snake_case) merges key by key. A tenant never configured runs
with `TenantSettings()`'s defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.errors import DomainError

ExecutionMode = Literal["manual", "limited_auto", "auto"]
EXECUTION_MODES: tuple[str, ...] = ("manual", "limited_auto", "auto")

SETTING_FIELDS = ("name", "timezone", "owner_email", "execution_mode", "member_weekly_limit", "daily_send_limit",
                  "profile")
PROFILE_TEXT_FIELDS = ("display_name", "gym_type", "owner_first_name", "vibe", "current_promo", "typical_greeting",
                       "sign_off")
PROFILE_LIST_FIELDS = ("class_types", "special_programs", "never_mention", "always_include")
CONTACT_INFO_FIELDS = ("phone", "address", "website")
PROFILE_FIELDS = (*PROFILE_TEXT_FIELDS, *PROFILE_LIST_FIELDS, "contact_info")


class InvalidSettings(DomainError):
    pass


@dataclass(frozen=True)
class ContactInfo:
    phone: str | None = None
    address: str | None = None
    website: str | None = None


@dataclass(frozen=True)
class TenantProfile:
    """How messages sound and sign off (seed 002 §23.1); every field optional."""

    display_name: str | None = None
    gym_type: str | None = None
    owner_first_name: str | None = None
    vibe: str | None = None
    class_types: tuple[str, ...] = ()
    special_programs: tuple[str, ...] = ()
    current_promo: str | None = None
    typical_greeting: str | None = None
    never_mention: tuple[str, ...] = ()
    always_include: tuple[str, ...] = ()
    sign_off: str | None = None
    contact_info: ContactInfo = field(default_factory=ContactInfo)

    @classmethod
    def from_dict(cls, profile: Mapping[str, Any]) -> TenantProfile:
        return cls(
            **{key: profile[key] for key in PROFILE_TEXT_FIELDS if key in profile},
            **{key: tuple(profile[key]) for key in PROFILE_LIST_FIELDS if key in profile},
            contact_info=ContactInfo(**profile.get("contact_info", {})),
        )


@dataclass(frozen=True)
class TenantSettings:
    """What a tenant runs under; the defaults are those of a tenant never configured."""

    name: str | None = None
    timezone: str = "UTC"
    owner_email: str | None = None
    execution_mode: ExecutionMode = "manual"
    member_weekly_limit: int = 3
    """Messages one contact may get from all of the tenant's tasks in any 7 days."""
    daily_send_limit: int = 15
    """Messages the tenant may send in one tenant-local day."""
    profile: TenantProfile = field(default_factory=TenantProfile)

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> TenantSettings:
        plain = {key: settings[key] for key in SETTING_FIELDS if key in settings and key != "profile"}
        return cls(**plain, profile=TenantProfile.from_dict(settings.get("profile", {})))


def check_settings(settings: Mapping[str, Any]) -> None:
    """Raises InvalidSettings naming the first field that is wrong; a configure command stores nothing then."""
    unknown = sorted(set(settings) - set(SETTING_FIELDS))
    if unknown:
        raise InvalidSettings(f"unknown tenant setting(s) {', '.join(unknown)}; known: {', '.join(SETTING_FIELDS)}")
    if "timezone" in settings:
        check_timezone(settings["timezone"])
    if "execution_mode" in settings and settings["execution_mode"] not in EXECUTION_MODES:
        raise InvalidSettings(
            f"execution_mode {settings['execution_mode']!r} is not one of {', '.join(EXECUTION_MODES)}"
        )
    for limit in ("member_weekly_limit", "daily_send_limit"):
        value = settings.get(limit, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidSettings(f"{limit} must be a whole number of 0 or more, not {value!r}")
    if "profile" in settings:
        check_profile(settings["profile"])


def check_timezone(name: Any) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidSettings(f"timezone {name!r} is not an IANA time zone (e.g. Europe/Berlin, America/New_York)") from None


def check_profile(profile: Any) -> None:
    if not isinstance(profile, Mapping):
        raise InvalidSettings("profile must be an object")
    unknown = sorted(set(profile) - set(PROFILE_FIELDS))
    if unknown:
        raise InvalidSettings(f"unknown profile field(s) {', '.join(unknown)}; known: {', '.join(PROFILE_FIELDS)}")
    contact_info = profile.get("contact_info", {})
    if not isinstance(contact_info, Mapping):
        raise InvalidSettings("profile.contact_info must be an object")
    unknown = sorted(set(contact_info) - set(CONTACT_INFO_FIELDS))
    if unknown:
        raise InvalidSettings(
            f"unknown profile.contact_info field(s) {', '.join(unknown)}; known: {', '.join(CONTACT_INFO_FIELDS)}"
        )


def merge_settings(current: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Later values win; the profile and its contact_info merge key by key."""
    merged = {**current, **{key: value for key, value in given.items() if key != "profile"}}
    if "profile" in given:
        profile = {**current.get("profile", {}), **given["profile"]}
        if "contact_info" in given["profile"]:
            profile["contact_info"] = {
                **current.get("profile", {}).get("contact_info", {}), **given["profile"]["contact_info"]
            }
        merged["profile"] = profile
    return merged


class Tenant(LooplineAggregate):
    """Holds the merged settings as a plain dict, so a snapshot (JSON) restores it unchanged."""

    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Configured(TenantEvent):
        settings: dict[str, Any]
        """Only the fields the command gave."""

        def apply(self, tenant: Tenant) -> None:
            tenant.settings = merge_settings(tenant.settings, self.settings)

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.settings: dict[str, Any] = {}

    @classmethod
    def create(cls, *, id: Any, tenant: str, now: datetime) -> Tenant:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def configure(self, settings: Mapping[str, Any], *, now: datetime) -> bool:
        """Records the given fields; False (and nothing recorded) when they change nothing."""
        check_settings(settings)
        if merge_settings(self.settings, settings) == self.settings:
            return False
        self.trigger_event(self.Configured, timestamp=now, settings=dict(settings))
        return True

    @property
    def current(self) -> TenantSettings:
        return TenantSettings.from_dict(self.settings)
