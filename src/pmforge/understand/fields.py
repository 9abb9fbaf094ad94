"""Which field of the brief a sentence speaks to: a small learned classifier on sentence embeddings.

Each label has its own logistic regression over the MiniLM embedding Forge already ships (the local
embedder, whatever embedder the project searches with), the sentence's lemmas and its dependency relations
(hashed), and a few facts the parse gives (a number, money, a date, a person, a question, a condition). The
weights are trained from the labelled PM sentences in `training/sentences/` by `scripts/train-understanding`
and shipped as `data/fields.npz`, with the digest of the corpus they came from. Each label has a threshold chosen on held-out folds for precision: below it the
label is not given, and a sentence no label clears records nothing (the interviewer asks instead).
"""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from pmforge.understand import text as t

if TYPE_CHECKING:
    from spacy.tokens import Doc

LABELS = (
    "problem", "audience", "stakeholder", "metric_leading", "metric_lagging", "anti_metric", "proceed_if",
    "do_not_proceed_if", "why_now", "tried_before", "out_of_scope", "day_one", "dependencies", "platform",
    "solution", "value_risk", "usability_risk", "feasibility_risk", "viability_risk", "build_vs_buy", "validation",
    "org_context", "none",
    # Derived from the roles annotated on each sentence's stakeholders: the part someone plays in it.
    "decides", "must_change", "gains_from_status_quo",
)
# A sentence carries a derived label when one of its annotated stakeholders has this role.
ROLE_LABELS = {"decision_authority": "decides", "execution_dependency": "must_change",
               "status_quo_beneficiary": "gains_from_status_quo"}
WORD_BUCKETS = 4096  # hashed lemma unigrams and bigrams beside the embedding
WEIGHTS = Path(__file__).with_name("data") / "fields.npz"
CORPUS = Path(__file__).resolve().parents[3] / "training" / "sentences"


# ---------------------------------------------------------------- features


def parse_features(doc: "Doc") -> list[float]:
    """What the parse says about a sentence, as numbers the classifier weighs beside its embedding."""
    text = doc.text
    ents = {e.label_ for e in doc.ents}
    words = len([w for w in doc if not w.is_punct])
    return [
        float(text.rstrip().endswith("?")),
        float(bool(t.NUMBER.search(text))),
        float("PERCENT" in ents or "%" in text),
        float("MONEY" in ents or any(c in text for c in "$£€")),
        float(bool(ents & {"DATE", "TIME"})),
        float("PERSON" in ents),
        float(bool(ents & {"ORG", "PRODUCT"})),
        float(any(w.dep_ == "mark" and w.lower_ in ("if", "unless") for w in doc)),
        float(any(w.dep_ == "neg" for w in doc)),
        float(t.is_hedged(text)),
        min(words, 40) / 40.0,
        float(words <= 4),
    ]


N_PARSE_FEATURES = 12
EMBEDDING_SIZE = 384  # MiniLM's
HASHED_FROM = EMBEDDING_SIZE + N_PARSE_FEATURES  # where the hashed word and relation indicators start


def word_features(doc: "Doc") -> np.ndarray:
    """Which lemmas and lemma pairs a sentence uses, hashed into WORD_BUCKETS (crc32: the same on every machine).
    The embedding reads the gist; these keep the small words that decide a field ("if", "not", "tried")."""
    vector = np.zeros(WORD_BUCKETS, dtype=np.float32)
    lemmas = [w.lemma_.lower() for w in doc if not w.is_punct and not w.like_num and not w.is_space]
    for gram in lemmas + [f"{a} {b}" for a, b in zip(lemmas, lemmas[1:])]:
        vector[zlib.crc32(gram.encode("utf-8")) % WORD_BUCKETS] = 1.0
    return vector


