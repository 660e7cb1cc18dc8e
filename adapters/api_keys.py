"""API keys for the HTTP edge: one per tenant or operator, kept beside the events as a hash of the secret.

A key is `ll_<key id>_<secret>`; only the secret's SHA-256 is stored (the secret is 32 random bytes, so a slow hash
adds nothing), found by its id and compared in constant time. Keys are the deployment's own, not events: a rebuild of
the read models leaves them as they are. Dashboard sessions are `adapters/sessions.py`'s.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Column, DateTime, MetaData, String, Table, insert, select, update
from sqlalchemy.engine import Engine

metadata = MetaData()
api_keys = Table(
    "loopline_api_keys", metadata,
    Column("key_id", String(32), primary_key=True),
    Column("secret_sha256", String(64), nullable=False),
    Column("tenant", String(255)),  # None for an operator key
    Column("operator", Boolean, nullable=False),
    Column("label", String(255), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
)
PREFIX = "ll"


def create_tables(engine: Engine) -> None:
    """Run with every other table of the start-up, under the schema lock (runtime/stores.py)."""
    metadata.create_all(engine)


class UnknownKey(LookupError):
    pass


@dataclass(frozen=True)
class IssuedKey:
    key_id: str
    token: str  # shown once; only its hash is kept


@dataclass(frozen=True)
class KeyRecord:
    key_id: str
    tenant: str | None
    operator: bool
    label: str
    created_at: datetime
    revoked_at: datetime | None

    def as_dict(self) -> dict[str, Any]:
        return {"key_id": self.key_id, "tenant": self.tenant, "operator": self.operator, "label": self.label,
                "created_at": self.created_at, "revoked_at": self.revoked_at}


def sha256_hex(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKeys:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, *, tenant: str | None, operator: bool, label: str, now: datetime) -> IssuedKey:
        if operator == (tenant is not None):
            raise ValueError("a key is either a tenant's (give the tenant) or the operator's, not both")
        key_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
        with self.engine.begin() as conn:
            conn.execute(insert(api_keys).values(
                key_id=key_id, secret_sha256=sha256_hex(secret), tenant=tenant, operator=operator, label=label,
                created_at=now, revoked_at=None,
            ))
        return IssuedKey(key_id, f"{PREFIX}_{key_id}_{secret}")

    def revoke(self, key_id: str, now: datetime) -> KeyRecord:
        """Revokes the key at once for every serve process (each request looks its key up); revoking twice keeps the
        first time. Raises UnknownKey for an id never issued."""
        with self.engine.begin() as conn:
            conn.execute(update(api_keys).where(api_keys.c.key_id == key_id, api_keys.c.revoked_at.is_(None))
                         .values(revoked_at=now))
        record = self.get(key_id)
        if record is None:
            raise UnknownKey(f"no API key {key_id!r}; `loopline keys list` shows them")
        return record

    def find(self, token: str) -> KeyRecord | None:
        """The live key the token is, or None (malformed, unknown, revoked or a wrong secret alike)."""
        parts = token.split("_", 2)
        if len(parts) != 3 or parts[0] != PREFIX:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(select(api_keys).where(api_keys.c.key_id == parts[1])).mappings().first()
        if row is None or row["revoked_at"] is not None:
            return None
        if not hmac.compare_digest(row["secret_sha256"], sha256_hex(parts[2])):
            return None
        return record_of(row)

    def get(self, key_id: str) -> KeyRecord | None:
        """The key by its id, revoked or not."""
        with self.engine.connect() as conn:
            row = conn.execute(select(api_keys).where(api_keys.c.key_id == key_id)).mappings().first()
        return None if row is None else record_of(row)

    def list(self, tenant: str | None = None) -> list[KeyRecord]:
        query = select(api_keys).order_by(api_keys.c.created_at)
        if tenant is not None:
            query = query.where(api_keys.c.tenant == tenant)
        with self.engine.connect() as conn:
            return [record_of(row) for row in conn.execute(query).mappings()]


def record_of(row: Any) -> KeyRecord:
    return KeyRecord(row["key_id"], row["tenant"], row["operator"], row["label"], row["created_at"], row["revoked_at"])
