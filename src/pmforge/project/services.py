"""The services a project runs on — settings, the LLM, the embedder — chosen once per process from the
settings: Claude, an OpenAI-compatible server or the offline interviewer; Voyage, OpenAI or the local model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pmforge.core.settings import Settings, get_settings
from pmforge.embed import Embedder, make_embedder
from pmforge.interviewer.offline import OfflineLLM
from pmforge.llm.base import LLM


def make_llm(settings: Settings) -> LLM:
    choice = settings.llm
    if choice == "auto":
        choice = "anthropic" if settings.anthropic_api_key else "offline"
    if choice == "anthropic":
        from pmforge.llm.anthropic_llm import AnthropicLLM  # the SDK loads only when it is chosen

        return AnthropicLLM.from_settings(settings)
    if choice == "openai":
        from pmforge.llm.openai_llm import OpenAILLM  # the SDK loads only when it is chosen

        return OpenAILLM.from_settings(settings)
    return OfflineLLM(settings)


@dataclass
class Services:
    settings: Settings
    llm: LLM
    embedder: Embedder

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> "Services":
        settings = settings or get_settings()
        return cls(settings=settings, llm=make_llm(settings), embedder=make_embedder(settings))

    @property
    def projects_root(self) -> Path:
        return self.settings.projects_root()

    def describe(self) -> dict[str, str]:
        """Which providers are active, for the UI and the CLI."""
        s = self.settings
        return {
            "llm": (getattr(self.llm, "description", "") or f"Claude ({s.phase_b_model} / {s.phase_a_model})")
            if self.llm.online else "offline interviewer",
            "embeddings": self.embedder.signature,
            "vector_store": f"Chroma server {s.chroma_host}:{s.chroma_port}" if s.chroma_host else "embedded Chroma",
        }
