"""A model of Anthropic's prompt cache, for the local stub and `forge bench cost`.

As documented: a request is read as blocks in order — tool definitions, system blocks, then each message's
content blocks. A block marked `cache_control` (or the last block, with top-level `cache_control`, the
"automatic" form) is a breakpoint: the prefix up to it is written to the cache when it is at least the
model's minimum length, and kept for its TTL (5 minutes, or 1 hour with `"ttl": "1h"`), refreshed on every
read. A request reads the longest cached prefix ending at a breakpoint or at one of the 20 blocks before it.
The `cache_control` marks themselves are not part of the prefix. Tokens are counted with cl100k (Forge's own
estimate), so figures are Forge's scale, not Claude's tokenizer's.

The clock is virtual (`now`, seconds): a benchmark can model a PM's pauses between turns without waiting.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from pmforge.core.tokens import count_tokens

LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def minimum_tokens(model: str) -> int:
    """The shortest prefix the model caches (Haiku 4.5 and Opus 4.5: 4,096; others 1,024)."""
    return 4096 if ("haiku-4-5" in model or "opus-4-5" in model) else 1024


@dataclass
class Block:
    tokens: int  # this block's
    prefix_tokens: int  # every block up to and including this one
    key: str  # hash of the prefix up to and including this block
    ttl: str | None  # its breakpoint's lifetime, or None when it is not a breakpoint


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def blocks_of(request: dict, automatic: bool | None = None, message_marks: bool = True) -> list[Block]:
    """The request as cache blocks. `automatic` None: as sent; True: a breakpoint on the last block.
    `message_marks=False` ignores marks inside messages (prices the request as if only the static prefix were
    marked)."""
    raw: list[tuple[str, object, dict | None]] = []  # (where, block without its mark, its mark)
    for tool in request.get("tools") or []:
        raw.append(("tool", {k: v for k, v in tool.items() if k != "cache_control"}, tool.get("cache_control")))
    system = request.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system:
        raw.append(("system", {k: v for k, v in block.items() if k != "cache_control"}, block.get("cache_control")))
    for message in request.get("messages") or []:
        content = message["content"]
        if isinstance(content, str):  # the API reads a string as one text block
            content = [{"type": "text", "text": content}]
        for block in content:
            mark = block.get("cache_control") if message_marks else None
            raw.append((message["role"], {k: v for k, v in block.items() if k != "cache_control"}, mark))
    top = request.get("cache_control") if automatic is None else ({"type": "ephemeral"} if automatic else None)
    blocks, total, key = [], 0, hashlib.sha256(str(request.get("model")).encode()).hexdigest()
    for i, (where, body, mark) in enumerate(raw):
        if top and i == len(raw) - 1:
            mark = mark or top
        text = _canonical([where, body])
        tokens = count_tokens(text)
        total += tokens
        key = hashlib.sha256((key + text).encode("utf-8")).hexdigest()
        blocks.append(Block(tokens, total, key, (mark.get("ttl") or "5m") if mark else None))
    return blocks


@dataclass
class PromptCache:
    now: float = 0.0
    entries: dict[str, tuple[float, str]] = field(default_factory=dict)  # prefix key -> (expires at, ttl)

    def usage(self, request: dict, automatic: bool | None = None, message_marks: bool = True,
              ttl: str | None = None) -> dict:
        """The input side of the usage Anthropic would report for `request` now, and the cache updated.
        `ttl` overrides the static prefix's lifetime (the first breakpoint), as FORGE_CACHE_TTL does."""
        blocks = blocks_of(request, automatic, message_marks)
        total = blocks[-1].prefix_tokens if blocks else 0
        marks = [i for i, b in enumerate(blocks) if b.ttl]
        if ttl and marks:
            blocks[marks[0]].ttl = ttl
        hit = -1  # the last block of the longest cached prefix
        for i in marks:
            for j in range(i, max(-1, i - LOOKBACK_BLOCKS - 1), -1):
                entry = self.entries.get(blocks[j].key)
                if entry and entry[0] > self.now:
                    hit = max(hit, j)
                    break
        read = blocks[hit].prefix_tokens if hit >= 0 else 0
        if hit >= 0:  # a read refreshes the entry's lifetime
            self.entries[blocks[hit].key] = (self.now + TTL_SECONDS[self.entries[blocks[hit].key][1]],
                                             self.entries[blocks[hit].key][1])
        written = {"5m": 0, "1h": 0}
        covered = read
        minimum = minimum_tokens(str(request.get("model")))
        for i in marks:
            b = blocks[i]
            if b.ttl is None or b.prefix_tokens < minimum:  # (marks are breakpoints: ttl is set)
                continue
            if b.prefix_tokens > covered:
                written[b.ttl] += b.prefix_tokens - covered
                covered = b.prefix_tokens
            self.entries[b.key] = (self.now + TTL_SECONDS[b.ttl], b.ttl)
        creation = written["5m"] + written["1h"]
        return {
            "input_tokens": total - read - creation,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": creation,
            "cache_creation": {"ephemeral_5m_input_tokens": written["5m"], "ephemeral_1h_input_tokens": written["1h"]},
        }
