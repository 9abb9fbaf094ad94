"""A project's collections: `documents` (leaf windows, searched), `document_parents`
(full sections, from which the shown passages are cut), `conversations` (one record per turn:
its summary and both sides, returned) and `conversation_passages` (what each side said, in
windows, plus the summary: searched).

Each collection records the embedder that filled it, so vectors of two models never mix.

On a shared Chroma server several clones of one project write the same collections, so nothing here
assumes it is alone: turns are keyed by their transcript id (two clones' turn 3 are two turns) and carry
the clone that remembered them; a `registry` collection records which clones claim each file (its vectors
go only when the last claim does) and the lease that serialises destructive work; and the document and
memory collections carry a stamp (record count and an order-independent digest) that tells a clone whether
its local keyword cache still mirrors them, from one metadata read.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Final, Iterable, Iterator, Literal, Sequence, overload

import chromadb
import httpx
from chromadb.errors import InternalError, NotFoundError
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from pmforge.core.errors import ForgeError
from pmforge.core.models import RetrievedSection, RetrievedTurn
from pmforge.core.workspace import atomic_write_text
from pmforge.index.client import StoreUnavailable
from pmforge.index.keyword import KeywordIndex, TurnIndex

if TYPE_CHECKING:
    from chromadb.base_types import LiteralValue, LogicalOperator, WhereOperator

# Final: each name is its own literal type, so `keyword(DOCUMENTS)` is known to be the documents' index.
DOCUMENTS: Final = "documents"
PARENTS: Final = "document_parents"
CONVERSATIONS: Final = "conversations"
MEMORY: Final = "conversation_passages"
COLLECTIONS = (DOCUMENTS, PARENTS, CONVERSATIONS, MEMORY)
KEYWORD_MIRRORED = (DOCUMENTS, CONVERSATIONS)  # the collections a local keyword cache mirrors
REGISTRY = "registry"  # file claims and the lease; never searched
LEASE_ID = "lease"
NO_VECTOR: Sequence[float] = [1.0]  # registry records are read by id or metadata, but Chroma wants a vector
MAX_TURN_PASSAGES = 64  # summary + both sides' windows; a 10,000-word reply needs about 60
TURN_PREFIX = "turn-"
SEARCH_MARGIN = 40  # extra candidates fetched so that filtering (recency, other clones) still leaves enough
STAMP_RECORDS, STAMP_DIGEST = "keyword_records", "keyword_digest"
BESIDE = "rebuild-"  # the name prefix of a rebuild's collections while it is built beside the index in use


@dataclass(frozen=True)
class Clone:
    """Who writes: a random id kept git-ignored in the workspace, and a readable author label."""

    id: str = "local"
    author: str = ""


@dataclass(frozen=True)
class Stamp:
    """A collection's record count and the XOR of its records' hashes: adding or removing one record
    changes it in constant time, in any order, so clones can keep it up to date without a scan."""

    records: int = 0
    digest: int = 0

    @classmethod
    def of(cls, metadata: dict | None) -> "Stamp":
        metadata = metadata or {}
        return cls(int(metadata.get(STAMP_RECORDS, 0)), int(str(metadata.get(STAMP_DIGEST, "0")), 16))

    def as_metadata(self) -> dict:
        return {STAMP_RECORDS: self.records, STAMP_DIGEST: f"{self.digest:016x}"}

    def changed(self, removed: list[tuple[str, str]], added: list[tuple[str, str]]) -> "Stamp":
        return Stamp(self.records + len(added) - len(removed), self.digest ^ digest(removed) ^ digest(added))


def record_hash(record_id: str, text: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{record_id}\0{text}".encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "big")


def digest(records: Iterable[tuple[str, str]]) -> int:
    out = 0
    for record_id, text in records:
        out ^= record_hash(record_id, text)
    return out


def _settable(metadata: dict | None) -> dict:
    """Collection metadata as `modify` accepts it: it replaces the whole dict and refuses any hnsw:
    key (the distance function stays in the collection's configuration regardless)."""
    return {k: v for k, v in (metadata or {}).items() if not k.startswith("hnsw:")}


def turn_record_id(turn_id: str) -> str:
    return f"{TURN_PREFIX}{turn_id}"


def turn_id_of(record_id: str) -> str:
    return record_id[len(TURN_PREFIX):] if record_id.startswith(TURN_PREFIX) else record_id


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


class StoreGone(ForgeError):
    """A collection vanished while in use (another clone dropped it) and did not come back."""


class LeaseHeld(ForgeError):
    """Another clone holds the project's lease for destructive work."""


def _busy(exc: BaseException) -> bool:
    """A Chroma database that refused a write because another writer held it (SQLite's "database is
    locked"): on a server several clones share, a moment's wait clears it."""
    return isinstance(exc, InternalError) and "database is locked" in str(exc)


def reachable(method):
    """Turn a lost connection to a Chroma server into one clear sentence (the client reconnects by itself
    once the server is back, so the next call simply works). A collection that vanished under a cached
    handle (another clone ran `forge reindex --force`) is fetched again once before giving up, and a
    database busy with another writer is waited for (up to the store's `busy_wait_s`). Decorates the store's
    methods and those of its parts and lease (which reach it as `.store`)."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        store: ProjectStore = getattr(self, "store", self)

        def patiently():
            # Every write Forge makes is an upsert or a delete by id or condition: running it again after
            # the database refused it as busy changes nothing twice.
            for attempt in Retrying(retry=retry_if_exception(_busy), stop=stop_after_delay(store.busy_wait_s),
                                    wait=wait_random_exponential(multiplier=0.05, max=1.0), reraise=True):
                with attempt:
                    return method(self, *args, **kwargs)

        try:
            try:
                return patiently()
            except NotFoundError:
                store.handles.clear()  # handles to collections that were dropped and perhaps re-made
                try:
                    return patiently()
                except NotFoundError:
                    raise StoreGone(
                        f"This project's collections on {store.location} were removed while Forge was using "
                        "them (another clone may be rebuilding them); try again in a moment."
                    ) from None
        except (httpx.TransportError, ConnectionError) as exc:
            raise StoreUnavailable(
                f"{store.location_in_a_sentence} is not reachable ({type(exc).__name__}); "
                "nothing was changed — try again once it is back."
            ) from None
        except InternalError as exc:
            if not _busy(exc):
                raise
            raise StoreUnavailable(
                f"{store.location_in_a_sentence} stayed busy with other writers for "
                f"{store.busy_wait_s:g} s; nothing was changed — try again in a moment."
            ) from None

    return guarded


def claim_id(file_id: str, clone_id: str) -> str:
    """The registry id of one clone's claim on a file."""
    return f"claim:{file_id}:{clone_id}"


def _sync_threshold(col: chromadb.Collection) -> int | None:
    hnsw = (col.configuration or {}).get("hnsw") or {}
    return hnsw.get("sync_threshold")


class ProjectStore:
    """A project's Chroma collections and their local keyword caches, changed together: the handles and the
    stamps here; the work in its parts — `documents` (the files' windows and sections), `memory` (remembered
    turns), `claims` (which clones list each file; the lease) and `upkeep` (checks, rebuilds, copies)."""

    def __init__(
        self, client: chromadb.ClientAPI, embedder_signature: str, keyword_dir: Path, prefix: str = "",
        location: str = "the vector store", clone: Clone = Clone(),
        transcript: Callable[[], set[str]] | None = None, lease_seconds: float = 900.0,
        memory_sync_threshold: int = 100, busy_wait_s: float = 10.0,
    ):
        self.client = client
        self.signature = embedder_signature
        self.prefix = prefix
        self.location = location
        self.clone = clone
        self.lease_seconds = lease_seconds
        self.memory_sync_threshold = memory_sync_threshold
        self.busy_wait_s = busy_wait_s
        # The turn ids of this clone's transcript: memory search returns only those (and turns this clone
        # remembered itself), never another clone's turns it has not merged.
        self.transcript = transcript or (lambda: set())
        self.stats = StoreStats()
        self.handles: dict[str, chromadb.Collection] = {}
        self.keyword_dir = Path(keyword_dir)
        self.keyword_indexes: dict[str, KeywordIndex | TurnIndex] = {}
        self._stamp_lock = threading.Lock()  # two tabs of one app writing at once: one local stamp update each
        # The parts, each over these collections and keyword caches.
        self.documents = DocumentIndex(self)
        self.memory = TurnMemory(self)
        self.claims = FileClaims(self)
        self.upkeep = StoreUpkeep(self)

    @property
    def location_in_a_sentence(self) -> str:
        """`location` as the start of a sentence ("The project's embedded vector store …")."""
        return self.location[0].upper() + self.location[1:]

    @property
    def shared(self) -> bool:
        """On a Chroma server other clones of the project may write the same collections."""
        return bool(self.prefix)

    def open_index(self, name: str) -> KeywordIndex | TurnIndex:
        return TurnIndex(self.keyword_dir, name) if name == CONVERSATIONS else KeywordIndex(self.keyword_dir, name)

    @overload
    def keyword(self, name: Literal["documents"]) -> KeywordIndex: ...
    @overload
    def keyword(self, name: Literal["conversations"]) -> TurnIndex: ...
    @overload
    def keyword(self, name: str) -> KeywordIndex | TurnIndex: ...

    def keyword(self, name: str) -> KeywordIndex | TurnIndex:
        """The local keyword index of a collection: BM25 over the documents' leaves, SQLite FTS5 over turns."""
        if name not in self.keyword_indexes:
            index = self.open_index(name)
            self.keyword_indexes[name] = index
            if index.stale:
                # Another tokenizer filled it, or it predates this format: Chroma holds every text the index
                # needs, so it is rebuilt from there — nothing is re-embedded.
                self.upkeep.reindex_keywords(name)
                if name == CONVERSATIONS:
                    (self.keyword_dir / f"{name}.json").unlink(missing_ok=True)  # the earlier format
        return self.keyword_indexes[name]

    # ---- collections
    def full_name(self, name: str) -> str:
        return f"{self.prefix}{name}"

    @reachable
    def collection(self, name: str) -> chromadb.Collection:
        if name not in self.handles:
            metadata: dict[str, str | int] = {"hnsw:space": "cosine", "embedder": self.signature}
            every_turn = name in (CONVERSATIONS, MEMORY)
            if every_turn:
                metadata["hnsw:sync_threshold"] = self.memory_sync_threshold
            col = self.client.get_or_create_collection(self.full_name(name), metadata=metadata, embedding_function=None)
            filled_by = (col.metadata or {}).get("embedder")
            if filled_by != self.signature:
                raise EmbedderMismatch(
                    f"This project's vectors were made with {filled_by}, not {self.signature}; "
                    "rebuild them with: forge reindex --force PROJECT"
                )
            if every_turn and _sync_threshold(col) != self.memory_sync_threshold:  # made before this setting
                col.modify(configuration={"hnsw": {"sync_threshold": self.memory_sync_threshold}})
            self.handles[name] = col
        return self.handles[name]

    def fresh(self, name: str) -> chromadb.Collection:
        """The collection with its metadata as the server holds it now (a cached handle's copy is old)."""
        self.handles.pop(name, None)
        return self.collection(name)

    def registry(self) -> chromadb.Collection:
        if REGISTRY not in self.handles:
            self.handles[REGISTRY] = self.client.get_or_create_collection(
                self.full_name(REGISTRY), metadata={"forge": "claims and lease"}, embedding_function=None)
        return self.handles[REGISTRY]


    # ---- keyword cache stamps
    @property
    def stamps_path(self) -> Path:
        return self.keyword_dir / "stamps.json"

    def local_stamps(self) -> dict:
        try:
            return json.loads(self.stamps_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}

    def local_stamp(self, name: str) -> Stamp:
        """The collection stamp the local keyword cache was last known to mirror."""
        return Stamp.of(self.local_stamps().get(name))

    def save_local_stamp(self, name: str, stamp: Stamp | Callable[[Stamp], Stamp]) -> None:
        """Record the cache's stamp (or apply a change to it) under the lock: a read-modify-write."""
        with self._stamp_lock:
            stamps = self.local_stamps()
            stamps[name] = (stamp(Stamp.of(stamps.get(name))) if callable(stamp) else stamp).as_metadata()
            self.keyword_dir.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.stamps_path, json.dumps(stamps, sort_keys=True))

    def restamp(self, name: str, removed: list[tuple[str, str]], added: list[tuple[str, str]]) -> None:
        """Fold a change into the collection's stamp and into the local cache's, which so stays the digest
        of what the cache holds: equal to the collection's while no other clone writes, behind it once one
        does. Read-modify-write on the server: two clones writing at once can lose one update; the record
        count checked in `keyword_state` catches that, and the next rebuild writes the true stamp."""
        if not removed and not added:
            return
        col = self.fresh(name)
        after = Stamp.of(col.metadata).changed(removed, added)
        col.modify(metadata={**_settable(col.metadata), **after.as_metadata()})
        self.save_local_stamp(name, lambda local: local.changed(removed, added))


    def batched_add(self, col: chromadb.Collection, **columns) -> None:
        size = self.client.get_max_batch_size()
        total = len(columns["ids"])
        for i in range(0, total, size):
            col.upsert(**{k: v[i : i + size] for k, v in columns.items()})

    def records(self, name: str, ids: list[str]) -> list[tuple[str, str]]:
        """(id, keyword text) of those of `ids` the collection already holds."""
        if not ids:
            return []
        got = self.collection(name).get(ids=ids, include=["documents", "metadatas"])
        return [(i, _keyword_text(name, doc, meta)) for i, doc, meta in zip(got["ids"], got["documents"],
                                                                           got["metadatas"])]

    @reachable
    def ids(self, name: str) -> set[str]:
        return set(self.collection(name).get(include=[])["ids"])


