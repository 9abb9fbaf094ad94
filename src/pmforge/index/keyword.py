"""Keyword indexes kept in step with the vector collections by `ProjectStore`.

Pure semantic search misses exact tokens — acronyms, product codes, people's
names — which PMs ask about. Both indexes live in the workspace's
`vectordb/keyword/` and share one tokenizer (lower-case, stemmed):

- `KeywordIndex` (documents): a BM25 matrix over the corpus (ids, tokens,
  metadata saved as JSON), rebuilt when a file is added or removed, never per query;
- `TurnIndex` (conversation memory): SQLite FTS5, so a turn is added in
  constant time however long the session (a rebuilt matrix grows with every turn).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import bm25s
import numpy as np

from pmforge.core.tokens import stem
from pmforge.core.workspace import atomic_write_text

# Bumped when tokenization changes: an index saved in another format is rebuilt from the vector store's
# texts (no embedding needed), never searched with mismatched tokens.
INDEX_FORMAT = 2

_TOKEN = re.compile(r"[a-z0-9]+(?:[-_.'][a-z0-9]+)*")
_JOINED = re.compile(r"[-_.']")
_PARTS = _JOINED
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his how i if in into is "
    "it its me my no not of on or our she so than that the their them then there these they this those to was we "
    "were what when where which who whom why will with would you your about also just any all".split()
)

# Words that frame a question rather than name its topic ("tell me the status of PRJ-0419").
QUESTION_FRAMING = frozenset(
    "tell say said says explain describe show give know remind please status update latest summary summarise "
    "summarize details info information many much whats let us like think mean".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case stemmed words; a compound like `ZX-42` or `A/B` yields itself and its parts, so both
    spellings match."""
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        token = match.group()
        parts = _PARTS.split(token) if _JOINED.search(token) else (token,)
        if len(parts) > 1:
            out.append(token)
        out.extend(stem(p) for p in parts if p not in STOPWORDS and (len(p) > 1 or p.isdigit()))
    return out


@dataclass(frozen=True, eq=False)
class _Snapshot:
    """One consistent state of a `KeywordIndex`: ids, tokens, metadata and the matrix built from them, never
    changed after it is made. A reader takes one reference and uses only it, so a write swapping in the next
    snapshot can never pair one record's id with another's row."""

    ids: tuple[str, ...] = ()
    tokens: tuple[tuple[str, ...], ...] = ()
    meta: tuple[dict, ...] = ()
    bm25: bm25s.BM25 | None = None
    sets: tuple[frozenset[str], ...] = ()
    df: dict[str, int] = field(default_factory=dict)
    seen: tuple[int, int] | None = None  # the file's (mtime, size) this snapshot matches

    @classmethod
    def build(cls, ids, tokens, meta, seen: tuple[int, int] | None = None) -> "_Snapshot":
        tokens = tuple(tuple(t) for t in tokens)
        sets = tuple(frozenset(t) for t in tokens)
        df: dict[str, int] = {}
        for distinct in sets:
            for token in distinct:
                df[token] = df.get(token, 0) + 1
        bm25 = None
        if ids:
            bm25 = bm25s.BM25()
            # An empty token list would break the matrix; a placeholder keeps positions aligned and never matches.
            bm25.index([list(t) or ["\u2400"] for t in tokens], show_progress=False)
        return cls(tuple(ids), tokens, tuple(meta), bm25, sets, df, seen)

    def idf(self, token: str) -> float:
        n, df = len(self.ids), self.df.get(token, 0)
        return float(np.log(1 + (n - df + 0.5) / (df + 0.5)))

    def weights(self, query: str) -> dict[str, float]:
        return {t: self.idf(t) for t in set(tokenize(query)) - QUESTION_FRAMING}

    def coverage(self, weights: dict[str, float], position: int) -> float:
        total = sum(weights.values())
        return sum(w for t, w in weights.items() if t in self.sets[position]) / total if total else 0.0


