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
from pathlib import Path
from typing import Callable

import bm25s
import numpy as np

from ..tokens import stem
from ..workspace import atomic_write_text

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


class KeywordIndex:
    def __init__(self, folder: Path, name: str):
        self.path = Path(folder) / f"{name}.json"
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._tokens: list[list[str]] = []
        self._meta: list[dict] = []
        self._bm25: bm25s.BM25 | None = None
        self._sets: list[set[str]] = []
        self._df: dict[str, int] = {}
        self._seen: tuple[int, int] | None = None
        self.stale = False  # saved with another tokenizer: the store rebuilds it from its own texts
        self._load()

    def __len__(self) -> int:
        self._refresh()
        return len(self._ids)

    def ids(self) -> set[str]:
        self._refresh()
        return set(self._ids)

    def _on_disk(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return st.st_mtime_ns, st.st_size

    def _load(self) -> None:
        self._seen = self._on_disk()
        self._ids, self._tokens, self._meta = [], [], []
        if self._seen is not None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("format") != INDEX_FORMAT:
                    self.stale = True
                else:
                    self._ids, self._tokens, self._meta = data["ids"], data["tokens"], data["meta"]
            except (ValueError, KeyError):
                pass  # unreadable: starts empty, and forge doctor rebuilds it from the vector store
        self._rebuild()

    def _refresh(self) -> None:
        """Another process (the CLI beside the app) may have saved the index since we read it."""
        if self._on_disk() != self._seen:
            self._load()

    def _rebuild(self) -> None:
        self._bm25 = None
        self._sets = [set(t) for t in self._tokens]
        self._df = {}
        for tokens in self._sets:
            for token in tokens:
                self._df[token] = self._df.get(token, 0) + 1
        if self._ids:
            bm25 = bm25s.BM25()
            # An empty token list would break the matrix; a placeholder keeps positions aligned and never matches.
            bm25.index([t or ["\u2400"] for t in self._tokens], show_progress=False)
            self._bm25 = bm25

    def _save(self) -> None:
        payload = {"format": INDEX_FORMAT, "ids": self._ids, "tokens": self._tokens, "meta": self._meta}
        atomic_write_text(self.path, json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
        self._seen = self._on_disk()

    def upsert(self, ids: list[str], texts: list[str], metas: list[dict]) -> None:
        with self._lock:
            self._refresh()
            replaced = set(ids)
            keep = [i for i, existing in enumerate(self._ids) if existing not in replaced]
            self._ids = [self._ids[i] for i in keep] + list(ids)
            self._tokens = [self._tokens[i] for i in keep] + [tokenize(t) for t in texts]
            self._meta = [self._meta[i] for i in keep] + list(metas)
            self._rebuild()
            self._save()

    def delete_where(self, key: str, value) -> None:
        with self._lock:
            self._refresh()
            keep = [i for i, m in enumerate(self._meta) if m.get(key) != value]
            if len(keep) == len(self._ids):
                return
            self._ids = [self._ids[i] for i in keep]
            self._tokens = [self._tokens[i] for i in keep]
            self._meta = [self._meta[i] for i in keep]
            self._rebuild()
            self._save()

    def clear(self) -> None:
        with self._lock:
            self._ids, self._tokens, self._meta, self._bm25 = [], [], [], None
            self._sets, self._df = [], {}
            self.path.unlink(missing_ok=True)
            self._seen = None
            self.stale = False

    def _idf(self, token: str) -> float:
        n = len(self._ids)
        df = self._df.get(token, 0)
        return float(np.log(1 + (n - df + 0.5) / (df + 0.5)))

    def coverage(self, query: str, position: int) -> float:
        """Share of the query's information (IDF-weighted distinct terms) that entry `position` contains:
        calibrated across corpus sizes, unlike raw BM25 scores."""
        return self._coverage(self._weights(query), position)

    def _weights(self, query: str) -> dict[str, float]:
        return {t: self._idf(t) for t in set(tokenize(query)) - QUESTION_FRAMING}

    def _coverage(self, weights: dict[str, float], position: int) -> float:
        total = sum(weights.values())
        return sum(w for t, w in weights.items() if t in self._sets[position]) / total if total else 0.0

    def search(self, query: str, n: int, allow: Callable[[dict], bool] | None = None) -> list[tuple[str, float, dict]]:
        """The best `n` entries with a positive score, best first, as (id, score, meta with "coverage")."""
        terms = tokenize(query)
        # Searched under the lock: an upsert in another thread swaps the matrix, ids and metadata together.
        with self._lock:
            self._refresh()
            if self._bm25 is None or not terms:
                return []
            scores = self._bm25.get_scores(terms)
            if allow is not None:
                mask = np.array([allow(m) for m in self._meta], dtype=bool)
                scores = np.where(mask, scores, 0.0)
            positive = int((scores > 0).sum())
            if not positive:
                return []
            n = min(n, positive)
            top = np.argpartition(-scores, n - 1)[:n]
            top = top[np.argsort(-scores[top], kind="stable")]
            weights = self._weights(query)
            return [(self._ids[i], float(scores[i]), {**self._meta[i], "coverage": self._coverage(weights, i)})
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

    def delete_where(self, key: str, value) -> None:
        if key not in ("id", "turn_number"):
            raise ValueError(f"turns are deleted by id or turn_number, not {key}")
        with self._write:
            self._db().execute(f"DELETE FROM turns WHERE {key} = ?", (value,))

    def clear(self) -> None:
        with self._write:
            db = self._db()
            db.execute("DELETE FROM turns")
            db.execute("INSERT OR REPLACE INTO info VALUES ('format', ?)", (str(INDEX_FORMAT),))

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
