"""Settings from environment variables, or the same keys in ./loopline.toml (the environment wins)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

KEYS = (
    "LOOPLINE_HOME", "LOOPLINE_EVENT_STORE", "LOOPLINE_READ_MODEL", "LOOPLINE_KAFKA", "LOOPLINE_KAFKA_TOPIC_PREFIX",
    "LOOPLINE_KAFKA_PARTITIONS", "LOOPLINE_SQLITE_CACHE_MIB", "LOOPLINE_SMTP_URL", "LOOPLINE_EMAIL_FROM",
    "LOOPLINE_WEBHOOK_URL", "LOOPLINE_WEBHOOK_SECRET", "LOOPLINE_LEADER_STALL_TIMEOUT", "LOOPLINE_CONNECT_TIMEOUT",
    "LOOPLINE_MODEL", "LOOPLINE_MODEL_TIMEOUT", "LOOPLINE_MODEL_RETRIES",
)
"""The keys a loopline.toml may set (the README's configuration table)."""

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The Claude model decisions use unless LOOPLINE_MODEL names another."""


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
    connect_timeout: float = 5.0
    anthropic_api_key: str | None = field(default=None, repr=False)
    """Only from the environment (ANTHROPIC_API_KEY): set, decisions go to the Anthropic API; unset, to the offline policy."""
    model: str = DEFAULT_MODEL
    model_timeout: float = 60.0
    model_retries: int = 3

    @classmethod
    def load(cls, environ: dict[str, str] | None = None, config_file: Path = Path("loopline.toml")) -> Settings:
        values: dict[str, str] = read_config_file(config_file) if config_file.exists() else {}
        values.update(os.environ if environ is None else environ)
        home = Path(values.get("LOOPLINE_HOME") or ".loopline")
        return cls(
            home=home,
            event_store=values.get("LOOPLINE_EVENT_STORE") or f"sqlite:///{home / 'events.db'}",
            read_model=values.get("LOOPLINE_READ_MODEL") or f"sqlite:///{home / 'views.db'}",
            kafka=values.get("LOOPLINE_KAFKA") or None,
            kafka_topic_prefix=values.get("LOOPLINE_KAFKA_TOPIC_PREFIX") or "",
            kafka_partitions=_partitions(values),
            smtp_url=values.get("LOOPLINE_SMTP_URL") or None,
            email_from=values.get("LOOPLINE_EMAIL_FROM") or "loopline@localhost",
            webhook_url=values.get("LOOPLINE_WEBHOOK_URL") or None,
            webhook_secret=values.get("LOOPLINE_WEBHOOK_SECRET") or None,
            leader_stall_timeout=_seconds(values, "LOOPLINE_LEADER_STALL_TIMEOUT", 180.0),
            connect_timeout=_seconds(values, "LOOPLINE_CONNECT_TIMEOUT", 5.0),
            anthropic_api_key=(os.environ if environ is None else environ).get("ANTHROPIC_API_KEY") or None,
            model=values.get("LOOPLINE_MODEL") or DEFAULT_MODEL,
            model_timeout=_seconds(values, "LOOPLINE_MODEL_TIMEOUT", 60.0),
            model_retries=_retries(values),
        )


def read_config_file(path: Path) -> dict[str, str]:
    """The keys of a loopline.toml; an unknown key is refused rather than ignored, since it is most
    often a misspelt one whose value would silently not apply."""
    try:
        table = tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as error:
        raise InvalidSetting(f"{path} is not UTF-8 (byte {error.start}): save it as UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise InvalidSetting(f"{path} is not valid TOML: {error}; write keys as LOOPLINE_HOME = \"...\"") from None
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise InvalidSetting(f"{path}: unknown key {', '.join(unknown)}; the keys are {', '.join(KEYS)}")
    return {key: str(value) for key, value in table.items()}


def _partitions(values: dict[str, str]) -> int:
    text = values.get("LOOPLINE_KAFKA_PARTITIONS") or "6"
    if not text.isdigit() or int(text) < 1:
        raise InvalidSetting(f"LOOPLINE_KAFKA_PARTITIONS={text!r} is not a positive whole number")
    return int(text)


def _retries(values: dict[str, str]) -> int:
    text = values.get("LOOPLINE_MODEL_RETRIES") or "3"
    if not text.isdigit():
        raise InvalidSetting(f"LOOPLINE_MODEL_RETRIES={text!r} is not a whole number of 0 or more")
    return int(text)


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
