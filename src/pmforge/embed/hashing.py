"""A deterministic bag-of-words embedder: words hashed into 384 signed buckets, no model at all.

It cuts text into the same windows as the local model (same tokenizer), so every path through ingest, the
store and retrieval runs exactly as with the real model — only the vectors are lexical instead of semantic.
Tests that exercise plumbing use it (the real model costs seconds per document on a small machine); tests
and evaluations that measure retrieval quality use the real model. `FORGE_EMBEDDINGS=hashing`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter

from pmforge.embed.local import LocalEmbedder

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _bucket(term: str, dimensions: int) -> tuple[int, float]:
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    return number % dimensions, (1.0 if number >> 63 else -1.0)


class HashingEmbedder(LocalEmbedder):
    name = "hashing-bow"
    dimensions = 384

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        counts = Counter(_stem(w) for w in _WORD.findall(text.lower()))
        for term, count in counts.items():
            index, sign = _bucket(term, self.dimensions)
            vector[index] += sign * (1.0 + math.log(count))
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]