class KeywordIndex:
    def __init__(self, folder: Path, name: str):
        self.path = Path(folder) / f"{name}.json"
        self._lock = threading.Lock()  # one writer at a time; readers never take it unless the file changed
        self.stale = False  # saved with another tokenizer: the store rebuilds it from its own texts
        self._snapshot = self._read_file()

    def __len__(self) -> int:
        return len(self._current().ids)

    def ids(self) -> set[str]:
        return set(self._current().ids)

    def _on_disk(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return st.st_mtime_ns, st.st_size

    def _read_file(self) -> _Snapshot:
        seen = self._on_disk()
        if seen is None:
            return _Snapshot()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("format") != INDEX_FORMAT:
                self.stale = True
                return _Snapshot(seen=seen)
            return _Snapshot.build(data["ids"], data["tokens"], data["meta"], seen)
        except (ValueError, KeyError):
            return _Snapshot(seen=seen)  # unreadable: starts empty, and forge doctor rebuilds it from the vector store
        except FileNotFoundError:
            return _Snapshot()  # cleared by another process between the stat and the read

    def _current(self) -> _Snapshot:
        """The snapshot to read: another process (the CLI beside the app) may have saved the index since."""
        snapshot = self._snapshot
        if self._on_disk() == snapshot.seen:
            return snapshot
        with self._lock:  # a writer in this process may be mid-save: wait for it, then look again
            return self._fresh()

    def _fresh(self) -> _Snapshot:
        """The current snapshot, re-read if another process saved since (callers hold the lock)."""
        if self._on_disk() != self._snapshot.seen:
            self._snapshot = self._read_file()
        return self._snapshot

    def _replace(self, ids: list[str], tokens: list, meta: list[dict]) -> None:
        """Save the new contents, then swap them in as one snapshot (callers hold the lock)."""
        snapshot = _Snapshot.build(ids, tokens, meta)
        payload = {"format": INDEX_FORMAT, "ids": snapshot.ids, "tokens": snapshot.tokens, "meta": snapshot.meta}
        atomic_write_text(self.path, json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
        self._snapshot = replace(snapshot, seen=self._on_disk())  # readers switch over in this one assignment

    def upsert(self, ids: list[str], texts: list[str], metas: list[dict]) -> None:
        with self._lock:
            old = self._fresh()
            replaced = set(ids)
            keep = [i for i, existing in enumerate(old.ids) if existing not in replaced]
            self._replace(
                [old.ids[i] for i in keep] + list(ids),
                [old.tokens[i] for i in keep] + [tokenize(t) for t in texts],
                [old.meta[i] for i in keep] + [dict(m) for m in metas],
            )

    def delete_where(self, key: str, value) -> None:
        with self._lock:
            old = self._fresh()
            keep = [i for i, m in enumerate(old.meta) if m.get(key) != value]
            if len(keep) == len(old.ids):
                return
            self._replace([old.ids[i] for i in keep], [old.tokens[i] for i in keep], [old.meta[i] for i in keep])

    def clear(self) -> None:
        with self._lock:
            self.path.unlink(missing_ok=True)
            self._snapshot = _Snapshot()
            self.stale = False

    def coverage(self, query: str, position: int) -> float:
        """Share of the query's information (IDF-weighted distinct terms) that entry `position` contains:
        calibrated across corpus sizes, unlike raw BM25 scores."""
        snapshot = self._current()
        return snapshot.coverage(snapshot.weights(query), position)

    def search(self, query: str, n: int, allow: Callable[[dict], bool] | None = None) -> list[tuple[str, float, dict]]:
        """The best `n` entries with a positive score, best first, as (id, score, meta with "coverage")."""
        terms = tokenize(query)
        snapshot = self._current()  # scores, ids and metadata all come from this one snapshot
        if snapshot.bm25 is None or not terms:
            return []
        scores = snapshot.bm25.get_scores(terms)
        if allow is not None:
            mask = np.array([allow(m) for m in snapshot.meta], dtype=bool)
            scores = np.where(mask, scores, 0.0)
        positive = int((scores > 0).sum())
        if not positive:
            return []
        n = min(n, positive)
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        weights = snapshot.weights(query)
        return [(snapshot.ids[i], float(scores[i]), {**snapshot.meta[i], "coverage": snapshot.coverage(weights, i)})
                for i in top]


class TurnIndex:
    """Keyword search over remembered turns in SQLite FTS5: adding a turn costs the same at turn 1,000 as at
    turn 1. Texts go in already tokenized (the shared tokenizer above), so both indexes match the same way."""

    _SCHEMA = (
        "CREATE VIRTUAL TABLE IF NOT EXISTS turns USING fts5(id UNINDEXED, turn_number UNINDEXED, body, "
        "tokenize=\"unicode61 tokenchars '-_.'\");"
        "CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT);"
    )

    def __init__(self, folder: Path, name: str):
        self.path = Path(folder) / f"{name}.sqlite"
        self._local = threading.local()
        self._write = threading.Lock()
        self._writes = 0  # this object's own commits: SQLite's data_version counts only other connections'

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")  # readers in other processes never wait for a writer
            db.executescript(self._SCHEMA)
            self._local.db = db
        return db

    @property
    def stale(self) -> bool:
        """Empty on disk or filled with another tokenizer: rebuilt from the vector store's texts."""
        row = self._db().execute("SELECT value FROM info WHERE key = 'format'").fetchone()
        return row is None or row[0] != str(INDEX_FORMAT)

    def __len__(self) -> int:
        return self._db().execute("SELECT count(*) FROM turns").fetchone()[0]

    def ids(self) -> set[str]:
        return {row[0] for row in self._db().execute("SELECT id FROM turns")}

    def upsert(self, ids: list[str], texts: list[str], metas: list[dict]) -> None:
        rows = [(i, int(m["turn_number"]), " ".join(tokenize(t))) for i, t, m in zip(ids, texts, metas)]
        with self._write:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("DELETE FROM turns WHERE id = ?", [(i,) for i in ids])
                db.executemany("INSERT INTO turns (id, turn_number, body) VALUES (?, ?, ?)", rows)
                db.execute("INSERT OR REPLACE INTO info VALUES ('format', ?)", (str(INDEX_FORMAT),))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            finally:
                self._writes += 1

    def delete_where(self, key: str, value) -> None:
        if key not in ("id", "turn_number"):
            raise ValueError(f"turns are deleted by id or turn_number, not {key}")
        with self._write:
            self._db().execute(f"DELETE FROM turns WHERE {key} = ?", (value,))
            self._writes += 1

    def clear(self) -> None:
        with self._write:
            db = self._db()
            db.execute("DELETE FROM turns")
            db.execute("INSERT OR REPLACE INTO info VALUES ('format', ?)", (str(INDEX_FORMAT),))
            self._writes += 1

    def numbers(self) -> dict[str, int]:
        """id → turn number of every indexed turn: how a matched turn's neighbours are found. Read again only
        after a write (this process's or another's), so every search does not scan the whole table; the
        mapping returned is shared: read it, do not change it."""
        db = self._db()
        version = (db.execute("PRAGMA data_version").fetchone()[0], self._writes)
        cached = getattr(self._local, "numbers", None)
        if cached is None or cached[0] != version:
            cached = (version, {i: int(n) for i, n in db.execute("SELECT id, turn_number FROM turns")})
            self._local.numbers = cached
        return cached[1]

    def search(self, query: str, n: int, before_turn: int | None = None) -> list[tuple[str, float, dict]]:
        """The best `n` turns, best first, as (id, BM25 score, {"turn_number"})."""
        terms = sorted(set(tokenize(query)))
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        sql = "SELECT id, turn_number, -bm25(turns) FROM turns WHERE turns MATCH ?"
        args: list = [match]
        if before_turn is not None:
            sql += " AND turn_number < ?"
            args.append(before_turn)
        sql += " ORDER BY bm25(turns) LIMIT ?"
        args.append(n)
        return [(i, float(score), {"turn_number": int(number)})
                for i, number, score in self._db().execute(sql, args)]
