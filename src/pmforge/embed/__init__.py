"""Embedding providers: Voyage or any OpenAI-compatible server online, all-MiniLM-L6-v2 ONNX offline."""

from __future__ import annotations

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings
from pmforge.embed.base import Embedder, Embeds, EmbedStats


def make_embedder(settings: Settings) -> Embedder:
    choice = settings.embeddings
    if choice == "auto":
        choice = "voyage" if settings.voyage_api_key else "local"
    if choice == "voyage":
        from pmforge.embed.voyage import VoyageEmbedder  # each provider's SDK loads only when chosen

        if not settings.voyage_api_key:
            raise ForgeError("FORGE_EMBEDDINGS=voyage needs VOYAGE_API_KEY to be set.")
        return VoyageEmbedder(
            settings.voyage_api_key.get_secret_value(),
            model=settings.voyage_model,
            dimensions=settings.voyage_dimensions,
            base_url=settings.voyage_base_url,
            batch_size=settings.voyage_batch_size,
            batch_tokens=settings.voyage_batch_tokens,
            max_attempts=settings.voyage_max_attempts,
            backoff_s=settings.voyage_backoff_s,
            max_wait_s=settings.voyage_max_wait_s,
            timeout_s=settings.voyage_timeout_s,
        )
    if choice == "openai":
        from pmforge.embed.openai_embed import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    if choice == "hashing":
        from pmforge.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    from pmforge.embed.local import LocalEmbedder

    return LocalEmbedder()


__all__ = ["Embedder", "Embeds", "EmbedStats", "make_embedder"]
