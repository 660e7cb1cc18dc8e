"""The model behind the decision port, chosen by configuration: Claude when ANTHROPIC_API_KEY is set,
else the deterministic offline policy (so the demo and tests run anywhere)."""

from __future__ import annotations

from loopline.adapters.anthropic_model import AnthropicModel
from loopline.adapters.config import Settings
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.processors.ports import DecisionModel


def decision_model(settings: Settings) -> DecisionModel:
    if settings.anthropic_api_key:
        return AnthropicModel.from_settings(settings)
    return OfflinePolicy()
