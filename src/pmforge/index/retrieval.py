"""The retrievers the turn and the evaluations share: vector, BM25, or hybrid.

Documents are small-to-big: leaf windows are searched, and what reaches the
prompt is cut from their parent section — the whole section when it is small,
otherwise each matched window widened to whole sentences and a little context —
merged where spans overlap and packed to the section's token budget by score.
Conversation memory searches what both sides said (and the turn summaries), and
a later turn that restates an earlier one outranks it.

Hybrid fuses the two rankings: weighted reciprocal-rank fusion, or a weighted
sum of scores normalised per list (`fusion` in config; the evaluations decide).
The query is embedded at most once per turn, and only when a vector ranking is
asked for, so a BM25-only configuration makes no embedding call at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Literal

from pmforge.core.models import RetrievedSection, RetrievedTurn
from pmforge.core.sentences import clause_starts
from pmforge.core.settings import Settings
from pmforge.core.tokens import count_tokens
from pmforge.embed import Embeds
from pmforge.index.collections import CONVERSATIONS, ProjectStore, turn_id_of
from pmforge.index.keyword import tokenize

Retriever = Literal["vector", "bm25", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = ("vector", "bm25", "hybrid")


class Query:
    """A query's text and, on first use, its embedding."""

    def __init__(self, text: str, embedder: Embeds):
        self.text = text
        self._embedder = embedder
        self._vector: list[float] | None = None

    @property
    def vector(self) -> list[float]:
        if self._vector is None:
            self._vector = self._embedder.embed_query(self.text)
        return self._vector


# ---------------------------------------------------------------- fusion

def fuse(rankings: list[tuple[list, float]], k0: int) -> dict:
    """Weighted reciprocal-rank fusion: each list adds weight / (k0 + rank) to the items it ranks."""
    fused: dict = {}
    for ranked, weight in rankings:
        for rank, item in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k0 + rank)
    return fused


def fuse_scores(scored: list[tuple[list[tuple], float]], floor: str = "zero", depth: int = 40) -> dict:
    """Weighted sum of each list's scores rescaled to 0..1: unlike rank fusion, a match far ahead in one
    list (a rare name or code in BM25) keeps its lead instead of losing to middling consensus.
    `floor="min"` rescales between the list's worst and best candidate: cosine similarities bunch near
    the top (0.8–1.0 of the best), and dividing by the best alone lets any vector candidate outrank most
    keyword hits. The worst is taken within the first `depth` candidates, so fetching deeper lists adds
    candidates without changing how the first ones compare."""
    fused: dict = {}
    for pairs, weight in scored:
        if not pairs:
            continue
        top = max(s for _, s in pairs)
        head = sorted((s for _, s in pairs), reverse=True)[:depth]
        low = min(head) if floor == "min" and len(head) > 1 else 0.0
        if top <= low:
            low = 0.0
        if top <= 0:
            continue
        for item, score in pairs:
            fused[item] = fused.get(item, 0.0) + weight * max(score - low, 0.0) / (top - low)
    return fused


def _combine(scored: list[tuple[list[tuple], float]], settings: Settings) -> dict:
    if settings.fusion == "rrf":
        return fuse([([item for item, _ in pairs], weight) for pairs, weight in scored], settings.rrf_k)
    return fuse_scores(scored, floor="min" if settings.fusion == "minmax" else "zero", depth=settings.fusion_depth)


# ---------------------------------------------------------------- documents

@dataclass
class _Hit:
    parent_id: str
    start: int
    end: int
    score: float


def widen(parent: RetrievedSection, start: int, end: int, context_tokens: int) -> tuple[int, int]:
    """A matched window grown to whole sentences (or clauses) inside its parent, then by whole neighbouring sentences
    (after first, then before) while they fit in `context_tokens`. Offsets stay absolute."""
    text, base = parent.text, parent.start
    lo, hi = max(0, start - base), min(len(text), end - base)
    starts = sorted({0, *clause_starts(text)}) + [len(text)]
    lo = max(s for s in starts if s <= lo)
    hi = min((s for s in starts if s >= hi), default=len(text))
    spent = 0
    grew = True
    while grew and spent < context_tokens:
        grew = False
        after = min((s for s in starts if s > hi), default=None)
        if after is not None:
            cost = count_tokens(text[hi:after])
            if spent + cost <= context_tokens:
                hi, spent, grew = after, spent + cost, True
        before = max((s for s in starts if s < lo), default=None)
        if before is not None:
            cost = count_tokens(text[before:lo])
            if spent + cost <= context_tokens:
                lo, spent, grew = before, spent + cost, True
    while lo < hi and text[lo].isspace():
        lo += 1
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    return base + lo, base + hi


