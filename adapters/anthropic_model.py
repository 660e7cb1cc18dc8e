"""The `DecisionModel` adapter for Claude through the official `anthropic` SDK.

One Messages API call per decision, its answer forced through the decision point's tool
(`tool_choice` names it), so the model can only answer with the tool's input; that input is then
checked against the same schema. The SDK retries 429 and 5xx answers and timeouts with
exponential backoff, honours `retry-after`, and reads ANTHROPIC_BASE_URL; whatever still fails
becomes `ModelUnavailable` with the reason, never a crash. One client serves every thread (the
SDK's HTTP client is thread-safe and pools connections), so decisions can run concurrently. The
prompt's stable system layers are sent with `cache_control` (Anthropic prompt caching): the usage
recorded with each decision shows the tokens read from the cache.
"""

from __future__ import annotations

from typing import Any

import anthropic

from loopline.adapters.config import DEFAULT_MODEL, Settings
from loopline.processors.model.tools import TOOLS, InvalidToolInput, validate
from loopline.processors.ports import Conversation, Decision, DecisionRequest, ModelUnavailable, Prompt, Reply

MAX_TOKENS = 1024
"""A message or an evaluation is a few hundred tokens; the cap bounds the cost of a runaway answer."""
CACHE_BREAKPOINTS = 4
"""The most `cache_control` marks the Messages API takes in one request."""


class AnthropicModel:
    name = "anthropic"

    def __init__(
        self, *, api_key: str, model: str = DEFAULT_MODEL, timeout: float = 60.0, max_retries: int = 3,
        base_url: str | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        # base_url None: the SDK takes ANTHROPIC_BASE_URL, else the public API.
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)

    @classmethod
    def from_settings(cls, settings: Settings) -> AnthropicModel:
        if not settings.anthropic_api_key:
            raise ValueError("AnthropicModel needs ANTHROPIC_API_KEY")
        return cls(api_key=settings.anthropic_api_key, model=settings.model, timeout=settings.model_timeout,
                   max_retries=settings.model_retries)

    def decide(self, request: DecisionRequest) -> Decision:
        point = request.point
        if point not in TOOLS:
            raise ModelUnavailable(f"no tool for decision point {point!r}; known: {', '.join(TOOLS)}")
        message = self._call(request)
        tool_use = next((block for block in message.content if block.type == "tool_use" and block.name == point), None)
        if tool_use is None:
            kinds = ", ".join(block.type for block in message.content) or "nothing"
            raise ModelUnavailable(f"{self.model} answered {kinds} instead of calling the {point} tool")
        try:
            output = validate(point, tool_use.input)
        except InvalidToolInput as error:
            raise ModelUnavailable(f"{self.model} answered off the {point} schema: {error}") from None
        return Decision(
            point=point, adapter=self.name, model=message.model or self.model, output=output,
            confidence=float(output["confidence"]), reasoning=output["reasoning"],
            prompt_digest=request.prompt.digest, input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens, cache_read_tokens=message.usage.cache_read_input_tokens or 0,
            cache_write_tokens=message.usage.cache_creation_input_tokens or 0,
        )

    def converse(self, request: Conversation) -> Reply:
        """A brain call: the request's tools with tool_choice auto; the answer's text and tool calls as they came."""
        message = self._create(request.prompt, list(request.tools), {"type": "auto"})
        content = tuple(
            {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
            if block.type == "tool_use" else {"type": "text", "text": block.text}
            for block in message.content if block.type in ("tool_use", "text")
        )
        return Reply(adapter=self.name, model=message.model or self.model, content=content,
                     prompt_digest=request.prompt.digest, input_tokens=message.usage.input_tokens,
                     output_tokens=message.usage.output_tokens)

    def _call(self, request: DecisionRequest) -> Any:
        return self._create(request.prompt, [TOOLS[request.point]], {"type": "tool", "name": request.point})

    def _create(self, prompt: Prompt, tools: list[dict[str, Any]], tool_choice: dict[str, Any]) -> Any:
        tries = f"{self.max_retries + 1} {'try' if self.max_retries == 0 else 'tries'}"
        try:
            return self._client.messages.create(
                model=self.model, max_tokens=MAX_TOKENS, system=system_param(prompt),
                messages=list(prompt.messages), tools=tools, tool_choice=tool_choice,  # type: ignore[arg-type]
            )
        except anthropic.APITimeoutError:
            raise ModelUnavailable(f"{self.model} did not answer within {self.timeout:g} s ({tries})") from None
        except anthropic.APIConnectionError as error:
            raise ModelUnavailable(f"the Messages API could not be reached ({tries}): {error}") from None
        except anthropic.APIStatusError as error:
            after = f" after {tries}" if error.status_code == 429 or error.status_code >= 500 else ""
            raise ModelUnavailable(f"the Messages API answered HTTP {error.status_code}{after}: {error.message}") from None
        except anthropic.AnthropicError as error:  # e.g. an answer that is not a Message at all
            raise ModelUnavailable(f"the Messages API call failed: {error}") from None


def system_param(prompt: Prompt) -> str | list[dict[str, Any]]:
    """The system prompt as the Messages API takes it: its layers as text blocks, each of the last
    CACHE_BREAKPOINTS ending a prompt-cache prefix (the tools, then the base and the tenant's profile, then the
    type's skill), so a tenant's repeated decisions read the stable layers from the cache (usage:
    `cache_read_input_tokens`); the API caches a prefix only from its model's minimum length on."""
    if not prompt.system_blocks:
        return prompt.system
    marked = range(len(prompt.system_blocks))[-CACHE_BREAKPOINTS:]
    return [{"type": "text", "text": text, **({"cache_control": {"type": "ephemeral"}} if place in marked else {})}
            for place, text in enumerate(prompt.system_blocks)]
