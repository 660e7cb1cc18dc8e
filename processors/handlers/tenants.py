"""Tenants: `tenant.configure` and the settings every other step reads (`tenant_settings`)."""

from __future__ import annotations

from loopline.domain import ids
from loopline.domain.tenant import Tenant, TenantSettings
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.daily_digest import file_daily_digest
from loopline.processors.handlers.commands_types import TenantConfigure
from loopline.processors.messages import Message


def tenant_settings(uow: UnitOfWork, tenant: str) -> TenantSettings:
    """The tenant's settings; the defaults for a tenant never configured."""
    found = uow.get(ids.tenant_id(tenant), Tenant)
    return found.current if found is not None else TenantSettings()


def configure_tenant(uow: UnitOfWork, msg: Message, cmd: TenantConfigure) -> str:
    given = cmd.given()
    if not given:
        return f"tenant.configure for {msg.tenant} gave no settings; nothing changed"
    tenant = uow.get_or_create(
        ids.tenant_id(msg.tenant), Tenant, lambda: Tenant.create(id=ids.tenant_id(msg.tenant), tenant=msg.tenant, now=msg.at)
    )
    if not tenant.configure(given, now=msg.at):
        return f"tenant {msg.tenant} already has these settings; nothing changed"
    if "daily_digest_hour" in given:
        file_daily_digest(uow, tenant, msg.at)
    settings = tenant.current
    return (f"configured tenant {msg.tenant} ({', '.join(sorted(given))}): mode {settings.execution_mode}, "
            f"timezone {settings.timezone}, limits {settings.member_weekly_limit}/contact/week and "
            f"{settings.daily_send_limit}/day")
