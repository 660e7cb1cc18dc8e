"""The composition root: builds the embedded or the scale system from settings. Nothing connects at import time."""

from __future__ import annotations

from collections.abc import Sequence

from loopline.adapters.channels import JsonlOutbox
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import InvalidSetting, Settings
from loopline.adapters.delivery_state import SqlDeliveryLedger
from loopline.adapters.drafting import TemplateDrafter
from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.leader import leader_for
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.adapters.reachability import check_reachable
from loopline.adapters.smtp import SmtpChannel, SmtpServer
from loopline.adapters.sms import HttpSms, SmsChannel
from loopline.adapters.webhook import WebhookChannel
from loopline.processors.followers.agent import Agent, concurrency_from_env
from loopline.processors.followers.brain import Brain
from loopline.processors.followers.delivery import Delivery
from loopline.processors.handlers.table import build_bus
from loopline.processors.ports import DecisionModel, OutboundChannel
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.projections import scorecard
from loopline.projections.runner import Projection
from loopline.projections.scorecard_numbers import day_scorecards
from loopline.runtime.stores import READ_MODELS, open_stores
from loopline.runtime.system import System


def build(settings: Settings | None = None, read_models: Sequence[Projection] = READ_MODELS) -> System:
    """The system as `settings` configure it; `read_models` narrows the read models it keeps (a plan's copy keeps none)."""
    settings = settings or Settings.load()
    check_reachable(settings)
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InvalidSetting(f"LOOPLINE_HOME={str(settings.home)!r} cannot be created: {error.strerror}") from None
    leader = leader_for(settings.event_store, settings.home)
    channels = channels_for(settings)
    stores = open_stores(settings, leader, read_models)
    app = stores.app
    bus = build_bus(app, TemplateDrafter())
    model = decision_model(settings)
    system = System(
        settings=settings,
        app=app,
        bus=bus,
        log=EmbeddedLog(app),
        router=Router(bus),
        scheduler=Scheduler(bus),
        delivery=Delivery(app, SqlDeliveryLedger(stores.ledger_engine), channels, clock=SystemClock(),
                          scorecard_of=day_scorecards(stores.projections.engine) if scorecard in read_models else None),
        projections=stores.projections,
        leader=leader,
        ledger_engine=stores.ledger_engine,
        agent=Agent(bus, model, concurrency=model_concurrency(), call_timeout=settings.model_timeout),
        brain=Brain(bus, model),
    )
    if settings.kafka:
        from loopline.adapters.kafka_log import KafkaPublisher, Topics, ensure_topics
        from loopline.adapters.kafka_relay import OutboxRelay

        topics = Topics(settings.kafka_topic_prefix)
        ensure_topics(settings.kafka, topics, settings.kafka_partitions, settings.connect_timeout)
        system.log = KafkaPublisher(settings.kafka, topics, settings.connect_timeout)
        system.router = None
        system.relay = OutboxRelay(app, settings.kafka, topics)
    return system


def decision_model(settings: Settings) -> DecisionModel:
    """Claude through the Anthropic API when ANTHROPIC_API_KEY is set, else the deterministic offline policy."""
    if settings.anthropic_api_key:
        from loopline.adapters.anthropic_model import AnthropicModel

        return AnthropicModel.from_settings(settings)
    return OfflinePolicy()


def model_concurrency() -> int:
    """LOOPLINE_MODEL_CONCURRENCY: model calls in flight at once (default 16)."""
    try:
        return concurrency_from_env()
    except ValueError as error:
        raise InvalidSetting(str(error)) from None


def channels_for(settings: Settings) -> list[OutboundChannel]:
    """The JSONL outbox and text messages (each tenant's `sms_url`) always; email to contacts and webhooks to the
    owner and agent when configured."""
    channels: list[OutboundChannel] = [JsonlOutbox(settings.home / "outbox.jsonl"), SmsChannel(HttpSms())]
    if settings.smtp_url:
        channels.append(SmtpChannel(SmtpServer.from_url(settings.smtp_url), settings.email_from))
    if settings.webhook_url:
        if not settings.webhook_secret:
            raise InvalidSetting("LOOPLINE_WEBHOOK_URL is set but LOOPLINE_WEBHOOK_SECRET is not: set the secret "
                                 "the receiver verifies X-Loopline-Signature with")
        channels.append(WebhookChannel(settings.webhook_url, settings.webhook_secret))
    return channels