def focus(parent: RetrievedSection, start: int, end: int, terms: set[str]) -> tuple[int, int]:
    """The one sentence of a matched window that shares most words with the query: what is shown when
    even the window is too big for the budget left."""
    text, base = parent.text, parent.start
    starts = sorted({0, *clause_starts(text)}) + [len(text)]
    best, span = -1, (start, end)
    for a, b in zip(starts, starts[1:]):
        if b <= start - base or a >= end - base:
            continue
        score = len(terms & set(tokenize(text[a:b])))
        if score > best:
            best, span = score, (base + a, base + len(text[a:b].rstrip()) + a)
    return span


def _cut(parent: RetrievedSection, start: int, end: int, score: float) -> RetrievedSection:
    whole = start <= parent.start and end >= parent.end
    return parent.model_copy(update={
        "id": parent.id if whole else f"{parent.id}@{start}-{end}",
        "start": start, "end": end, "score": round(score, 4),
        "text": parent.text[start - parent.start : end - parent.start],
    })


def block_tokens(section: RetrievedSection) -> int:
    """What a passage costs in the documents section: its text plus the tag that cites it."""
    return count_tokens(section.text) + count_tokens(section.citation) + 16


def pack_passages(
    hits: list[_Hit], parents: dict[str, RetrievedSection], budget: int, settings: Settings,
    query_terms: Iterable[str] = frozenset(),
) -> list[RetrievedSection]:
    """Best hits first: each becomes its whole parent when the parent is small, else its window widened to
    sentences and context; a hit inside a passage already chosen widens that passage instead; whatever
    does not fit the budget is tried as the bare sentences it matched, then as its sentence closest to
    the query, then skipped. Never cut mid-sentence."""
    chosen: list[RetrievedSection] = []
    used = 0
    for hit in hits:
        if len(chosen) >= settings.document_passages and not any(
            c.id.split("@")[0] == hit.parent_id for c in chosen
        ):
            continue
        parent = parents.get(hit.parent_id)
        if parent is None:
            continue
        if count_tokens(parent.text) <= settings.section_whole_tokens:
            options = [(parent.start, parent.end)]
        else:
            options = [widen(parent, hit.start, hit.end, settings.passage_context_tokens),
                       widen(parent, hit.start, hit.end, 0), focus(parent, hit.start, hit.end, set(query_terms))]
        for start, end in options:
            same = [i for i, c in enumerate(chosen)
                    if c.file_id == parent.file_id and c.start <= end + 1 and start <= c.end + 1
                    and c.id.split("@")[0] == parent.id]
            if same:
                lo = min([start] + [chosen[i].start for i in same])
                hi = max([end] + [chosen[i].end for i in same])
                merged = _cut(parent, lo, hi, max([hit.score] + [chosen[i].score for i in same]))
                cost = block_tokens(merged) - sum(block_tokens(chosen[i]) for i in same)
                if used + cost <= budget:
                    chosen = [c for i, c in enumerate(chosen) if i not in same] + [merged]
                    used += cost
                    break
            else:
                passage = _cut(parent, start, end, hit.score)
                cost = block_tokens(passage)
                if used + cost <= budget:
                    chosen.append(passage)
                    used += cost
                    break
    return ordered(chosen)


def ordered(passages: list[RetrievedSection]) -> list[RetrievedSection]:
    """Files in order of their best passage, and each file's passages in reading order."""
    best: dict[str, float] = {}
    for p in passages:
        best[p.file_id] = max(p.score, best.get(p.file_id, float("-inf")))
    return sorted(passages, key=lambda p: (-best[p.file_id], p.filename, p.start))


