"""Embedding providers: Voyage or any OpenAI-compatible server online, all-MiniLM-L6-v2 ONNX offline."""

from pmforge.embed.base import Embedder, Embeds, EmbedStats
from pmforge.embed.providers import make_embedder

__all__ = ["Embedder", "Embeds", "EmbedStats", "make_embedder"]