class DocumentIndex:
    """The uploaded files' leaf windows and parent sections: stored, searched, withdrawn."""

    def __init__(self, store: "ProjectStore"):
        self.store = store

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
        # First: a clone deleting its copy meanwhile now leaves these vectors.
        self.store.claims.claim(file_id, filename)
        before = self.store.records(DOCUMENTS, [l.id for l in leaves])
        self.store.batched_add(
            self.store.collection(PARENTS),
            ids=[p.id for p in parents],
            embeddings=parent_vectors,
            documents=[p.text for p in parents],
            metadatas=[{**base, "section": p.section, "start": p.start, "end": p.end} for p in parents],
        )
        self.store.batched_add(
            self.store.collection(DOCUMENTS),
            ids=[l.id for l in leaves],
            embeddings=leaf_vectors,
            documents=[l.text for l in leaves],
            metadatas=[
                {**base, "leaf_id": l.leaf_id, "parent_id": l.parent_id, "start": l.start, "end": l.end}
                for l in leaves
            ],
        )
        self.store.keyword(DOCUMENTS).upsert(
            [l.id for l in leaves], [l.text for l in leaves],
            [{"file_id": file_id, "parent_id": l.parent_id, "start": l.start, "end": l.end} for l in leaves],
        )
        self.store.restamp(DOCUMENTS, before, [(l.id, l.text) for l in leaves])

    @reachable
    def delete_file(self, file_id: str) -> bool:
        """Withdraw this clone's claim on a file; its vectors go only when no other clone claims it.
        Returns whether they went."""
        registry = self.store.registry()
        registry.delete(ids=[claim_id(file_id, self.store.clone.id)])
        if registry.get(where={"$and": [{"kind": "claim"}, {"file_id": file_id}]}, include=[])["ids"]:
            return False
        got = self.store.collection(DOCUMENTS).get(where={"file_id": file_id}, include=["documents"])
        for name in (DOCUMENTS, PARENTS):
            self.store.collection(name).delete(where={"file_id": file_id})
        self.store.keyword(DOCUMENTS).delete_where("file_id", file_id)
        self.store.restamp(DOCUMENTS, list(zip(got["ids"], got["documents"])), [])
        return True

    @reachable
    def file_ids(self) -> set[str]:
        got = self.store.collection(PARENTS).get(include=["metadatas"])
        return {m["file_id"] for m in got["metadatas"]}

    @reachable
    def vector_windows(
        self, query_vector: list[float], n: int, file_ids: list[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        """Leaf windows by cosine similarity, best first, as (window id, similarity, {parent_id, start, end})."""
        leaves = self.store.collection(DOCUMENTS)
        where = {"file_id": {"$in": file_ids}} if file_ids else None
        self.store.stats.count(DOCUMENTS)
        # No count() first: Chroma returns what it holds when asked for more, and a count costs a call per search.
        hits = leaves.query(query_embeddings=[query_vector], n_results=n, where=where,
                            include=["metadatas", "distances"])
        return [(i, 1.0 - d, m) for i, m, d in zip(hits["ids"][0], hits["metadatas"][0], hits["distances"][0])]

    def keyword_windows(self, query: str, n: int, file_ids: list[str] | None = None) -> list[tuple[str, float, dict]]:
        """Leaf windows by BM25, best first, as (window id, score, {parent_id, start, end, coverage})."""
        allowed = set(file_ids) if file_ids else None
        self.store.stats.keyword_queries += 1
        return self.store.keyword(DOCUMENTS).search(query, n, (lambda m: m["file_id"] in allowed) if allowed else None)

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
        got = self.store.collection(PARENTS).get(ids=[pid for pid, _ in ranked], include=["documents", "metadatas"])
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

    @reachable
    def file_counts(self) -> dict[str, tuple[int, int]]:
        """file id → (sections stored, distinct passages stored), across both document collections."""
        counts: dict[str, list] = {}
        for meta in self.store.collection(PARENTS).get(include=["metadatas"])["metadatas"]:
            counts.setdefault(meta["file_id"], [0, set()])[0] += 1
        for meta in self.store.collection(DOCUMENTS).get(include=["metadatas"])["metadatas"]:
            counts.setdefault(meta["file_id"], [0, set()])[1].add(meta["leaf_id"])
        return {fid: (parents, len(leaves)) for fid, (parents, leaves) in counts.items()}


class TurnMemory:
    """Remembered turns: one record per turn and its searchable passages, every clone's, searched by this one."""

    def __init__(self, store: "ProjectStore"):
        self.store = store
        self._own_turns: set[str] | None = None  # turn ids remembered by this clone, read once then kept

    @reachable
    def upsert_turn(
        self, turn: RetrievedTurn, vector: list[float],
        passages: Sequence[MemoryPassage] = (), passage_vectors: Sequence[list[float]] = (),
    ) -> None:
        """One turn's record (summary vector, both sides, the question it answered) and its searchable
        passages, keyed by the turn's transcript id and marked with this clone; replaces whatever was
        stored for that turn. A record without a transcript id is keyed by its number, as before ids."""
        n = turn.turn_number
        turn_id = turn.turn_id or str(n)
        record_id = turn_record_id(turn_id)
        owner = {"turn_number": n, "turn_id": turn_id, "clone": self.store.clone.id}
        meta = {**owner, "author": self.store.clone.author, "user": turn.user, "assistant": turn.assistant}
        for key in ("active_probe", "active_mode", "asked"):
            if getattr(turn, key):
                meta[key] = getattr(turn, key)
        turns, memory = self.store.collection(CONVERSATIONS), self.store.collection(MEMORY)
        passages = list(passages)[:MAX_TURN_PASSAGES]
        before = self.store.records(CONVERSATIONS, [record_id])
        if before:
            # Re-remembered: drop its old passages by id (a `where` delete scans the whole collection,
            # which would make every turn slower than the last).
            memory.delete(ids=[f"{record_id}:p{i}" for i in range(MAX_TURN_PASSAGES)])
        turns.upsert(ids=[record_id], embeddings=[vector], documents=[turn.summary], metadatas=[meta])
        if passages:
            self.store.batched_add(
                memory, ids=[f"{record_id}:p{i}" for i in range(len(passages))],
                embeddings=list(passage_vectors)[: len(passages)], documents=[p.text for p in passages],
                metadatas=[{**owner, "side": p.side, "start": p.start, "end": p.end} for p in passages],
            )
        # Keywords index the raw words too: a name said in passing may not survive a summary.
        text = _turn_keywords(turn)
        self.store.keyword(CONVERSATIONS).upsert([record_id], [text], [{"turn_number": n}])
        if self._own_turns is not None:
            self._own_turns.add(turn_id)
        self.store.restamp(CONVERSATIONS, before, [(record_id, text)])

    @reachable
    def turn_numbers(self) -> set[int]:
        got = self.store.collection(CONVERSATIONS).get(include=["metadatas"])
        return {m["turn_number"] for m in got["metadatas"]}

    @reachable
    def turn_ids(self) -> set[str]:
        """The transcript ids of every remembered turn, every clone's (ids only: no scan of the texts)."""
        return {turn_id_of(i) for i in self.store.collection(CONVERSATIONS).get(include=[])["ids"]}

    @reachable
    def turn_records(self) -> dict[str, tuple[dict, str]]:
        """turn id → (metadata, summary) of every remembered turn, every clone's."""
        got = self.store.collection(CONVERSATIONS).get(include=["metadatas", "documents"])
        return {turn_id_of(i): (m, doc or "") for i, m, doc in zip(got["ids"], got["metadatas"], got["documents"])}

    def forget_own_turns(self) -> None:
        """After the collections were dropped: read which turns are this clone's again when next asked."""
        self._own_turns = None

    @reachable
    def own_turns(self) -> set[str]:
        """Turn ids this clone remembered (read once, then kept up to date by this store)."""
        if self._own_turns is None:
            got = self.store.collection(CONVERSATIONS).get(where={"clone": self.store.clone.id}, include=[])
            self._own_turns = {turn_id_of(i) for i in got["ids"]}
        return self._own_turns

    def visible_turns(self) -> set[str]:
        """What memory search may return: this clone's transcript (turns merged from another clone's
        transcript included, on purpose) and turns this clone remembered itself."""
        return self.store.transcript() | self.own_turns()

    @reachable
    def vector_turns(
        self, query_vector: list[float], candidates: int, before_turn: int | None = None
    ) -> list[tuple[str, float, dict]]:
        """Turn ids ranked by their best passage's similarity, with that passage's side and offsets.
        Memory indexed before passages existed is searched by its summaries."""
        visible = self.visible_turns()
        if not visible:
            return []

        def keep(m: dict) -> bool:
            return m.get("turn_id", "") in visible and (before_turn is None or m["turn_number"] < before_turn)

        # A `where` filter makes Chroma scan (several times slower at 1k turns), and the turns it would
        # exclude are few (the most recent; another clone's): over-fetch and filter here, unless too few survive.
        # No count() first: asked for more than it holds, Chroma returns what it holds.
        for name in (MEMORY, CONVERSATIONS):
            col = self.store.collection(name)
            self.store.stats.count(name)
            hits = col.query(query_embeddings=[query_vector], n_results=candidates + SEARCH_MARGIN,
                             include=["metadatas", "distances"])
            if hits["ids"][0]:
                break
        else:
            return []
        held = len(hits["ids"][0])  # all the collection holds, when that is fewer than asked for
        rows = [(m, d) for m, d in zip(hits["metadatas"][0], hits["distances"][0]) if keep(m)]
        if len(rows) < min(candidates, held, len(visible)) // 2:
            where: dict = {"turn_id": {"$in": sorted(visible)}}
            if before_turn is not None:
                where = {"$and": [where, {"turn_number": {"$lt": before_turn}}]}
            hits = col.query(query_embeddings=[query_vector], n_results=candidates,
                             where=where, include=["metadatas", "distances"])
            rows = list(zip(hits["metadatas"][0], hits["distances"][0]))
        best: dict[str, tuple[float, dict]] = {}
        for m, d in rows[:candidates]:
            turn_id = m["turn_id"]
            if turn_id not in best or 1.0 - d > best[turn_id][0]:
                best[turn_id] = (1.0 - d, m)
        return sorted(((t, s, m) for t, (s, m) in best.items()), key=lambda row: row[1], reverse=True)

    def keyword_turns(self, query: str, candidates: int, before_turn: int | None = None) -> list[tuple[str, float]]:
        """Turn ids ranked by BM25, only those memory search may return (see `visible_turns`)."""
        self.store.stats.keyword_queries += 1
        visible = self.visible_turns()
        index = self.store.keyword(CONVERSATIONS)
        depth = candidates + SEARCH_MARGIN
        hits = index.search(query, depth, before_turn)
        ranked = [(turn_id_of(i), s) for i, s, _ in hits if turn_id_of(i) in visible]
        if len(ranked) < candidates and len(hits) == depth:  # other clones' turns crowded the top
            ranked = [(turn_id_of(i), s) for i, s, _ in index.search(query, len(index), before_turn)
                      if turn_id_of(i) in visible]
        return ranked[:candidates]

    @reachable
    def get_turns(self, ranked: list[tuple[str, float]]) -> list[RetrievedTurn]:
        if not ranked:
            return []
        got = self.store.collection(CONVERSATIONS).get(
            ids=[turn_record_id(t) for t, _ in ranked], include=["metadatas", "documents"]
        )
        by_id = {turn_id_of(i): (m, doc) for i, m, doc in zip(got["ids"], got["metadatas"], got["documents"])}
        return [
            RetrievedTurn(
                turn_number=by_id[t][0]["turn_number"], turn_id=t, active_probe=by_id[t][0].get("active_probe"),
                active_mode=by_id[t][0].get("active_mode"), user=by_id[t][0].get("user", ""),
                assistant=by_id[t][0].get("assistant", ""), asked=by_id[t][0].get("asked", ""),
                summary=by_id[t][1] or "", score=round(score, 6),
            )
            for t, score in ranked if t in by_id
        ]

    @reachable
    def delete_turns(self, turn_ids: set[str]) -> None:
        """Forget turns by transcript id (by record id throughout: no `where` scan)."""
        if not turn_ids:
            return
        record_ids = [turn_record_id(t) for t in sorted(turn_ids)]
        before = self.store.records(CONVERSATIONS, record_ids)
        self.store.collection(CONVERSATIONS).delete(ids=record_ids)
        self.store.collection(MEMORY).delete(ids=[f"{r}:p{i}" for r in record_ids for i in range(MAX_TURN_PASSAGES)])
        for record_id in record_ids:
            self.store.keyword(CONVERSATIONS).delete_where("id", record_id)
        if self._own_turns is not None:
            self._own_turns -= set(turn_ids)
        self.store.restamp(CONVERSATIONS, before, [])

    @reachable
    def adopt_numbered_turns(self, turns: list) -> int:
        """Turns remembered before records carried transcript ids (keyed `turn-3`) are re-keyed to the
        transcript turn with the same number and words, vectors copied, nothing embedded. Returns how many."""
        by_number = {t.number: t for t in turns}
        adopted = 0
        for turn_id, (meta, _) in self.turn_records().items():
            turn = by_number.get(meta["turn_number"])
            if ("turn_id" in meta or turn is None or turn.id in self.turn_ids()
                    or (meta.get("user", ""), meta.get("assistant", "")) != (turn.user, turn.assistant)):
                continue
            old = turn_record_id(turn_id)
            new = turn_record_id(turn.id)
            owner = {"turn_id": turn.id, "clone": self.store.clone.id}
            for name, ids in ((CONVERSATIONS, [old]), (MEMORY, [f"{old}:p{i}" for i in range(MAX_TURN_PASSAGES)])):
                got = self.store.collection(name).get(ids=ids, include=["embeddings", "documents", "metadatas"])
                if got["ids"]:
                    self.store.collection(name).upsert(
                        ids=[new + i[len(old):] for i in got["ids"]], embeddings=[list(e) for e in got["embeddings"]],
                        documents=got["documents"],
                        metadatas=[{**m, **owner,
                                    **({"author": self.store.clone.author} if name == CONVERSATIONS else {})}
                                   for m in got["metadatas"]])
                    self.store.collection(name).delete(ids=got["ids"])
            record = self.store.records(CONVERSATIONS, [new])  # the same words under the new id
            self.store.keyword(CONVERSATIONS).delete_where("id", old)
            self.store.keyword(CONVERSATIONS).upsert([new], [record[0][1]], [{"turn_number": meta["turn_number"]}])
            self.store.restamp(CONVERSATIONS, [(old, record[0][1])], record)
            if self._own_turns is not None:
                self._own_turns.add(turn.id)
            adopted += 1
        return adopted


class FileClaims:
    """Which clones list each file (its vectors stay while any does), and the lease for destructive work."""

    def __init__(self, store: "ProjectStore"):
        self.store = store

    @reachable
    def claim(self, file_id: str, filename: str) -> None:
        self.store.registry().upsert(
            ids=[claim_id(file_id, self.store.clone.id)], embeddings=[NO_VECTOR],
            metadatas=[{"kind": "claim", "file_id": file_id, "filename": filename, "clone": self.store.clone.id,
                        "author": self.store.clone.author}],
        )

    @reachable
    def all(self) -> dict[str, list[dict]]:
        """file id → the claims on it ({clone, author, filename}), every clone's."""
        out: dict[str, list[dict]] = {}
        for meta in self.store.registry().get(where={"kind": "claim"}, include=["metadatas"])["metadatas"] or []:
            out.setdefault(str(meta["file_id"]), []).append(dict(meta))
        return out

    def claimed_here(self, claims: dict[str, list[dict]] | None = None) -> set[str]:
        claims = self.all() if claims is None else claims
        return {fid for fid, who in claims.items() if any(c["clone"] == self.store.clone.id for c in who)}

    @contextmanager
    def lease(self, purpose: str, seconds: float | None = None) -> Iterator["Lease"]:
        held = Lease(self.store, purpose, self.store.lease_seconds if seconds is None else seconds)
        held.take()
        try:
            yield held
        finally:
            held.release()


class StoreUpkeep:
    """Keeping the store sound: keyword caches checked and rebuilt, rebuilds beside the index in use, copies."""

    def __init__(self, store: "ProjectStore"):
        self.store = store

    @reachable
    def mismatched(self) -> str | None:
        """The embedder that filled an existing collection, when it is not ours."""
        existing = {c.name: c for c in self.store.client.list_collections()}
        for name in COLLECTIONS:
            col = existing.get(self.store.full_name(name))
            if col is not None and (col.metadata or {}).get("embedder") != self.store.signature:
                return (col.metadata or {}).get("embedder") or "an unknown embedder"
        return None

    @reachable
    def drop_all(self) -> None:
        """Drop every collection and every clone's file claims (`forge reindex --force` only); the lease
        its caller holds is kept."""
        existing = {c.name for c in self.store.client.list_collections()}
        for name in COLLECTIONS:
            if self.store.full_name(name) in existing:
                self.store.client.delete_collection(self.store.full_name(name))
        self.store.registry().delete(where={"kind": "claim"})
        self.store.handles.clear()
        self.store.memory.forget_own_turns()
        for name in KEYWORD_MIRRORED:
            # Not keyword(): there is no rebuild to clear.
            index = self.store.keyword_indexes.get(name) or self.store.open_index(name)
            index.clear()
            self.store.keyword_indexes[name] = index
            self.store.save_local_stamp(name, Stamp())

    def beside(self) -> "ProjectStore":
        """An empty store beside this one (same client, collections and keyword caches of its own) in which
        a rebuild is made while this one stays in use; `take_over_from` then switches to it."""
        store = self.store
        built = ProjectStore(
            store.client, store.signature, store.keyword_dir.with_name(f"{store.keyword_dir.name}-rebuild"),
            prefix=f"{store.prefix}{BESIDE}", location=store.location, clone=store.clone, transcript=store.transcript,
            lease_seconds=store.lease_seconds, memory_sync_threshold=store.memory_sync_threshold,
            busy_wait_s=store.busy_wait_s)
        built.upkeep.discard()  # what a rebuild that died left behind
        return built

    @reachable
    def discard(self) -> None:
        """Remove a store made by `beside`: its collections, registry included, and its keyword caches."""
        if not self.store.prefix.endswith(BESIDE):
            raise ValueError("only a store built beside another is discarded whole")
        for name in [c.name for c in self.store.client.list_collections() if c.name.startswith(self.store.prefix)]:
            self.store.client.delete_collection(name)
        self.store.handles.clear()
        self.store.keyword_indexes.clear()
        shutil.rmtree(self.store.keyword_dir, ignore_errors=True)

    @reachable
    def take_over_from(self, built: "ProjectStore") -> None:
        """Replace this store's collections and every clone's claims with what was built beside it (vectors
        copied, nothing embedded again); the lease its caller holds is kept."""
        self.drop_all()
        self._copy_from(built)

    @reachable
    def keyword_state(self, name: str) -> str:
        """"current" when the local keyword cache mirrors the collection; "behind" when the cache is intact
        but the collection changed since (another clone wrote); "damaged" otherwise. One metadata read, one
        count, no scan."""
        col = self.store.fresh(name)
        stamp, local = Stamp.of(col.metadata), self.store.local_stamp(name)
        intact = len(self.store.keyword(name)) == local.records
        if local == stamp and stamp.records == col.count() and intact:
            return "current"
        return "behind" if intact and local != stamp else "damaged"

    def keyword_current(self, name: str) -> bool:
        return self.keyword_state(name) == "current"

    @reachable
    def reindex_keywords(self, name: str) -> int:
        """Rebuild a keyword index from the texts Chroma holds (it stores everything the index needs;
        nothing is embedded), and stamp the collection and the cache with what was read."""
        ids, texts, metas = [], [], []
        for row in self.rows(name, embeddings=False):
            meta = row["metadata"]
            ids.append(row["id"])
            texts.append(_keyword_text(name, row["document"], meta))
            if name == DOCUMENTS:
                metas.append({key: meta[key] for key in ("file_id", "parent_id", "start", "end")})
            else:
                metas.append({"turn_number": meta["turn_number"]})
        index = self.store.keyword(name)
        index.clear()
        if ids:
            index.upsert(ids, texts, metas)
        truth = Stamp(len(ids), digest(zip(ids, texts)))
        col = self.store.fresh(name)
        if Stamp.of(col.metadata) != truth:  # a lost update, or a store from before stamps
            col.modify(metadata={**_settable(col.metadata), **truth.as_metadata()})
        self.store.save_local_stamp(name, truth)
        return len(ids)

    @reachable
    def true_stamp(self, name: str) -> Stamp:
        """The stamp computed from every record (a full scan: forge doctor only)."""
        pairs = [(row["id"], _keyword_text(name, row["document"], row["metadata"]))
                 for row in self.rows(name, embeddings=False)]
        return Stamp(len(pairs), digest(pairs))

    def stamp(self, name: str) -> Stamp:
        return Stamp.of(self.store.fresh(name).metadata)

    @reachable
    def rows(self, name: str, page: int = 1000, embeddings: bool = True) -> Iterator[dict]:
        """Every record of a collection, with its embedding unless told otherwise, a page at a time."""
        col = self.store.collection(name)
        include = ["embeddings", "documents", "metadatas"] if embeddings else ["documents", "metadatas"]
        offset = 0
        while True:
            got = col.get(include=include, limit=page, offset=offset)
            if not got["ids"]:
                return
            for i, id_ in enumerate(got["ids"]):
                yield {"id": id_, "embedding": list(map(float, got["embeddings"][i])) if embeddings else None,
                       "document": got["documents"][i], "metadata": got["metadatas"][i]}
            offset += len(got["ids"])

    @reachable
    def copy_from(self, source: "ProjectStore") -> dict[str, int]:
        """Replace this store's collections with copies of `source`'s (vectors included, nothing re-embedded)."""
        if source.signature != self.store.signature:
            raise EmbedderMismatch(
                f"Cannot copy vectors made with {source.signature} into a {self.store.signature} store.")
        with self.store.claims.lease("migrating"):  # it drops this store's collections first: no other clone meanwhile
            return self._copy_from(source)

    def _copy_from(self, source: "ProjectStore") -> dict[str, int]:
        existing = {c.name for c in self.store.client.list_collections()}
        copied = {}
        for name in COLLECTIONS:
            if self.store.full_name(name) in existing:
                self.store.client.delete_collection(self.store.full_name(name))
            self.store.handles.pop(name, None)
            batch: list[dict] = []
            copied[name] = 0
            for row in source.upkeep.rows(name):
                batch.append(row)
                if len(batch) >= 1000:
                    self._put(name, batch)
                    copied[name] += len(batch)
                    batch = []
            if batch:
                self._put(name, batch)
                copied[name] += len(batch)
            if self.store.collection(name).count() != copied[name]:
                raise ForgeError(f"Copying {name} did not complete; nothing was switched over.")
        for file_id, who in source.claims.all().items():
            for claim in who:
                self.store.registry().upsert(ids=[claim_id(file_id, claim["clone"])], embeddings=[NO_VECTOR],
                                       metadatas=[claim])
        for name in KEYWORD_MIRRORED:
            self.reindex_keywords(name)  # the copy's stamp, and a cache that mirrors it
        return copied

    def _put(self, name: str, rows: list[dict]) -> None:
        self.store.batched_add(
            self.store.collection(name), ids=[r["id"] for r in rows], embeddings=[r["embedding"] for r in rows],
            documents=[r["document"] for r in rows], metadatas=[r["metadata"] for r in rows],
        )


def _turn_keywords(turn: RetrievedTurn) -> str:
    return f"{turn.summary}\n{turn.user}\n{turn.assistant}"


def _keyword_text(name: str, document: str | None, meta: dict) -> str:
    """What the keyword cache indexes for a record (and what the collection's stamp hashes)."""
    if name == DOCUMENTS:
        return document or ""
    return _turn_keywords(RetrievedTurn(turn_number=meta["turn_number"], user=meta.get("user", ""),
                                        assistant=meta.get("assistant", ""), summary=document or ""))


class Lease:
    """The project's lease on a shared store, held by one clone at a time for destructive work.

    Taken with two server-side steps, each applied atomically by Chroma: a conditional delete that frees
    the lease only if it has expired (or is this clone's own), then an `add`, which Chroma ignores when
    the id already exists. Whoever's record is there afterwards holds it, so two clones racing both read
    back the same winner. Expiry uses each clone's clock: clocks that disagree by more than the lease
    length could let a second clone in."""

    def __init__(self, store: ProjectStore, purpose: str, seconds: float):
        self.store, self.purpose, self.seconds = store, purpose, seconds
        self.token = secrets.token_hex(8)

    def _record(self) -> dict | None:
        got = self.store.registry().get(ids=[LEASE_ID], include=["metadatas"])
        metas = got["metadatas"]  # asked for, so never None
        return dict(metas[0]) if got["ids"] and metas else None

    @reachable
    def take(self) -> None:
        registry, clone = self.store.registry(), self.store.clone
        # Declared with Chroma's own key type: mypy cannot infer an operator dict inside Chroma's `Where`.
        expired: dict[WhereOperator | LogicalOperator, LiteralValue] = {"$lt": time.time()}
        registry.delete(ids=[LEASE_ID], where={"$or": [{"expires": expired}, {"holder": clone.id}]})
        registry.add(ids=[LEASE_ID], embeddings=[NO_VECTOR], metadatas=[{
            "kind": "lease", "holder": clone.id, "author": clone.author, "token": self.token,
            "purpose": self.purpose, "expires": time.time() + self.seconds,
        }])
        held = self._record()
        if not held or held.get("token") != self.token:
            raise LeaseHeld(self._refusal(held))

    @reachable
    def renew(self) -> None:
        """Extend the lease (between the steps of a long rebuild); refuses if it was lost meanwhile."""
        registry = self.store.registry()
        registry.delete(ids=[LEASE_ID], where={"token": self.token})
        self.take()

    @reachable
    def release(self) -> None:
        self.store.registry().delete(ids=[LEASE_ID], where={"token": self.token})

    def _refusal(self, held: dict | None) -> str:
        if not held:
            return "Another clone took this project's lease at the same moment; try again in a moment."
        until = time.strftime("%H:%M", time.localtime(float(held.get("expires", 0))))
        who = held.get("author") or "another clone"
        return (f"Another clone of this project ({who}) is {held.get('purpose', 'changing')} the shared vector "
                f"store and holds its lease until {until}; try again after it has finished.")