def _document_hits(
    store: ProjectStore, query: Query, retriever: Retriever, settings: Settings, file_ids: list[str] | None,
) -> tuple[list[_Hit], dict[str, RetrievedSection]]:
    """Matched leaf windows above the relevance floor, best first, and their parent sections."""
    depth = settings.leaf_candidates
    scored, clears, spans = [], set(), {}
    ranked_vector = []
    if retriever in ("vector", "hybrid"):
        ranked = ranked_vector = store.documents.vector_windows(query.vector, depth, file_ids)
        scored.append(([(w, s) for w, s, _ in ranked], settings.vector_weight))
        clears |= {w for w, s, _ in ranked if s >= settings.min_similarity}
        spans.update({w: m for w, _, m in ranked})
    if retriever in ("bm25", "hybrid"):
        ranked = store.documents.keyword_windows(query.text, depth, file_ids)
        scored.append(([(w, s) for w, s, _ in ranked], settings.keyword_weight))
        # Alone, BM25 has no other relevance signal: every match stays. In hybrid, a passage holding most
        # of the query's information (an exact code or name) clears the floor even when vectors miss it.
        floor = settings.min_keyword_coverage if retriever == "hybrid" else 0.0
        clears |= {w for w, _, m in ranked if m["coverage"] >= floor}
        spans.update({w: m for w, _, m in ranked if w not in spans})
    if clears and retriever in ("vector", "hybrid"):
        # Once one passage shows the files do speak to the question, weaker matches may fill the rest of
        # the budget: answers are often worded unlike the question (measured on public document-QA sets).
        clears |= {w for w, s, _ in ranked_vector if s >= settings.min_similarity_follow}
    fused = _combine(scored, settings)
    # Below the relevance floor a passage is noise: better "not in your files" than a confident guess.
    hits = [
        _Hit(spans[w]["parent_id"], int(spans[w].get("start", 0)), int(spans[w].get("end", 0)), fused[w])
        for w in sorted(fused, key=fused.__getitem__, reverse=True) if w in clears
    ]
    wanted = list(dict.fromkeys(h.parent_id for h in hits))
    parents = {p.id: p for p in store.documents.get_parents([(pid, 0.0) for pid in wanted])}
    for hit in hits:  # a keyword index saved before offsets were kept: the parent is the span
        if hit.end <= hit.start and hit.parent_id in parents:
            hit.start, hit.end = parents[hit.parent_id].start, parents[hit.parent_id].end
    return hits, parents


def find_sections(
    store: ProjectStore, query: Query, budget: int, retriever: Retriever, settings: Settings,
    file_ids: list[str] | None = None,
) -> list[RetrievedSection]:
    """The passages of the uploaded files this query needs, packed within `budget` tokens."""
    hits, parents = _document_hits(store, query, retriever, settings, file_ids)
    return pack_passages(hits, parents, budget, settings, set(tokenize(query.text)))


def find_parents(
    store: ProjectStore, query: Query, k: int, retriever: Retriever, settings: Settings,
    file_ids: list[str] | None = None,
) -> list[RetrievedSection]:
    """The k best whole sections, best first: for comparing retrievers apart from packing."""
    hits, parents = _document_hits(store, query, retriever, settings, file_ids)
    best: dict[str, float] = {}
    for hit in hits:
        best.setdefault(hit.parent_id, hit.score)
    return [parents[p].model_copy(update={"score": round(s, 4)}) for p, s in list(best.items())[:k] if p in parents]


# ---------------------------------------------------------------- conversation memory

