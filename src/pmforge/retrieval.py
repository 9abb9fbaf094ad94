"""The retrievers the turn and the evaluations share: vector, BM25, or hybrid.

Hybrid fuses the two rankings: weighted reciprocal-rank fusion, or a weighted sum
of scores normalised by each list's best (`fusion` in config; the evaluations decide). The query is
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


def fuse_scores(scored: list[tuple[list[tuple], float]]) -> dict:
    """Weighted sum of each list's scores divided by its best score: unlike rank fusion, a match far ahead
    in one list (a rare name or code in BM25) keeps its lead instead of losing to middling consensus."""
    fused: dict = {}
    for pairs, weight in scored:
        top = max((s for _, s in pairs), default=0.0)
        if top <= 0:
            continue
        for item, score in pairs:
            fused[item] = fused.get(item, 0.0) + weight * max(score, 0.0) / top
    return fused


def _combine(scored: list[tuple[list[tuple], float]], settings: Settings) -> dict:
    if settings.fusion == "score":
        return fuse_scores(scored)
    return fuse([([item for item, _ in pairs], weight) for pairs, weight in scored], settings.rrf_k)


def find_sections(
    store: ProjectStore, query: Query, k: int, retriever: Retriever, settings: Settings,
    file_ids: list[str] | None = None,
) -> list[RetrievedSection]:
    candidates = max(settings.leaf_candidates, 3 * k)
    scored, clears = [], set()
    if retriever in ("vector", "hybrid"):
        ranked = store.vector_parents(query.vector, candidates, file_ids)
        scored.append((ranked, settings.vector_weight))
        clears |= {p for p, s in ranked if s >= settings.min_similarity}
    if retriever in ("bm25", "hybrid"):
        ranked = store.keyword_parents(query.text, candidates, file_ids)
        scored.append(([(p, s) for p, s, _ in ranked], settings.keyword_weight))
        # Alone, BM25 has no other relevance signal: every match stays. In hybrid, a passage holding most
        # of the query's information (an exact code or name) clears the floor even when vectors miss it.
        floor = settings.min_keyword_coverage if retriever == "hybrid" else 0.0
        clears |= {p for p, _, c in ranked if c >= floor}
    fused = _combine(scored, settings)
    # Below the relevance floor a section is noise: better "not in your files" than a confident guess.
    top = [p for p in sorted(fused, key=fused.get, reverse=True) if p in clears][:k]
    return store.get_parents([(p, fused[p]) for p in top])


def find_turns(
    store: ProjectStore, query: Query, k: int, retriever: Retriever, settings: Settings,
    before_turn: int | None = None, boost_probe: str | None = None,
) -> list[RetrievedTurn]:
    """The k most relevant earlier turns, in chronological order; turns of the active probe get a bonus."""
    candidates = max(settings.conversation_candidates, 2 * k)
    scored = []
    if retriever in ("vector", "hybrid"):
        scored.append((store.vector_turns(query.vector, candidates, before_turn), settings.vector_weight))
    if retriever in ("bm25", "hybrid"):
        scored.append((store.keyword_turns(query.text, candidates, before_turn), settings.keyword_weight))
    fused = _combine(scored, settings)
    turns = store.get_turns(sorted(fused.items(), key=lambda kv: kv[1], reverse=True))
    if boost_probe:
        for t in turns:
            if t.active_probe == boost_probe:
                t.score = round(t.score * (1 + settings.probe_boost), 6)
    chosen = sorted(turns, key=lambda t: t.score, reverse=True)[:k]
    return sorted(chosen, key=lambda t: t.turn_number)
