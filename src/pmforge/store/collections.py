"""A project's collections: `documents` (leaf windows, searched), `document_parents`
(full sections, returned) and `conversations` (turn summaries, searched; turn pairs, returned).

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
from .keyword import KeywordIndex

DOCUMENTS, PARENTS, CONVERSATIONS = "documents", "document_parents", "conversations"


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
        self._keyword: dict[str, KeywordIndex] = {}

    def keyword(self, name: str) -> KeywordIndex:
        if name not in self._keyword:
            self._keyword[name] = KeywordIndex(self._keyword_dir, name)
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
        for name in (DOCUMENTS, PARENTS, CONVERSATIONS):
            col = existing.get(self._name(name))
            if col is not None and (col.metadata or {}).get("embedder") != self.signature:
                return (col.metadata or {}).get("embedder") or "an unknown embedder"
        return None

    @reachable
    def drop_all(self) -> None:
        existing = {c.name for c in self.client.list_collections()}
        for name in (DOCUMENTS, PARENTS, CONVERSATIONS):
            if self._name(name) in existing:
                self.client.delete_collection(self._name(name))
        self._collections.clear()
        for name in (DOCUMENTS, CONVERSATIONS):
            self.keyword(name).clear()

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
            [{"file_id": file_id, "parent_id": l.parent_id} for l in leaves],
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
    def vector_parents(
        self, query_vector: list[float], leaf_candidates: int, file_ids: list[str] | None = None
    ) -> list[tuple[str, float]]:
        """Parent ids ranked by their best leaf's cosine similarity."""
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
            best[meta["parent_id"]] = max(1.0 - dist, best.get(meta["parent_id"], -1.0))
        return sorted(best.items(), key=lambda kv: kv[1], reverse=True)

    def keyword_parents(
        self, query: str, leaf_candidates: int, file_ids: list[str] | None = None
    ) -> list[tuple[str, float, float]]:
        """(parent id, best leaf BM25 score, best leaf query coverage), ranked by score."""
        allowed = set(file_ids) if file_ids else None
        self.stats.keyword_queries += 1
        hits = self.keyword(DOCUMENTS).search(
            query, leaf_candidates, (lambda m: m["file_id"] in allowed) if allowed else None
        )
        best: dict[str, tuple[float, float]] = {}
        for _, score, meta in hits:
            old = best.get(meta["parent_id"], (0.0, 0.0))
            best[meta["parent_id"]] = (max(score, old[0]), max(meta["coverage"], old[1]))
        return sorted(((p, s, c) for p, (s, c) in best.items()), key=lambda row: row[1], reverse=True)

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
    def upsert_turn(self, turn: RetrievedTurn, vector: list[float]) -> None:
        meta = {"turn_number": turn.turn_number, "user": turn.user, "assistant": turn.assistant}
        if turn.active_probe:
            meta["active_probe"] = turn.active_probe
        if turn.active_mode:
            meta["active_mode"] = turn.active_mode
        self.collection(CONVERSATIONS).upsert(
            ids=[f"turn-{turn.turn_number}"], embeddings=[vector], documents=[turn.summary], metadatas=[meta]
        )
        # Keywords index the raw words too: a name said in passing may not survive a summary.
        self.keyword(CONVERSATIONS).upsert(
            [f"turn-{turn.turn_number}"], [f"{turn.summary}\n{turn.user}\n{turn.assistant}"],
            [{"turn_number": turn.turn_number}],
        )

    @reachable
    def turn_numbers(self) -> set[int]:
        got = self.collection(CONVERSATIONS).get(include=["metadatas"])
        return {m["turn_number"] for m in got["metadatas"]}

    @reachable
    def vector_turns(
        self, query_vector: list[float], candidates: int, before_turn: int | None = None
    ) -> list[tuple[int, float]]:
        """Turn numbers ranked by summary similarity."""
        col = self.collection(CONVERSATIONS)
        if col.count() == 0:
            return []
        where = {"turn_number": {"$lt": before_turn}} if before_turn is not None else None
        self.stats.count(CONVERSATIONS)
        hits = col.query(
            query_embeddings=[query_vector], n_results=min(candidates, col.count()), where=where,
            include=["metadatas", "distances"],
        )
        return [(m["turn_number"], 1.0 - d) for m, d in zip(hits["metadatas"][0], hits["distances"][0])]

    def keyword_turns(self, query: str, candidates: int, before_turn: int | None = None) -> list[tuple[int, float]]:
        self.stats.keyword_queries += 1
        allow = (lambda m: m["turn_number"] < before_turn) if before_turn is not None else None
        return [(m["turn_number"], s) for _, s, m in self.keyword(CONVERSATIONS).search(query, candidates, allow)]

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
                assistant=by_number[n][0].get("assistant", ""), summary=by_number[n][1] or "", score=round(score, 4),
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
                metas.append({"file_id": meta["file_id"], "parent_id": meta["parent_id"]})
            else:
                texts.append(f"{row['document']}\n{meta.get('user', '')}\n{meta.get('assistant', '')}")
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
        for name in (DOCUMENTS, PARENTS, CONVERSATIONS):
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