@lru_cache(maxsize=4096)  # an earlier turn's words never change; it is compared on many turns
def _terms(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def supersede(turns: list[RetrievedTurn], settings: Settings, consider: int) -> None:
    """Recency among near-duplicates: when a later turn restates an earlier one (most of the shorter
    message's words recur in the other) and scores nearly as well, it ranks above it — "the budget is
    now 350k" wins over the first figure. Only the `consider` best candidates are compared."""
    top = sorted(turns, key=lambda t: t.score, reverse=True)[:consider]
    words = {id(t): _terms(t.user) for t in top}
    by_time = sorted(top, key=lambda t: t.turn_number)
    for i, earlier in enumerate(by_time):
        a = words[id(earlier)]
        for later in by_time[i + 1 :]:
            b = words[id(later)]
            if (a and b and settings.supersede_ratio * earlier.score <= later.score < earlier.score
                    and len(a & b) / min(len(a), len(b)) >= settings.supersede_overlap):
                later.score = round(earlier.score * 1.001, 6)


def neighbour_bonus(
    scores: dict[int, float], weight: float, eligible: Iterable[int] = frozenset(),
) -> dict[int, float]:
    """What each turn gains from the turns beside it: `weight` times its better neighbour's score (the turn
    just before or after, by number). An answer often shares no words with the question it answers ("it
    taught me to accept myself" after "what did you take from the book?"), so the turn next to a strong
    match is likely part of the same exchange, and a turn among several matches outranks an isolated one.
    Turns without a score of their own gain too when they are `eligible` (searchable)."""
    if weight <= 0:
        return {}
    numbers = set(scores) | ({n + d for n in scores for d in (-1, 1)} & set(eligible))
    bonus = {n: weight * max(scores.get(n - 1, 0.0), scores.get(n + 1, 0.0)) for n in numbers}
    return {n: b for n, b in bonus.items() if b > 0}


def _searchable_numbers(store: ProjectStore, before_turn: int | None) -> dict[str, int]:
    """Turn id → number of the turns memory search may return (this clone's, before the recent window)."""
    visible = store.memory.visible_turns()
    numbers = {turn_id_of(i): n for i, n in store.keyword(CONVERSATIONS).numbers().items()}
    return {t: n for t, n in numbers.items() if t in visible and (before_turn is None or n < before_turn)}


def with_neighbours(
    ranked: list[tuple[str, float]], numbers: dict[str, int], weight: float, k: int,
) -> list[tuple[str, float]]:
    """The fused ranking with each turn's neighbour bonus added, and the neighbours of the best 2k
    candidates joined, best first, cut to the 4k that can still reach the k shown."""
    by_number: dict[int, float] = {}
    for t, s in ranked:
        if t in numbers:
            by_number[numbers[t]] = max(s, by_number.get(numbers[t], 0.0))
    ids = {n: t for t, n in numbers.items()}
    top = sorted(by_number, key=by_number.__getitem__, reverse=True)[: 2 * k]
    eligible = {n + d for n in top for d in (-1, 1)} & set(ids)
    bonus = neighbour_bonus(by_number, weight, eligible - set(by_number))
    scored = {t: s + bonus.get(numbers.get(t, -1), 0.0) for t, s in ranked}
    for n in eligible - set(by_number):
        if n in bonus:
            scored[ids[n]] = bonus[n]
    return sorted(scored.items(), key=lambda kv: kv[1], reverse=True)[: 4 * k]


def find_turns(
    store: ProjectStore, query: Query, k: int, retriever: Retriever, settings: Settings,
    before_turn: int | None = None, boost_probe: str | None = None,
) -> list[RetrievedTurn]:
    """Up to k earlier turns of this clone's conversation, best first; turns of the active probe get a
    bonus, and the turns beside a match share some of its score. Turns are keyed by their transcript id
    throughout (two clones' turn 3 are two turns)."""
    depth = max(settings.conversation_candidates, 2 * k)
    scored, matched = [], {}
    if retriever in ("vector", "hybrid"):
        ranked = store.memory.vector_turns(query.vector, depth, before_turn)
        scored.append(([(t, s) for t, s, _ in ranked], settings.vector_weight))
        matched = {t: m for t, _, m in ranked}
    if retriever in ("bm25", "hybrid"):
        scored.append((store.memory.keyword_turns(query.text, depth, before_turn),
                       settings.conversation_keyword_weight))
    fused = _combine(scored, settings)
    ranked = sorted(fused.items(), key=lambda kv: kv[1], reverse=True)
    if settings.conversation_neighbour_weight > 0 and ranked:
        ranked = with_neighbours(ranked, _searchable_numbers(store, before_turn),
                                 settings.conversation_neighbour_weight, k)
    turns = store.memory.get_turns(ranked)
    for t in turns:
        m = matched.get(t.turn_id) or {}
        if m.get("side") in ("user", "assistant"):
            t.match_side, t.match_start, t.match_end = m["side"], int(m.get("start", 0)), int(m.get("end", 0))
        if boost_probe and t.active_probe == boost_probe:
            t.score = round(t.score * (1 + settings.probe_boost), 6)
    supersede(turns, settings, consider=2 * k)
    return sorted(turns, key=lambda t: t.score, reverse=True)[:k]
