"""The Tenant aggregate: one business or person Loopline works for, and the settings it runs under.

`tenant.configure` records only the fields it was given (`Tenant.Configured`); later values win,
and the profile (seed 002 §23.1, in snake_case) merges key by key. A tenant never configured runs
with `TenantSettings()`'s defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from typing import Any, Literal, get_args, get_origin, get_type_hints

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.onboarding import RAMP, RAMP_PHASES, RampPhase
from loopline.domain.pause import Pausable
from loopline.domain.priority_rules import check_priority_rules
from loopline.domain.safety_limits import default
from loopline.domain.setting_checks import (
    InvalidSettings,
    check_quiet_hours,
    check_secret,
    check_sms_url,
    check_timezone,
    check_webhook_secrets,
)

ExecutionMode = Literal["manual", "limited_auto"]
EXECUTION_MODES: tuple[str, ...] = get_args(ExecutionMode)
MAX_SEND_LIMIT = 100_000
"""The most a send limit may be set to."""
HOURS_A_DAY = 24
MAX_AVERAGE_VALUE = 1_000_000
"""The most `average_value` may be set to."""


def setting(doc: str, default: Any = None, *, factory: Callable[[], Any] | None = None, most: int | None = None,
            check: Callable[[Any], None] | None = None, secret: bool = False) -> Any:
    """One setting: its default, what it means (the README's words), the most a number may be, the check
    a text value must pass, and whether readers see it masked. The edge's `tenant.configure` schema is derived
    from these fields."""
    metadata = {"doc": doc, "most": most, "check": check, "secret": secret}
    return field(default_factory=factory, metadata=metadata) if factory else field(default=default, metadata=metadata)


@dataclass(frozen=True)
class ContactInfo:
    phone: str | None = setting("the phone number given to contacts who need one")
    address: str | None = setting("the street address")
    website: str | None = setting("the website")


@dataclass(frozen=True)
class TenantProfile:
    """How messages sound and sign off (seed 002 §23.1); every field optional."""

    display_name: str | None = setting("the name contacts know (not the legal name)")
    gym_type: str | None = setting("what kind of business: `crossfit_box`, `yoga_studio`, …")
    owner_first_name: str | None = setting("the owner's first name, for sign-offs")
    vibe: str | None = setting("`casual_friendly`, `motivational`, `professional` or `community_first`: the tone")
    class_types: tuple[str, ...] = setting("classes the messages may mention", ())
    special_programs: tuple[str, ...] = setting("programs the messages may mention", ())
    current_promo: str | None = setting("the one promotion the messages may offer")
    typical_greeting: str | None = setting("how messages open: `Hey!`, `Hi there,`")
    never_mention: tuple[str, ...] = setting("topics messages never mention", ())
    always_include: tuple[str, ...] = setting("what every message includes", ())
    sign_off: str | None = setting("how messages are signed: `Coach Mike`")
    contact_info: ContactInfo = setting("how contacts reach the business", factory=ContactInfo)

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

    name: str | None = setting("the tenant's name, as the owner reads it")
    timezone: str = setting(
        "an IANA time zone (`Europe/Berlin`); the daily send limit counts local days; absent: `UTC`", "UTC",
        check=check_timezone,
    )
    owner_email: str | None = setting("where the owner is told about reviews and escalations")
    sms_url: str | None = setting(
        "where `send_sms` actions are POSTed (JSON `to`, `body`; the `X-Loopline-Delivery` header is the idempotency "
        "key); absent: the tenant sends no SMS", check=check_sms_url,
    )
    owner_quiet_hours: str | None = setting(
        "`HH:MM-HH:MM` in the tenant's time zone (`21:00-07:00`): the owner's emails wait until they end (system "
        "alerts excepted); absent: none", check=check_quiet_hours,
    )
    escalation_reminder_hours: int = setting(
        "hours an escalated task waits for the owner before they are reminded of it (seed 002 §17.5); 0: never; "
        "absent: 48", 48, most=HOURS_A_DAY * 90,
    )
    escalation_cancel_days: int = setting(
        "days an escalated task waits for the owner before it is cancelled (outcome `escalated_unresolved` where its "
        "type has it); 0: never; absent: 7", 7, most=365,
    )
    execution_mode: ExecutionMode = setting(
        "`manual`: every task Loopline works waits for review, and so does each touch it would send unasked; "
        "`limited_auto`: escalation triggers, then the type's threshold; absent: `manual`", "manual",
    )
    member_weekly_limit: int = setting(
        "messages one contact may get in any 7 days; absent: 3", default("member_weekly_limit"), most=MAX_SEND_LIMIT,
    )
    daily_send_limit: int = setting(
        "messages the tenant may send in one local day; absent: 15", default("tenant_daily_limit"), most=MAX_SEND_LIMIT,
    )
    daily_task_limit: int = setting(
        "tasks Loopline works that may be created in one local day; absent: 50", default("daily_task_limit"),
        most=MAX_SEND_LIMIT,
    )
    active_task_limit: int = setting(
        "tasks Loopline works that may be open at once; absent: 100", default("active_task_limit"), most=MAX_SEND_LIMIT,
    )
    daily_spawned_task_limit: int = setting(
        "tasks the agent may create from another task's work (`origin` `task`) in one local day; absent: 10",
        default("daily_spawned_task_limit"), most=MAX_SEND_LIMIT,
    )
    daily_model_call_limit: int = setting(
        "model calls the tenant's tasks may ask for in one local day (the owner is told at 80 %); absent: 200",
        default("daily_model_call_limit"), most=MAX_SEND_LIMIT,
    )
    task_model_call_limit: int = setting(
        "model calls one task may ask for in its life; absent: 20", default("task_model_call_limit"), most=MAX_SEND_LIMIT,
    )
    send_window_start: int = setting(
        "the local hour (0 to 23) from which emails to contacts go; one due earlier waits for it; absent: 8", 8, most=23,
    )
    send_window_end: int = setting(
        "the local hour (1 to 24, after the start) at which emails to contacts stop until the next day; absent: 20",
        20, most=24,
    )
    send_on_weekends: bool = setting("whether emails to contacts go on Saturdays and Sundays; absent: true", True)
    ramp_phase: RampPhase = setting(
        "onboarding (seed 002 §26), moved on by the owner: `shadow` sends nothing and every task waits for review; "
        "`guided` sends 3 a day, every task reviewed; `limited` sends 10 a day under the execution mode; `full`: the "
        "tenant's own limits; absent: `full`", "full",
    )
    warm_up: bool = setting(
        "caps sends a day at 3, 5 and 10 in weeks 1, 2 and 3 from the tenant's first email (seed 002 §33.2), then "
        "the daily limit holds; absent: false", False,
    )
    dry_run: bool = setting(
        "`true`: every step runs and is recorded (limits, ledgers, the trail) but no email reaches a contact: delivery "
        "marks each one `dry_run` and `audit` shows what would have gone; absent: `false`", False,
    )
    average_value: float = setting(
        "what a retained member is worth, in the tenant's currency: an outcome's value is its type's revenue "
        "multiplier times this, unless its signal names an amount (seed 002 §9); absent: 150", 150,
        most=MAX_AVERAGE_VALUE,
    )
    daily_digest_hour: int | None = setting(
        "the local hour (0 to 23) at which the owner is emailed the day before's scorecard (seed 002 §10); absent: "
        "no daily digest", most=23,
    )
    priority_rules: tuple[Mapping[str, Any], ...] = setting(
        "rules that set a new task's priority when its creator gave none, the first that matches winning (seed 004 "
        "§3): `[{\"contact_domain_in\": [\"bank.com\"], \"priority\": \"high\"}]`; absent: none",
        factory=tuple, check=check_priority_rules,
    )
    github_webhook_secret: str | None = setting(
        "the secret GitHub signs `POST /v1/webhooks/github/{tenant}` with (`X-Hub-Signature-256`); shown as `set`; "
        "absent: that endpoint refuses every delivery", check=check_secret, secret=True,
    )
    slack_signing_secret: str | None = setting(
        "the Slack app's signing secret for `POST /v1/webhooks/slack/{tenant}` (`X-Slack-Signature`); shown as "
        "`set`; absent: that endpoint refuses every request", check=check_secret, secret=True,
    )
    webhook_secrets: Mapping[str, str] = setting(
        "a source name to the secret its `POST /v1/webhooks/{source}/{tenant}` is signed with "
        "(`X-Loopline-Signature`), merged source by source with what was set before; shown as `set`; absent: none",
        factory=dict, check=check_webhook_secrets, secret=True,
    )
    profile: TenantProfile = setting("merged key by key with what was set before", factory=TenantProfile)

    @property
    def reviews_every_task(self) -> bool:
        """Every task the agent would send for waits for the owner: the `manual` mode, or an onboarding phase."""
        return self.execution_mode == "manual" or RAMP[self.ramp_phase].reviews_every_task

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> TenantSettings:
        plain = {key: settings[key] for key in SETTING_FIELDS if key in settings and key != "profile"}
        return cls(**plain, profile=TenantProfile.from_dict(settings.get("profile", {})))


def setting_names(group: type) -> tuple[str, ...]:
    """A settings group's (`TenantSettings`, `TenantProfile`, `ContactInfo`) field names as messages list them:
    plain values, then lists, then nested groups."""
    types = get_type_hints(group)

    def rank(name: str) -> int:
        kind = types[name]
        return 2 if is_dataclass(kind) else 1 if get_origin(kind) is tuple else 0

    return tuple(sorted((spec.name for spec in fields(group)), key=rank))


SETTING_FIELDS = setting_names(TenantSettings)
PROFILE_FIELDS = setting_names(TenantProfile)
CONTACT_INFO_FIELDS = setting_names(ContactInfo)
PROFILE_LIST_FIELDS = tuple(name for name, kind in get_type_hints(TenantProfile).items() if get_origin(kind) is tuple)
PROFILE_TEXT_FIELDS = tuple(name for name in PROFILE_FIELDS if name not in PROFILE_LIST_FIELDS and name != "contact_info")
SEND_LIMITS = tuple(name for name, kind in get_type_hints(TenantSettings).items() if kind is int)
SECRET_SETTINGS = tuple(spec.name for spec in fields(TenantSettings) if spec.metadata["secret"])
SETTING_CHECKS = {spec.name: spec.metadata["check"] for spec in fields(TenantSettings) if spec.metadata["check"]}
UNSETTABLE = frozenset(spec.name for spec in fields(TenantSettings) if spec.default is None)
"""Settings absent by default: given as null they are unset again, with no check."""


def check_settings(settings: Mapping[str, Any]) -> None:
    """Raises InvalidSettings naming the first field that is wrong; a configure command stores nothing then."""
    unknown = sorted(set(settings) - set(SETTING_FIELDS))
    if unknown:
        raise InvalidSettings(f"unknown tenant setting(s) {', '.join(unknown)}; known: {', '.join(SETTING_FIELDS)}")
    for name, check in SETTING_CHECKS.items():
        if name in settings and (settings[name] is not None or name not in UNSETTABLE):
            check(settings[name])
    if "execution_mode" in settings and settings["execution_mode"] not in EXECUTION_MODES:
        raise InvalidSettings(
            f"execution_mode {settings['execution_mode']!r} is not one of {', '.join(EXECUTION_MODES)}"
        )
    for limit in SEND_LIMITS:
        value = settings.get(limit, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidSettings(f"{limit} must be a whole number of 0 or more, not {value!r}")
    if "ramp_phase" in settings and settings["ramp_phase"] not in RAMP_PHASES:
        raise InvalidSettings(f"ramp_phase {settings['ramp_phase']!r} is not one of {', '.join(RAMP_PHASES)}")
    value = settings.get("average_value", 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_AVERAGE_VALUE:
        raise InvalidSettings(f"average_value must be a number from 0 to {MAX_AVERAGE_VALUE}, not {value!r}")
    hour = settings.get("daily_digest_hour")
    if hour is not None and (isinstance(hour, bool) or not isinstance(hour, int) or not 0 <= hour < HOURS_A_DAY):
        raise InvalidSettings(f"daily_digest_hour must be a local hour from 0 to 23, not {hour!r}")
    for flag in ("send_on_weekends", "warm_up", "dry_run"):
        if not isinstance(settings.get(flag, True), bool):
            raise InvalidSettings(f"{flag} must be true or false, not {settings[flag]!r}")
    if "profile" in settings:
        check_profile(settings["profile"])


def check_send_window(settings: Mapping[str, Any]) -> None:
    """The window the merged settings leave must hold at least one hour of a day."""
    start = settings.get("send_window_start", TenantSettings.send_window_start)
    end = settings.get("send_window_end", TenantSettings.send_window_end)
    if not 0 <= start < end <= HOURS_A_DAY:
        raise InvalidSettings(
            f"send_window_start ({start}) must be before send_window_end ({end}), both hours from 0 to {HOURS_A_DAY}; "
            "set both to change the window"
        )


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
    """Later values win; the profile, its contact_info and the webhook secrets merge key by key."""
    merged = {**current, **{key: value for key, value in given.items() if key != "profile"}}
    if "webhook_secrets" in given:
        merged["webhook_secrets"] = {**current.get("webhook_secrets", {}), **given["webhook_secrets"]}
    if "profile" in given:
        profile = {**current.get("profile", {}), **given["profile"]}
        if "contact_info" in given["profile"]:
            profile["contact_info"] = {
                **current.get("profile", {}).get("contact_info", {}), **given["profile"]["contact_info"]
            }
        merged["profile"] = profile
    return merged


class Tenant(Pausable, LooplineAggregate):
    """Holds the merged settings as a plain dict, so a snapshot (JSON) restores it unchanged."""

    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str

    class Configured(TenantEvent):
        """Version 2 drops execution mode `auto`: a confidence below the type's threshold always goes to review, so
        an `auto` stored before acts as `limited_auto` and reads so."""

        class_version = 2

        settings: dict[str, Any]
        """Only the fields the command gave."""

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            if state["settings"].get("execution_mode") == "auto":
                state["settings"] = {**state["settings"], "execution_mode": "limited_auto"}

        def apply(self, tenant: Tenant) -> None:
            tenant.settings = merge_settings(tenant.settings, self.settings)

    class Paused(TenantEvent):
        """Nothing is sent and no model is called for the tenant until it resumes; what falls due is held."""

        reason: str
        by: str
        """Who paused it: the owner or operator who gave the command, or the rail that tripped (`bounce_rate`)."""

        def apply(self, tenant: Tenant) -> None:
            tenant.pause_record = {"reason": self.reason, "by": self.by, "since": self.timestamp.isoformat()}

    class Resumed(TenantEvent):
        reason: str
        by: str
        released: list[dict[str, Any]]
        """The held work handed back (`domain/pause.py`), in the order it was held."""

        def apply(self, tenant: Tenant) -> None:
            tenant.pause_record = None
            tenant.held = []

    class WorkHeld(TenantEvent):
        """Work that fell due while the tenant was paused (`domain/pause.py` held_timer, held_decision)."""

        work: dict[str, Any]

        def apply(self, tenant: Tenant) -> None:
            tenant.held.append(self.work)

    class DigestRecorded(TenantEvent):
        """The owner's daily digest (seed 002 §10): the scorecard of the local `day` before it went, emailed by
        delivery from the scorecard read model."""

        day: str

        def apply(self, tenant: Tenant) -> None:
            tenant.digest_day = self.day

    digest_day: str | None = None
    """The last day a digest was recorded for; a class default, so older snapshots need no upcaster."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.settings: dict[str, Any] = {}
        # Plain dicts and lists like the settings, so a snapshot (JSON) would restore them unchanged.
        self.pause_record: dict[str, str] | None = None
        self.held: list[dict[str, Any]] = []

    @classmethod
    def create(cls, *, id: Any, tenant: str, now: datetime) -> Tenant:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant)

    def configure(self, settings: Mapping[str, Any], *, now: datetime) -> bool:
        """Records the given fields; False (and nothing recorded) when they change nothing."""
        check_settings(settings)
        merged = merge_settings(self.settings, settings)
        check_send_window(merged)
        if merged == self.settings:
            return False
        self.trigger_event(self.Configured, timestamp=now, settings=dict(settings))
        return True

    def record_digest(self, *, day: str, now: datetime) -> bool:
        """Records the digest of `day` once; False for a day already covered (the hour moved later the same day)."""
        if self.digest_day is not None and day <= self.digest_day:
            return False
        self.trigger_event(self.DigestRecorded, timestamp=now, day=day)
        return True

    @property
    def pause_scope(self) -> str:
        return f"tenant {self.tenant}"

    @property
    def current(self) -> TenantSettings:
        return TenantSettings.from_dict(self.settings)
