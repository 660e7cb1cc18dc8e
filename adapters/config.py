"""Settings from environment variables, or the same keys in ./loopline.toml (the environment wins)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path


class InvalidSetting(ValueError):
    """A configuration value cannot be used; the text names the setting and the expected form."""


@dataclass(frozen=True)
class Settings:
    home: Path
    event_store: str
    read_model: str
    kafka: str | None
    kafka_topic_prefix: str
    kafka_partitions: int
    smtp_url: str | None
    email_from: str
    webhook_url: str | None
    webhook_secret: str | None
    leader_stall_timeout: float = 180.0

    @classmethod
    def load(cls, environ: dict[str, str] | None = None, config_file: Path = Path("loopline.toml")) -> Settings:
        values: dict[str, str] = {}
        if config_file.exists():
            values.update({k: str(v) for k, v in tomllib.loads(config_file.read_text()).items()})
        values.update(os.environ if environ is None else environ)
        home = Path(values.get("LOOPLINE_HOME") or ".loopline")
        return cls(
            home=home,
            event_store=values.get("LOOPLINE_EVENT_STORE") or f"sqlite:///{home / 'events.db'}",
            read_model=values.get("LOOPLINE_READ_MODEL") or f"sqlite:///{home / 'views.db'}",
            kafka=values.get("LOOPLINE_KAFKA") or None,
            kafka_topic_prefix=values.get("LOOPLINE_KAFKA_TOPIC_PREFIX") or "",
            kafka_partitions=int(values.get("LOOPLINE_KAFKA_PARTITIONS") or 6),
            smtp_url=values.get("LOOPLINE_SMTP_URL") or None,
            email_from=values.get("LOOPLINE_EMAIL_FROM") or "loopline@localhost",
            webhook_url=values.get("LOOPLINE_WEBHOOK_URL") or None,
            webhook_secret=values.get("LOOPLINE_WEBHOOK_SECRET") or None,
            leader_stall_timeout=_seconds(values, "LOOPLINE_LEADER_STALL_TIMEOUT", 180.0),
        )


def _seconds(values: dict[str, str], key: str, default: float) -> float:
    text = values.get(key)
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise InvalidSetting(f"{key}={text!r} is not a positive number of seconds")
    return seconds
