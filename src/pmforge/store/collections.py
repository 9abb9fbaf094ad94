"""A project's collections: `documents` (leaf windows, searched), `document_parents`
(full sections, returned) and `conversations` (turn summaries, searched; turn pairs, returned).

Each collection records the embedder that filled it, so vectors of two models never mix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import chromadb

from ..errors import ForgeError
from ..models import RetrievedSection, RetrievedTurn

DOCUMENTS, PARENTS, CONVERSATIONS = "documents", "document_parents", "conversations"


@dataclass
class StoreStats:
    """Counters the tests and benchmarks read (a filler turn must make zero vector queries)."""

    vector_queries: int = 0
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
class ParentRecord:
    id: str
    text: str
    section: str
    start: int
    end: int


class EmbedderMismatch(ForgeError):
    pass


class ProjectStore:
    def __init__(self, client: chromadb.ClientAPI, embedder_signature: str, prefix: str = ""):
        self.client = client
        self.signature = embedder_signature
        self.prefix = prefix
        self.stats = StoreStats()
        self._collections: dict[str, chromadb.Collection] = {}

    # ---- collections
    def _name(self, name: str) -> str:
        return f"{self.prefix}{name}"

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

    def mismatched(self) -> str | None:
        """The embedder that filled an existing collection, when it is not ours."""
        existing = {c.name: c for c in self.client.list_collections()}
        for name in (DOCUMENTS, PARENTS, CONVERSATIONS):
            col = existing.get(self._name(name))
            if col is not None and (col.metadata or {}).get("embedder") != self.signature:
                return (col.metadata or {}).get("embedder") or "an unknown embedder"
        return None

    def drop_all(self) -> None:
        existing = {c.name for c in self.client.list_collections()}
        for name in (DOCUMENTS, PARENTS, CONVERSATIONS):
            if self._name(name) in existing:
                self.client.delete_collection(self._name(name))
        self._collections.clear()

    def _batched_add(self, col: chromadb.Collection, **columns) -> None:
        size = self.client.get_max_batch_size()
        total = len(columns["ids"])
        for i in range(0, total, size):
            col.upsert(**{k: v[i : i + size] for k, v in columns.items()})

    # ---- documents
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

    def delete_file(self, file_id: str) -> None:
        for name in (DOCUMENTS, PARENTS):
            self.collection(name).delete(where={"file_id": file_id})

    def file_ids(self) -> set[str]:
        got = self.collection(PARENTS).get(include=["metadatas"])
        return {m["file_id"] for m in got["metadatas"]}

    def ids(self, name: str) -> set[str]:
        return set(self.collection(name).get(include=[])["ids"])

    def search_documents(
        self, query_vector: list[float], leaf_candidates: int, parents: int, file_ids: list[str] | None = None
    ) -> list[RetrievedSection]:
        leaves = self.collection(DOCUMENTS)
        if leaves.count() == 0:
            return []
        where = {"file_id": {"$in": file_ids}} if file_ids else None
        self.stats.count(DOCUMENTS)
        hits = leaves.query(
            query_embeddings=[query_vector],
            n_results=min(leaf_candidates, leaves.count()),
            where=where,
            include=["metadatas", "distances"],
        )
        best: dict[str, float] = {}
        for meta, dist in zip(hits["metadatas"][0], hits["distances"][0]):
            pid = meta["parent_id"]
            best[pid] = min(dist, best.get(pid, 2.0))
        ranked = sorted(best, key=best.get)[:parents]
        if not ranked:
            return []
        got = self.collection(PARENTS).get(ids=ranked, include=["documents", "metadatas"])
        by_id = {i: (doc, meta) for i, doc, meta in zip(got["ids"], got["documents"], got["metadatas"])}
        out = []
        for pid in ranked:
            if pid not in by_id:
                continue
            doc, meta = by_id[pid]
            out.append(
                RetrievedSection(
                    id=pid,
                    file_id=meta["file_id"],
                    filename=meta["filename"],
                    section=meta.get("section", ""),
                    start=meta["start"],
                    end=meta["end"],
                    text=doc,
                    score=round(1.0 - best[pid], 4),
                )
            )
        return out

    # ---- conversations
    def upsert_turn(self, turn: RetrievedTurn, vector: list[float]) -> None:
        meta = {"turn_number": turn.turn_number, "user": turn.user, "assistant": turn.assistant}
        if turn.active_probe:
            meta["active_probe"] = turn.active_probe
        if turn.active_mode:
            meta["active_mode"] = turn.active_mode
        self.collection(CONVERSATIONS).upsert(
            ids=[f"turn-{turn.turn_number}"], embeddings=[vector], documents=[turn.summary], metadatas=[meta]
        )

    def turn_numbers(self) -> set[int]:
        got = self.collection(CONVERSATIONS).get(include=["metadatas"])
        return {m["turn_number"] for m in got["metadatas"]}

    def search_turns(
        self,
        query_vector: list[float],
        candidates: int,
        k: int,
        before_turn: int | None = None,
        boost_probe: str | None = None,
        boost: float = 0.0,
    ) -> list[RetrievedTurn]:
        """The k most relevant earlier turns, returned in chronological order."""
        col = self.collection(CONVERSATIONS)
        if col.count() == 0:
            return []
        where = {"turn_number": {"$lt": before_turn}} if before_turn is not None else None
        self.stats.count(CONVERSATIONS)
        hits = col.query(
            query_embeddings=[query_vector],
            n_results=min(candidates, col.count()),
            where=where,
            include=["metadatas", "distances", "documents"],
        )
        found = []
        for meta, dist, summary in zip(hits["metadatas"][0], hits["distances"][0], hits["documents"][0]):
            adjusted = dist - (boost if boost_probe and meta.get("active_probe") == boost_probe else 0.0)
            found.append((adjusted, meta, summary))
        found.sort(key=lambda row: row[0])
        chosen = [
            RetrievedTurn(
                turn_number=meta["turn_number"],
                active_probe=meta.get("active_probe"),
                active_mode=meta.get("active_mode"),
                user=meta.get("user", ""),
                assistant=meta.get("assistant", ""),
                summary=summary or "",
                score=round(1.0 - dist, 4),
            )
            for dist, meta, summary in found[:k]
        ]
        return sorted(chosen, key=lambda t: t.turn_number)
