"""The embedder interface every provider implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol


@dataclass
class EmbedStats:
    """Counters the tests and benchmarks read (a filler turn must make zero query embeddings)."""

    document_texts: int = 0
    document_calls: int = 0
    queries: int = 0


class Embeds(Protocol):
    """What indexing and search ask of an embedder: an `Embedder`, or one wrapped to meter its calls
    (`MeteredEmbedder`)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def windows(self, text: str) -> list[tuple[int, int]]: ...


class Embedder(ABC):
    #: identifies the vectors: a collection filled by one embedder is never queried with another
    name: str
    dimensions: int

    def __init__(self) -> None:
        self.stats = EmbedStats()

    @property
    def signature(self) -> str:
        return f"{self.name}/{self.dimensions}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents_billed(texts)[0]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_query_billed(text)[0]

    def embed_documents_billed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """The vectors, and the tokens the provider billed for them (0 for a local model). A text asked for
        twice in one call is embedded (and billed) once: a turn's summary is both its record and a passage."""
        if not texts:
            return [], 0
        self.stats.document_texts += len(texts)
        self.stats.document_calls += 1
        unique = list(dict.fromkeys(texts))
        vectors, tokens = self._embed_billed(unique, kind="document")
        by_text = dict(zip(unique, vectors))
        return [by_text[t] for t in texts], tokens

    def embed_query_billed(self, text: str) -> tuple[list[float], int]:
        self.stats.queries += 1
        vectors, tokens = self._embed_billed([text], kind="query")
        return vectors[0], tokens

    def _embed_billed(self, texts: list[str], kind: str) -> tuple[list[list[float]], int]:
        """A provider that bills by the token overrides this to say how many."""
        return self._embed(texts, kind), 0

    def windows(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of pieces of `text` that each fit the model's input window (one when it already fits):
        offsets, so a search hit can be shown as the exact passage it matched."""
        return [(0, len(text))]

    @abstractmethod
    def _embed(self, texts: list[str], kind: str) -> list[list[float]]: ...
