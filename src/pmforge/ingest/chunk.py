"""Hierarchical parent/leaf chunking of Markdown with exact character offsets.

1. Split on `#`, `##`, `###` headings (outside code fences) into sections.
2. Merge sections under `merge_below` tokens into the next one.
3. Parents: a section, or pieces of it when it is over `parent_max` tokens.
4. Leaves: each parent packed into pieces of at most `leaf_max` tokens, cut at
   paragraph, then sentence, then line boundaries; never mid-sentence unless a
   single sentence is larger than a leaf.

Every parent and leaf keeps `start`/`end` into the Markdown, and its text is
exactly `markdown[start:end]`: the same offsets power citations and evaluation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..tokens import count_tokens

_HEADING = re.compile(r"^(#{1,3})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=\S)")


@dataclass
class Section:
    start: int
    end: int
    path: list[str]  # heading titles from the top level down


@dataclass
class Leaf:
    start: int
    end: int
    text: str
    tokens: int


@dataclass
class Parent:
    start: int
    end: int
    text: str
    tokens: int
    path: list[str]
    leaves: list[Leaf] = field(default_factory=list)

    @property
    def section(self) -> str:
        return " > ".join(self.path)


@dataclass
class ChunkSizes:
    leaf_max: int = 500
    parent_max: int = 2000
    merge_below: int = 100


def breadcrumb(filename: str, path: list[str]) -> str:
    return "[Source: " + " > ".join([filename, *path]) + "]"


def table_header_at(markdown: str, offset: int) -> str:
    """When `offset` falls inside a Markdown table below its header, the header and separator rows;
    a leaf cut from the middle of a long table embeds with them so its rows keep their meaning."""
    line_start = markdown.rfind("\n", 0, offset) + 1
    if not markdown[line_start:offset + 1].lstrip().startswith("|"):
        return ""
    first = line_start
    while first > 0:
        prev = markdown.rfind("\n", 0, first - 1) + 1
        if not markdown[prev:first].lstrip().startswith("|"):
            break
        first = prev
    if first == line_start:
        return ""
    rows = markdown[first:line_start].splitlines()
    if len(rows) < 2 or not re.match(r"^\s*\|?\s*:?-{2,}", rows[1]):
        return ""
    if not rows[0].replace("|", "").strip() and len(rows) > 2:
        return "\n".join(rows[:3]) + "\n"  # Word tables convert with an empty header; the real one is next
    return rows[0] + "\n" + rows[1] + "\n"


def split_sections(markdown: str) -> list[Section]:
    """Sections from each heading to the next; text before the first heading is its own section."""
    heads: list[tuple[int, int, str]] = []  # (offset, level, title)
    offset, in_fence = 0, False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _HEADING.match(line.rstrip("\r\n"))
            if m:
                heads.append((offset, len(m.group(1)), _clean_title(m.group(2))))
        offset += len(line)

    sections: list[Section] = []
    if not heads or heads[0][0] > 0:
        first = heads[0][0] if heads else len(markdown)
        if markdown[:first].strip():
            sections.append(Section(0, first, []))
    stack: list[tuple[int, str]] = []
    for i, (start, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = heads[i + 1][0] if i + 1 < len(heads) else len(markdown)
        sections.append(Section(start, end, [t for _, t in stack]))
    return sections


def _clean_title(title: str) -> str:
    return re.sub(r"[*_`]+", "", title).strip()


def _merge_small(markdown: str, sections: list[Section], sizes: ChunkSizes) -> list[Section]:
    """A section under `merge_below` tokens joins the next one (a heading-only intro, a one-line note)."""
    out: list[Section] = []
    pending: Section | None = None
    for sec in sections:
        if pending is not None:
            combined = count_tokens(markdown[pending.start : sec.end])
            if combined <= sizes.parent_max:
                sec = Section(pending.start, sec.end, _merged_path(pending.path, sec.path))
            else:
                out.append(pending)
            pending = None
        if count_tokens(markdown[sec.start : sec.end]) < sizes.merge_below:
            pending = sec
        else:
            out.append(sec)
    if pending is not None:
        if out and count_tokens(markdown[out[-1].start : pending.end]) <= sizes.parent_max:
            last = out.pop()
            out.append(Section(last.start, pending.end, last.path))
        else:
            out.append(pending)
    return out


def _merged_path(first: list[str], second: list[str]) -> list[str]:
    if second[: len(first)] == first:  # an intro heading followed by its own sub-section
        return second
    common = 0
    while common < min(len(first), len(second)) and first[common] == second[common]:
        common += 1
    tail = [p for p in (" ".join(first[common:]), " ".join(second[common:])) if p]
    return first[:common] + ([" / ".join(tail)] if tail else [])


# ---------------------------------------------------------------- size enforcement

def _units(markdown: str, start: int, end: int, limit: int) -> list[tuple[int, int, int]]:
    """Spans (start, end, tokens) no bigger than `limit`, cut at the coarsest boundary that works."""
    out: list[tuple[int, int, int]] = []
    for s, e in _split_spans(markdown, start, end, r"\r?\n[ \t]*\r?\n"):
        _fit(markdown, s, e, limit, out)
    return out


def _fit(markdown: str, s: int, e: int, limit: int, out: list, level: int = 0) -> None:
    tokens = count_tokens(markdown[s:e])
    if tokens <= limit:
        out.append((s, e, tokens))
        return
    while level < len(_SPLITTERS):
        spans = _SPLITTERS[level](markdown, s, e)
        level += 1
        if len(spans) > 1:
            for a, b in spans:
                _fit(markdown, a, b, limit, out, level)
            return
    out.extend(_hard_cut(markdown, s, e, limit))  # one unbreakable run of text: cut between words


def _split_spans(markdown: str, start: int, end: int, pattern: str) -> list[tuple[int, int]]:
    spans, pos = [], start
    for m in re.finditer(pattern, markdown[start:end]):
        cut = start + m.end()
        if markdown[pos:cut].strip():
            spans.append((pos, cut))
            pos = cut
    if markdown[pos:end].strip():
        spans.append((pos, end))
    elif spans:
        spans[-1] = (spans[-1][0], end)
    return spans


def _sentence_spans(markdown: str, start: int, end: int) -> list[tuple[int, int]]:
    return _split_spans(markdown, start, end, _SENTENCE_END.pattern)


def _line_spans(markdown: str, start: int, end: int) -> list[tuple[int, int]]:
    return _split_spans(markdown, start, end, r"\n")


_SPLITTERS = (_sentence_spans, _line_spans)


def _hard_cut(markdown: str, s: int, e: int, limit: int) -> list[tuple[int, int, int]]:
    out, pos = [], s
    words = list(re.finditer(r"\S+\s*", markdown[s:e]))
    chunk_start, tokens = s, 0
    for w in words:
        wt = count_tokens(w.group())
        if tokens and tokens + wt > limit:
            out.append((chunk_start, s + w.start(), tokens))
            chunk_start, tokens = s + w.start(), 0
        tokens += wt
        pos = s + w.end()
    out.append((chunk_start, max(pos, e), tokens))
    return out


def _pack(units: list[tuple[int, int, int]], limit: int) -> list[tuple[int, int, int]]:
    """Greedily join adjacent units into spans of at most `limit` tokens."""
    packed: list[list[int]] = []
    for s, e, t in units:
        if packed and packed[-1][2] + t <= limit:
            packed[-1][1], packed[-1][2] = e, packed[-1][2] + t
        else:
            packed.append([s, e, t])
    return [tuple(p) for p in packed]


def _trim(markdown: str, s: int, e: int) -> tuple[int, int]:
    while s < e and markdown[s].isspace():
        s += 1
    while e > s and markdown[e - 1].isspace():
        e -= 1
    return s, e


def chunk_markdown(markdown: str, sizes: ChunkSizes | None = None) -> list[Parent]:
    sizes = sizes or ChunkSizes()
    parents: list[Parent] = []
    for sec in _merge_small(markdown, split_sections(markdown), sizes):
        if count_tokens(markdown[sec.start : sec.end]) <= sizes.parent_max:
            pieces = [(sec.start, sec.end)]
        else:
            pieces = [(s, e) for s, e, _ in _pack(_units(markdown, sec.start, sec.end, sizes.leaf_max), sizes.parent_max)]
        for ps, pe in pieces:
            ps, pe = _trim(markdown, ps, pe)
            if ps >= pe:
                continue
            parent = Parent(ps, pe, markdown[ps:pe], count_tokens(markdown[ps:pe]), sec.path)
            for ls, le, _ in _pack(_units(markdown, ps, pe, sizes.leaf_max), sizes.leaf_max):
                ls, le = _trim(markdown, ls, le)
                if ls < le:
                    text = markdown[ls:le]
                    parent.leaves.append(Leaf(ls, le, text, count_tokens(text)))
            if parent.leaves:
                parents.append(parent)
    return parents
