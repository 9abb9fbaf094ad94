"""LLM providers: Claude through `anthropic`, any OpenAI-compatible server through `openai`, and the offline
interviewer."""

from __future__ import annotations

from config import Settings

from ..errors import ForgeError
from .base import LLM, ChatRequest, ChatResponse, ResponseStream, SystemBlock, ToolSpec, ToolUse, Usage


def make_llm(settings: Settings) -> LLM:
    choice = settings.llm
    if choice == "auto":
        choice = "anthropic" if settings.anthropic_api_key else "offline"
    if choice == "anthropic":
        if not settings.anthropic_api_key:
            raise ForgeError("FORGE_LLM=anthropic needs ANTHROPIC_API_KEY to be set.")
        from .anthropic_llm import AnthropicLLM

        return AnthropicLLM(
            settings.anthropic_api_key.get_secret_value(),
            base_url=settings.anthropic_base_url,
            timeout=settings.anthropic_timeout_s,
            max_retries=settings.anthropic_max_retries,
            cache_ttl=settings.cache_ttl,
        )
    if choice == "openai":
        from .openai_llm import OpenAILLM

        return OpenAILLM.from_settings(settings)
    from .offline import OfflineLLM

    return OfflineLLM()


__all__ = ["LLM", "ChatRequest", "ChatResponse", "ResponseStream", "SystemBlock", "ToolSpec", "ToolUse", "Usage", "make_llm"]