# The grammatical relations that most often decide a field: who is the subject, what is done, to what, and
# under which condition ("nsubj:lead", "dobj>approve:budget", "neg:not"), plus a field name before a colon.
RELATIONS = ("nsubj", "nsubjpass", "dobj", "ROOT", "attr", "pobj", "acomp", "xcomp", "ccomp", "advcl", "neg", "aux",
             "prep")
RELATION_BUCKETS = 1024


def relation_features(doc: "Doc") -> np.ndarray:
    """The sentence's dependency relations as lemma pairs, hashed into RELATION_BUCKETS (crc32). The words
    say what is talked about; the relations say what is said of it ("the team has to change" and "the team
    changed it" share their words, not their relations)."""
    vector = np.zeros(RELATION_BUCKETS, dtype=np.float32)
    grams = []
    for w in doc:
        if w.dep_ in RELATIONS:
            lemma = w.lemma_.lower()
            grams += [f"{w.dep_}:{lemma}", f"{w.dep_}>{w.head.lemma_.lower()}:{lemma}"]
    if ":" in doc.text[:30]:
        grams.append("field:" + doc.text.split(":")[0].lower().strip())
    for gram in grams:
        vector[zlib.crc32(gram.encode("utf-8")) % RELATION_BUCKETS] = 1.0
    return vector


def corpus_digest(folder: Path = CORPUS) -> str:
    """sha256 over the corpus files' names and bytes, in name order: what the shipped weights were trained on."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.jsonl")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def read_corpus(folder: Path = CORPUS) -> list[dict]:
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                row["source"] = path.stem
                rows.append(row)
    return rows


# ---------------------------------------------------------------- the trained model


@dataclass
class Weights:
    labels: tuple[str, ...]
    coef: np.ndarray  # labels × features
    bias: np.ndarray  # labels
    thresholds: np.ndarray  # labels
    mean: np.ndarray  # features: standardisation learnt with the weights
    scale: np.ndarray
    corpus: str  # corpus_digest() at training time
    embedder: str

    def save(self, path: Path = WEIGHTS) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            np.savez(handle, labels=np.array(self.labels), coef=self.coef.astype(np.float32),
                     bias=self.bias.astype(np.float32), thresholds=self.thresholds.astype(np.float32),
                     mean=self.mean.astype(np.float32), scale=self.scale.astype(np.float32),
                     corpus=np.array(self.corpus), embedder=np.array(self.embedder))

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> "Weights":
        with np.load(path, allow_pickle=False) as data:
            return cls(labels=tuple(str(x) for x in data["labels"]), coef=data["coef"], bias=data["bias"],
                       thresholds=data["thresholds"], mean=data["mean"], scale=data["scale"],
                       corpus=str(data["corpus"]), embedder=str(data["embedder"]))

    def logits(self, features: np.ndarray) -> np.ndarray:
        return ((features - self.mean) / self.scale) @ self.coef.T + self.bias

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logits(features)))


@lru_cache(maxsize=1)
def weights() -> Weights:
    return Weights.load()


# ---------------------------------------------------------------- sentence embeddings, cached


class _SentenceVectors:
    """MiniLM vectors for sentences, remembered: a message is read by understanding and its sentences are met
    again when the brief is recomposed."""

    def __init__(self, size: int = 4096) -> None:
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        from pmforge.embed.local import LocalEmbedder

        if not texts:
            return np.zeros((0, LocalEmbedder.dimensions), dtype=np.float32)
        with self._lock:
            found = {x: self._cache[x] for x in dict.fromkeys(texts) if x in self._cache}
        missing = [x for x in dict.fromkeys(texts) if x not in found]
        if missing:
            vectors = _embedder().embed_documents(missing)
            for text, vector in zip(missing, vectors):
                found[text] = np.asarray(vector, dtype=np.float32)
            with self._lock:  # remembered up to the cache's size; this call's answer never depends on it
                for text in missing:
                    self._cache[text] = found[text]
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return np.stack([found[x] for x in texts])


@lru_cache(maxsize=1)
def _embedder():
    from pmforge.embed.local import LocalEmbedder

    return LocalEmbedder()


sentence_vectors = _SentenceVectors()


def unit_vectors(texts: list[str]) -> np.ndarray:
    """Sentence vectors scaled to length 1, so a dot product is their cosine similarity."""
    vectors = sentence_vectors(texts)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


def features(texts: list[str], docs: Iterable["Doc"]) -> np.ndarray:
    docs = list(docs)
    vectors = sentence_vectors(texts)
    parsed = np.array([parse_features(d) for d in docs], dtype=np.float32).reshape(len(texts), N_PARSE_FEATURES)
    words = np.stack([word_features(d) for d in docs]) if docs else np.zeros((0, WORD_BUCKETS), dtype=np.float32)
    relations = np.stack([relation_features(d) for d in docs]) if docs else \
        np.zeros((0, RELATION_BUCKETS), dtype=np.float32)
    return np.hstack([vectors, parsed, words, relations])


# ---------------------------------------------------------------- reading sentences


@dataclass
class Reading:
    """A sentence's label probabilities and the labels that cleared their thresholds."""

    probabilities: dict[str, float]
    labels: list[str]

    def p(self, label: str) -> float:
        return self.probabilities.get(label, 0.0)

    def has(self, *labels: str) -> bool:
        return any(label in self.labels for label in labels)


