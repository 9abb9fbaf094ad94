"""The retrievers the turn and the evaluations share: vector, BM25, or hybrid.

Hybrid is weighted reciprocal-rank fusion of the two rankings. The query is
embedded at most once per turn, and only when a vector ranking is asked for, so
a BM25-only configuration makes no embedding call at all.
"""

from __future__ import annotations

from typing import Literal

from config import Settings

from .embed import Embedder
from .models import RetrievedSection, RetrievedTurn
from .store.collections import ProjectStore

Retriever = Literal["vector", "bm25", "hybrid"]
RETRIEVERS: tuple[str, ...] = ("vector", "bm25", "hybrid")


class Query:
    """A query's text and, on first use, its embedding."""

    def __init__(self, text: str, embedder: Embedder):
        self.text = text
        self._embedder = embedder
        self._vector: list[float] | None = None

    @property
    def vector(self) -> list[float]:
        if self._vector is None:
            self._vector = self._embedder.embed_query(self.text)
        return self._vector


def fuse(rankings: list[tuple[list, float]], k0: int) -> dict:
    """Weighted reciprocal-rank fusion: each list adds weight / (k0 + rank) to the items it ranks."""
    fused: dict = {}
    for ranked, weight in rankings:
        for rank, item in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k0 + rank)
    return fused


def find_sections(
    store: ProjectStore, query: Query, k: int, retriever: Retriever, settings: Settings,
    file_ids: list[str] | None = None,
) -> list[RetrievedSection]:
    candidates = max(settings.leaf_candidates, 3 * k)
    rankings = []
    if retriever in ("vector", "hybrid"):
        rankings.append(([p for p, _ in store.vector_parents(query.vector, candidates, file_ids)], settings.vector_weight))
    if retriever in ("bm25", "hybrid"):
        rankings.append(([p for p, _ in store.keyword_parents(query.text, candidates, file_ids)], settings.keyword_weight))
    fused = fuse(rankings, settings.rrf_k)
    top = sorted(fused, key=fused.get, reverse=True)[:k]
    return store.get_parents([(p, fused[p]) for p in top])


def find_turns(
    store: ProjectStore, query: Query, k: int, retriever: Retriever, settings: Settings,
    before_turn: int | None = None, boost_probe: str | None = None,
) -> list[RetrievedTurn]:
    """The k most relevant earlier turns, in chronological order; turns of the active probe get a bonus."""
    candidates = max(settings.conversation_candidates, 2 * k)
    rankings = []
    if retriever in ("vector", "hybrid"):
        rankings.append(([n for n, _ in store.vector_turns(query.vector, candidates, before_turn)], settings.vector_weight))
    if retriever in ("bm25", "hybrid"):
        rankings.append(([n for n, _ in store.keyword_turns(query.text, candidates, before_turn)], settings.keyword_weight))
    fused = fuse(rankings, settings.rrf_k)
    turns = store.get_turns(sorted(fused.items(), key=lambda kv: kv[1], reverse=True))
    if boost_probe:
        for t in turns:
            if t.active_probe == boost_probe:
                t.score = round(t.score * (1 + settings.probe_boost), 6)
    chosen = sorted(turns, key=lambda t: t.score, reverse=True)[:k]
    return sorted(chosen, key=lambda t: t.turn_number)
