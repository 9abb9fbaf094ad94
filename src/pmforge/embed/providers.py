"""Which embedder a project uses, from the settings: each provider's SDK loads only when it is chosen."""

from __future__ import annotations

from pmforge.core.settings import Settings
from pmforge.embed.base import Embedder


def make_embedder(settings: Settings) -> Embedder:
    choice = settings.embeddings
    if choice == "auto":
        choice = "voyage" if settings.voyage_api_key else "local"
    if choice == "voyage":
        from pmforge.embed.voyage import VoyageEmbedder  # each provider's SDK loads only when chosen

        return VoyageEmbedder.from_settings(settings)
    if choice == "openai":
        from pmforge.embed.openai_embed import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    if choice == "hashing":
        from pmforge.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    from pmforge.embed.local import LocalEmbedder

    return LocalEmbedder()