# A sentence's best label is taken, even below its own threshold, when it is this likely and beats "none".
TOP_LABEL_FLOOR = 0.3
# Log-odds added to the labels that answer the question Forge just asked: a PM mostly answers what was asked.
EXPECTED_BONUS = 1.0
# Log-odds moved from "none" to the field a heading names, for the sentences under it ("**Evidence**", "Why now.").
HEADING_BONUS = 1.5


def read(texts: list[str], docs: list["Doc"], expected: Iterable[str] = (),
         headed: Sequence[str | None] = ()) -> list[Reading]:
    """The labels each sentence speaks to. "none" on its own, or nothing at all, means record nothing.
    `expected` are the labels that would answer the question Forge asked last: they tip a sentence that no
    label claims on its own, never one the classifier has already read clearly. `headed` gives, per text, the
    field a heading above it in the same message names ("Why now." then the sentences that answer it)."""
    if not texts:
        return []
    model = weights()
    logits = model.logits(features(texts, docs))
    for row, label in zip(logits, headed):
        if label in model.labels:
            row[model.labels.index(label)] += HEADING_BONUS
            row[model.labels.index("none")] -= HEADING_BONUS
    tipped = logits.copy()
    for label in expected:
        if label in model.labels:
            tipped[:, model.labels.index(label)] += EXPECTED_BONUS
    readings = []
    for plain, prior in zip(1.0 / (1.0 + np.exp(-logits)), 1.0 / (1.0 + np.exp(-tipped))):
        chosen = _chosen(model, plain)
        if not chosen and expected:
            chosen, plain = _chosen(model, prior), prior
        readings.append(Reading({label: float(p) for label, p in zip(model.labels, plain)}, chosen))
    return readings


def _chosen(model: Weights, row: np.ndarray) -> list[str]:
    none_at = model.labels.index("none")
    chosen = [label for label, p, cut in zip(model.labels, row, model.thresholds)
              if p >= cut and label != "none" and label not in ROLE_LABELS.values()]
    ranked = sorted((j for j in range(len(model.labels))
                     if j != none_at and model.labels[j] not in ROLE_LABELS.values()), key=lambda j: -row[j])
    top = ranked[0]
    if model.labels[top] not in chosen and row[top] >= TOP_LABEL_FLOOR and row[top] > row[none_at]:
        chosen.append(model.labels[top])
    if chosen and row[none_at] >= 0.5 and row[none_at] > max(row[model.labels.index(c)] for c in chosen):
        chosen = []  # chit-chat that happens to share a word with a field
    return chosen
