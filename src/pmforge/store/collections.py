"""A project's collections: `documents` (leaf windows, searched), `document_parents`
(full sections, from which the shown passages are cut), `conversations` (one record per turn:
its summary and both sides, returned) and `conversation_passages` (what each side said, in
windows, plus the summary: searched).

Each collection records the embedder that filled it, so vectors of two models never mix.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import chromadb
import httpx

from ..errors import ForgeError
from ..models import RetrievedSection, RetrievedTurn
from .client import StoreUnavailable
from .keyword import KeywordIndex, TurnIndex

DOCUMENTS, PARENTS, CONVERSATIONS, MEMORY = "documents", "document_parents", "conversations", "conversation_passages"
COLLECTIONS = (DOCUMENTS, PARENTS, CONVERSATIONS, MEMORY)
MAX_TURN_PASSAGES = 64  # summary + both sides' windows; a 10,000-word reply needs about 60


@dataclass
class StoreStats:
    """Counters the tests and benchmarks read (a filler turn must make zero vector queries)."""

    vector_queries: int = 0
    keyword_queries: int = 0
    by_collection: dict[str, int] = field(default_factory=dict)

    def count(self, name: str) -> None:
        self.vector_queries += 1
        self.by_collection[name] = self.by_collection.get(name, 0) + 1


@dataclass
class LeafRecord:
    id: str  # one id per embedding window of a leaf
    leaf_id: str
    parent_id: str
    text: str  # what was embedded (breadcrumb + window)
    start: int
    end: int


@dataclass
class MemoryPassage:
    """One searchable piece of a turn: the summary, or a window of what one side said (offsets into it)."""

    side: str  # "summary" | "user" | "assistant"
    text: str  # what is embedded
    start: int = 0
    end: int = 0


@dataclass
class ParentRecord:
    id: str
    text: str
    section: str
    start: int
    end: int


class EmbedderMismatch(ForgeError):
    pass


def reachable(method):
    """Turn a lost connection to a Chroma server into one clear sentence (the client reconnects by itself
    once the server is back, so the next call simply works)."""

    @functools.wraps(method)
    def guarded(self: "ProjectStore", *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (httpx.TransportError, ConnectionError) as exc:
            raise StoreUnavailable(
                f"{self.location[0].upper()}{self.location[1:]} is not reachable ({type(exc).__name__}); "
                "nothing was changed — try again once it is back."
            ) from None

    return guarded


class ProjectStore:
    """Chroma collections plus their keyword indexes, changed together."""

    def __init__(
        self, client: chromadb.ClientAPI, embedder_signature: str, keyword_dir: Path, prefix: str = "",
        location: str = "the vector store",
    ):
        self.client = client
        self.signature = embedder_signature
        self.prefix = prefix
        self.location = location
        self.stats = StoreStats()
        self._collections: dict[str, chromadb.Collection] = {}
        self._keyword_dir = Path(keyword_dir)
        self._keyword: dict[str, KeywordIndex | TurnIndex] = {}

    def _open_index(self, name: str) -> KeywordIndex | TurnIndex:
        return TurnIndex(self._keyword_dir, name) if name == CONVERSATIONS else KeywordIndex(self._keyword_dir, name)

    def keyword(self, name: str) -> KeywordIndex | TurnIndex:
        if name not in self._keyword:
            index = self._open_index(name)
            self._keyword[name] = index
            if index.stale:
                # Another tokenizer filled it, or it predates this format: Chroma holds every text the index
                # needs, so it is rebuilt from there — nothing is re-embedded.
                self.rebuild_keyword(name)
                if name == CONVERSATIONS:
                    (self._keyword_dir / f"{name}.json").unlink(missing_ok=True)  # the earlier format
        return self._keyword[name]

    # ---- collections
    def _name(self, name: str) -> str:
        return f"{self.prefix}{name}"

    @reachable
    def collection(self, name: str) -> chromadb.Collection:
        if name not in self._collections:
            col = self.client.get_or_create_collection(
                self._name(name),
                metadata={"hnsw:space": "cosine", "embedder": self.signature},
                embedding_function=None,
            )
            filled_by = (col.metadata or {}).get("embedder")
            if filled_by != self.signature:
                raise EmbedderMismatch(
                    f"This project's vectors were made with {filled_by}, not {self.signature}; "
                    "rebuild them with: forge reindex PROJECT"
                )
            self._collections[name] = col
        return self._collections[name]

    @reachable
    def mismatched(self) -> str | None:
        """The embedder that filled an existing collection, when it is not ours."""
        existing = {c.name: c for c in self.client.list_collections()}
        for name in COLLECTIONS:
            col = existing.get(self._name(name))
            if col is not None and (col.metadata or {}).get("embedder") != self.signature:
                return (col.metadata or {}).get("embedder") or "an unknown embedder"
        return None

    @reachable
    def drop_all(self) -> None:
        existing = {c.name for c in self.client.list_collections()}
        for name in COLLECTIONS:
            if self._name(name) in existing:
                self.client.delete_collection(self._name(name))
        self._collections.clear()
        for name in (DOCUMENTS, CONVERSATIONS):
            index = self._keyword.get(name) or self._open_index(name)  # not keyword(): no rebuild to clear
            index.clear()
            self._keyword[name] = index

    def _batched_add(self, col: chromadb.Collection, **columns) -> None:
        size = self.client.get_max_batch_size()
        total = len(columns["ids"])
        for i in range(0, total, size):
            col.upsert(**{k: v[i : i + size] for k, v in columns.items()})

    # ---- documents
    @reachable
    def add_file(
        self,
        file_id: str,
        filename: str,
        leaves: list[LeafRecord],
        leaf_vectors: list[list[float]],
        parents: list[ParentRecord],
        parent_vectors: list[list[float]],
    ) -> None:
        base = {"file_id": file_id, "filename": filename}
        self._batched_add(
            self.collection(PARENTS),
            ids=[p.id for p in parents],
            embeddings=parent_vectors,
            documents=[p.text for p in parents],
            metadatas=[{**base, "section": p.section, "start": p.start, "end": p.end} for p in parents],
        )
        self._batched_add(
            self.collection(DOCUMENTS),
            ids=[l.id for l in leaves],
            embeddings=leaf_vectors,
            documents=[l.text for l in leaves],
            metadatas=[
                {**base, "leaf_id": l.leaf_id, "parent_id": l.parent_id, "start": l.start, "end": l.end}
                for l in leaves
            ],
        )
        self.keyword(DOCUMENTS).upsert(
            [l.id for l in leaves], [l.text for l in leaves],
            [{"file_id": file_id, "parent_id": l.parent_id, "start": l.start, "end": l.end} for l in leaves],
        )

    @reachable
    def delete_file(self, file_id: str) -> None:
        for name in (DOCUMENTS, PARENTS):
            self.collection(name).delete(where={"file_id": file_id})
        self.keyword(DOCUMENTS).delete_where("file_id", file_id)

    @reachable
    def file_ids(self) -> set[str]:
        got = self.collection(PARENTS).get(include=["metadatas"])
        return {m["file_id"] for m in got["metadatas"]}

    @reachable
    def ids(self, name: str) -> set[str]:
        return set(self.collection(name).get(include=[])["ids"])

    @reachable
    def vector_windows(
        self, query_vector: list[float], n: int, file_ids: list[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        """Leaf windows by cosine similarity, best first, as (window id, similarity, {parent_id, start, end})."""
        leaves = self.collection(DOCUMENTS)
        count = leaves.count()
        if count == 0:
            return []
        where = {"file_id": {"$in": file_ids}} if file_ids else None
        self.stats.count(DOCUMENTS)
        hits = leaves.query(
            query_embeddings=[query_vector], n_results=min(n, count), where=where,
            include=["metadatas", "distances"],
        )
        return [(i, 1.0 - d, m) for i, m, d in zip(hits["ids"][0], hits["metadatas"][0], hits["distances"][0])]

    def keyword_windows(self, query: str, n: int, file_ids: list[str] | None = None) -> list[tuple[str, float, dict]]:
        """Leaf windows by BM25, best first, as (window id, score, {parent_id, start, end, coverage})."""
        allowed = set(file_ids) if file_ids else None
        self.stats.keyword_queries += 1
        return self.keyword(DOCUMENTS).search(query, n, (lambda m: m["file_id"] in allowed) if allowed else None)

    def vector_parents(
        self, query_vector: list[float], leaf_candidates: int, file_ids: list[str] | None = None
    ) -> list[tuple[str, float]]:
        """Parent ids ranked by their best leaf's cosine similarity."""
        best: dict[str, float] = {}
        for _, sim, meta in self.vector_windows(query_vector, leaf_candidates, file_ids):
            best[meta["parent_id"]] = max(sim, best.get(meta["parent_id"], -1.0))
        return sorted(best.items(), key=lambda kv: kv[1], reverse=True)

    @reachable
    def get_parents(self, ranked: list[tuple[str, float]]) -> list[RetrievedSection]:
        """The sections for (parent id, score) pairs, in the given order."""
        if not ranked:
            return []
        got = self.collection(PARENTS).get(ids=[pid for pid, _ in ranked], include=["documents", "metadatas"])
        by_id = {i: (doc, meta) for i, doc, meta in zip(got["ids"], got["documents"], got["metadatas"])}
        return [
            RetrievedSection(
                id=pid, file_id=by_id[pid][1]["file_id"], filename=by_id[pid][1]["filename"],
                section=by_id[pid][1].get("section", ""), start=by_id[pid][1]["start"], end=by_id[pid][1]["end"],
                text=by_id[pid][0], score=round(score, 4),
            )
            for pid, score in ranked if pid in by_id
        ]

    def search_documents(
        self, query_vector: list[float], leaf_candidates: int, parents: int, file_ids: list[str] | None = None
    ) -> list[RetrievedSection]:
        """Vector search alone: leaves searched, parents returned, deduplicated."""
        return self.get_parents(self.vector_parents(query_vector, leaf_candidates, file_ids)[:parents])

    # ---- conversations
    @reachable
    def upsert_turn(
        self, turn: RetrievedTurn, vector: list[float],
        passages: list[MemoryPassage] = (), passage_vectors: list[list[float]] = (),
    ) -> None:
        """One turn's record (summary vector, both sides, the question it answered) and its searchable
        passages; replaces whatever was stored for that turn number."""
        n = turn.turn_number
        meta = {"turn_number": n, "user": turn.user, "assistant": turn.assistant}
        for key in ("active_probe", "active_mode", "asked"):
            if getattr(turn, key):
                meta[key] = getattr(turn, key)
        turns, memory = self.collection(CONVERSATIONS), self.collection(MEMORY)
        passages = list(passages)[:MAX_TURN_PASSAGES]
        if turns.get(ids=[f"turn-{n}"], include=[])["ids"]:
            # Re-remembered: drop its old passages by id (a `where` delete scans the whole collection,
            # which would make every turn slower than the last).
            memory.delete(ids=[f"turn-{n}:p{i}" for i in range(MAX_TURN_PASSAGES)])
        turns.upsert(ids=[f"turn-{n}"], embeddings=[vector], documents=[turn.summary], metadatas=[meta])
        if passages:
            self._batched_add(
                memory, ids=[f"turn-{n}:p{i}" for i in range(len(passages))],
                embeddings=list(passage_vectors)[: len(passages)], documents=[p.text for p in passages],
                metadatas=[{"turn_number": n, "side": p.side, "start": p.start, "end": p.end} for p in passages],
            )
        # Keywords index the raw words too: a name said in passing may not survive a summary.
        self.keyword(CONVERSATIONS).upsert([f"turn-{n}"], [_turn_keywords(turn)], [{"turn_number": n}])

    @reachable
    def turn_numbers(self) -> set[int]:
        got = self.collection(CONVERSATIONS).get(include=["metadatas"])
        return {m["turn_number"] for m in got["metadatas"]}

    @reachable
    def vector_turns(
        self, query_vector: list[float], candidates: int, before_turn: int | None = None
    ) -> list[tuple[int, float, dict]]:
        """Turn numbers ranked by their best passage's similarity, with that passage's side and offsets.
        Memory indexed before passages existed is searched by its summaries."""
        col = self.collection(MEMORY)
        if col.count() == 0:
            col = self.collection(CONVERSATIONS)
        count = col.count()
        if count == 0:
            return []
        self.stats.count(col.name[len(self.prefix):])
        # A `where` filter makes Chroma scan (several times slower at 1k turns), and the turns it would
        # exclude are only the few most recent: over-fetch and filter here, unless too few survive.
        margin = 40 if before_turn is not None else 0
        hits = col.query(query_embeddings=[query_vector], n_results=min(candidates + margin, count),
                         include=["metadatas", "distances"])
        rows = [(m, d) for m, d in zip(hits["metadatas"][0], hits["distances"][0])
                if before_turn is None or m["turn_number"] < before_turn]
        if len(rows) < min(candidates, count) // 2 and before_turn is not None:
            hits = col.query(query_embeddings=[query_vector], n_results=min(candidates, count),
                             where={"turn_number": {"$lt": before_turn}}, include=["metadatas", "distances"])
            rows = list(zip(hits["metadatas"][0], hits["distances"][0]))
        best: dict[int, tuple[float, dict]] = {}
        for m, d in rows[:candidates]:
            n = m["turn_number"]
            if n not in best or 1.0 - d > best[n][0]:
                best[n] = (1.0 - d, m)
        return sorted(((n, s, m) for n, (s, m) in best.items()), key=lambda row: row[1], reverse=True)

    def keyword_turns(self, query: str, candidates: int, before_turn: int | None = None) -> list[tuple[int, float]]:
        self.stats.keyword_queries += 1
        return [(m["turn_number"], s) for _, s, m in self.keyword(CONVERSATIONS).search(query, candidates, before_turn)]

    @reachable
    def get_turns(self, ranked: list[tuple[int, float]]) -> list[RetrievedTurn]:
        if not ranked:
            return []
        got = self.collection(CONVERSATIONS).get(
            ids=[f"turn-{n}" for n, _ in ranked], include=["metadatas", "documents"]
        )
        by_number = {m["turn_number"]: (m, doc) for m, doc in zip(got["metadatas"], got["documents"])}
        return [
            RetrievedTurn(
                turn_number=n, active_probe=by_number[n][0].get("active_probe"),
                active_mode=by_number[n][0].get("active_mode"), user=by_number[n][0].get("user", ""),
                assistant=by_number[n][0].get("assistant", ""), asked=by_number[n][0].get("asked", ""),
                summary=by_number[n][1] or "", score=round(score, 6),
            )
            for n, score in ranked if n in by_number
        ]

    # ---- upkeep (forge doctor, forge migrate)
    @reachable
    def file_counts(self) -> dict[str, tuple[int, int]]:
        """file id → (sections stored, distinct passages stored), across both document collections."""
        counts: dict[str, list] = {}
        for meta in self.collection(PARENTS).get(include=["metadatas"])["metadatas"]:
            counts.setdefault(meta["file_id"], [0, set()])[0] += 1
        for meta in self.collection(DOCUMENTS).get(include=["metadatas"])["metadatas"]:
            counts.setdefault(meta["file_id"], [0, set()])[1].add(meta["leaf_id"])
        return {fid: (parents, len(leaves)) for fid, (parents, leaves) in counts.items()}

    @reachable
    def delete_turns(self, numbers: set[int]) -> None:
        if numbers:
            self.collection(CONVERSATIONS).delete(ids=[f"turn-{n}" for n in sorted(numbers)])
            self.collection(MEMORY).delete(where={"turn_number": {"$in": sorted(numbers)}})
            for n in numbers:
                self.keyword(CONVERSATIONS).delete_where("turn_number", n)

    @reachable
    def rebuild_keyword(self, name: str) -> int:
        """Rebuild a keyword index from the texts Chroma holds (it stores everything the index needs)."""
        ids, texts, metas = [], [], []
        for row in self.rows(name):
            meta = row["metadata"]
            ids.append(row["id"])
            if name == DOCUMENTS:
                texts.append(row["document"])
                metas.append({key: meta[key] for key in ("file_id", "parent_id", "start", "end")})
            else:
                texts.append(_turn_keywords(RetrievedTurn(
                    turn_number=meta["turn_number"], user=meta.get("user", ""), assistant=meta.get("assistant", ""),
                    summary=row["document"] or "",
                )))
                metas.append({"turn_number": meta["turn_number"]})
        index = self.keyword(name)
        index.clear()
        if ids:
            index.upsert(ids, texts, metas)
        return len(ids)

    @reachable
    def rows(self, name: str, page: int = 1000) -> Iterator[dict]:
        """Every record of a collection, with its embedding, a page at a time."""
        col = self.collection(name)
        offset = 0
        while True:
            got = col.get(include=["embeddings", "documents", "metadatas"], limit=page, offset=offset)
            if not got["ids"]:
                return
            for i, id_ in enumerate(got["ids"]):
                yield {"id": id_, "embedding": list(map(float, got["embeddings"][i])),
                       "document": got["documents"][i], "metadata": got["metadatas"][i]}
            offset += len(got["ids"])

    @reachable
    def copy_from(self, source: "ProjectStore") -> dict[str, int]:
        """Replace this store's collections with copies of `source`'s (vectors included, nothing re-embedded)."""
        if source.signature != self.signature:
            raise EmbedderMismatch(f"Cannot copy vectors made with {source.signature} into a {self.signature} store.")
        existing = {c.name for c in self.client.list_collections()}
        copied = {}
        for name in COLLECTIONS:
            if self._name(name) in existing:
                self.client.delete_collection(self._name(name))
            self._collections.pop(name, None)
            batch: list[dict] = []
            copied[name] = 0
            for row in source.rows(name):
                batch.append(row)
                if len(batch) >= 1000:
                    self._put(name, batch)
                    copied[name] += len(batch)
                    batch = []
            if batch:
                self._put(name, batch)
                copied[name] += len(batch)
            if self.collection(name).count() != copied[name]:
                raise ForgeError(f"Copying {name} did not complete; nothing was switched over.")
        return copied

    def _put(self, name: str, rows: list[dict]) -> None:
        self._batched_add(
            self.collection(name), ids=[r["id"] for r in rows], embeddings=[r["embedding"] for r in rows],
            documents=[r["document"] for r in rows], metadatas=[r["metadata"] for r in rows],
        )


def _turn_keywords(turn: RetrievedTurn) -> str:
    return f"{turn.summary}\n{turn.user}\n{turn.assistant}"
