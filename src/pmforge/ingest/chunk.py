"""Hierarchical parent/leaf chunking of Markdown with exact character offsets.

1. Split on `#`, `##`, `###` headings (outside code fences) into sections.
2. Merge sections under `merge_below` tokens into the next one; in a file of more
   sections than `max_sections` (thousands of headings), group small ones larger,
   so that the number of passages stays bounded whatever the headings.
3. Parents: a section, or pieces of it when it is over `parent_max` tokens.
4. Leaves: each parent packed into pieces of at most `leaf_max` tokens, cut at
   paragraph, then sentence, then line boundaries; never mid-sentence unless a
   single sentence is larger than a leaf. A table is cut between rows only, so
   each of its leaves is a group of whole rows.

Every parent and leaf keeps `start`/`end` into the Markdown, and its text is
exactly `markdown[start:end]`: the same offsets power citations and evaluation.

Every step is linear in the input (no pattern that backtracks over a whole line, no
walk back to the start of a table per leaf), so a hostile file costs time in
proportion to its size, which the upload limits bound.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Iterator

from pmforge.core.sentences import sentence_starts
from pmforge.core.tokens import count_tokens

# The title's trailing spaces and closing #s are stripped after the match: a lazy title followed by
# `[ \t#]*$` backtracks quadratically on a long line of "# # # …".
_HEADING = re.compile(r"(#{1,3})[ \t](.+)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_START = re.compile(r"\s*\|")


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
    max_sections: int = 1000


def breadcrumb(filename: str, path: list[str]) -> str:
    return "[Source: " + " > ".join([filename, *path]) + "]"


class TableHeaders:
    """The header rows of the Markdown tables of one document, found in one pass over its lines.

    `at(offset)`: when `offset` falls inside a table below its header, the header and separator rows;
    a leaf cut from the middle of a long table embeds with them so its rows keep their meaning."""

    def __init__(self, markdown: str):
        self.markdown = markdown
        self.starts = [0] + [m.end() for m in re.finditer("\n", markdown)]
        self.first: list[int] = []  # per line: index of the first line of its table, or -1
        first = -1
        for i in range(len(self.starts)):
            first = (i if first < 0 else first) if self._line(i).lstrip().startswith("|") else -1
            self.first.append(first)
        self._headers: dict[tuple[int, bool], str] = {}

    def _line(self, i: int) -> str:
        end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.markdown)
        return self.markdown[self.starts[i] : end].rstrip("\r\n")

    def at(self, offset: int) -> str:
        i = bisect_right(self.starts, offset) - 1
        first = self.first[i] if 0 <= i < len(self.first) else -1
        if first < 0 or i - first < 2:
            return ""
        key = (first, i - first > 2)  # rows below the third also get the third (see _header)
        if key not in self._headers:
            self._headers[key] = self._header(first, key[1])
        return self._headers[key]

    def _header(self, first: int, third_too: bool) -> str:
        head, separator = self._line(first), self._line(first + 1)
        if not _is_separator(separator):
            return ""
        if third_too and not head.replace("|", "").strip():
            # Word tables convert with an empty header; the real one is the next row
            return f"{head}\n{separator}\n{self._line(first + 2)}\n"
        return f"{head}\n{separator}\n"


def record_spans(windows: list[list[tuple[int, int]]], budget: int) -> list[list[tuple[int, int, int]]]:
    """Each leaf's search records, from the embedder's windows of it, as (start, end, read): a record keeps
    text[start:end] (what keyword search reads) and its vector is made from text[start:read]. Within `budget`
    windows every window is a record of its own. Past it, preparing the file would outlast the minute a PM
    waits, so it gets about `budget` windows in all: each leaf keeps its share, its last record running to the
    leaf's end; with more leaves than the budget, each leaf is one record embedded from a like share of its
    first window. Every word stays searchable by keywords either way."""
    total = sum(map(len, windows))
    if total <= budget:
        return [[(s, e, e) for s, e in w] for w in windows]
    if len(windows) >= budget:
        share = budget / len(windows)
        return [[(w[0][0], w[-1][1], w[0][0] + max(1, int((w[0][1] - w[0][0]) * share)))] for w in windows]
    out = []
    for w in windows:
        kept = w[: max(1, len(w) * budget // total)]
        out.append([(s, e, e) for s, e in kept[:-1]] + [(kept[-1][0], w[-1][1], kept[-1][1])])
    return out


def _is_separator(line: str) -> bool:
    """A table's "| --- | :-- |" row."""
    rest = line.strip()
    return bool(re.match(r":?-{2,}", (rest[1:] if rest.startswith("|") else rest).lstrip()))


def table_header_at(markdown: str, offset: int) -> str:
    """One lookup; to look up many offsets of one document, build a TableHeaders once."""
    return TableHeaders(markdown).at(offset)


def _headings(markdown: str) -> Iterator[tuple[int, int, str]]:
    """(offset, level, raw title) of each `#`, `##` and `###` heading outside code fences."""
    offset, in_fence = 0, False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            m = _HEADING.match(line.rstrip("\r\n"))
            if m:
                text = m.group(2).strip(" \t")
                yield offset, len(m.group(1)), text.rstrip(" \t#") or text[:1]
        offset += len(line)


def split_sections(markdown: str) -> list[Section]:
    """Sections from each heading to the next; text before the first heading is its own section."""
    heads = [(offset, level, _clean_title(title)) for offset, level, title in _headings(markdown)]

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


MAX_TITLE_CHARS = 200  # a title travels with every leaf of its section (breadcrumb, metadata)


def _clean_title(title: str) -> str:
    return re.sub(r"[*_`]+", "", title[: MAX_TITLE_CHARS * 2]).strip()[:MAX_TITLE_CHARS].rstrip()


def _merge_small(markdown: str, sections: list[Section], sizes: ChunkSizes) -> list[Section]:
    """A section under `merge_below` tokens joins the next one (a heading-only intro, a one-line note). Where
    that would still leave more than `max_sections` sections, consecutive sections under the size that keeps
    the file to about `max_sections` (at most a leaf) are grouped up to that size."""
    tokens = [count_tokens(markdown[sec.start : sec.end]) for sec in sections]
    share = -(-sum(tokens) // max(sizes.max_sections, 1))
    target = max(sizes.merge_below, min(sizes.leaf_max, share))
    out: list[Section] = []
    sizes_out: list[int] = []
    group: list[Section] = []
    size = 0
    for sec, n in zip(sections, tokens):
        if group:
            joins = size < sizes.merge_below or (n < target and size + n <= target)
            if not joins or size + n > sizes.parent_max:
                out.append(Section(group[0].start, group[-1].end, _group_path([g.path for g in group])))
                sizes_out.append(size)
                group, size = [], 0
        group.append(sec)
        size += n
    if group:
        if size < sizes.merge_below and out and sizes_out[-1] + size <= sizes.parent_max:
            out[-1] = Section(out[-1].start, group[-1].end, out[-1].path)  # a small tail joins the section before
        else:
            out.append(Section(group[0].start, group[-1].end, _group_path([g.path for g in group])))
    return out


def _group_path(paths: list[list[str]]) -> list[str]:
    """The heading path of sections joined into one: their shared headings and what follows, or, when that
    would make a title longer than any heading may be (a group of many), the first and last of them."""
    path = paths[0]
    for later in paths[1:]:
        path = _merged_path(path, later)
    if not path or len(path[-1]) <= MAX_TITLE_CHARS:
        return path
    common = 0
    while all(len(p) > common and p[common] == paths[0][common] for p in paths):
        common += 1
    tails = [" ".join(p[common:]) for p in paths if p[common:]]
    half = (MAX_TITLE_CHARS - 3) // 2
    return paths[0][:common] + [f"{tails[0][:half].rstrip()} … {tails[-1][:half].rstrip()}"]


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
        # A table is cut between rows, never at a "." inside a cell: each piece is whole rows under one header.
        _fit(markdown, s, e, limit, out, 1 if _TABLE_START.match(markdown, s) else 0)
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
    return _spans_cut_at(markdown, start, end, [start + m.end() for m in re.finditer(pattern, markdown[start:end])])


def _spans_cut_at(markdown: str, start: int, end: int, cuts: list[int]) -> list[tuple[int, int]]:
    """[start, end) cut at `cuts` into contiguous spans, none of them only whitespace."""
    spans, pos = [], start
    for cut in cuts:
        if markdown[pos:cut].strip():
            spans.append((pos, cut))
            pos = cut
    if markdown[pos:end].strip():
        spans.append((pos, end))
    elif spans:
        spans[-1] = (spans[-1][0], end)
    return spans


def _sentence_spans(markdown: str, start: int, end: int) -> list[tuple[int, int]]:
    return _spans_cut_at(markdown, start, end, [start + s for s in sentence_starts(markdown[start:end])[1:]])


def _line_spans(markdown: str, start: int, end: int) -> list[tuple[int, int]]:
    return _split_spans(markdown, start, end, r"\n")


_SPLITTERS = (_sentence_spans, _line_spans)


def _hard_cut(markdown: str, s: int, e: int, limit: int) -> list[tuple[int, int, int]]:
    out, pos = [], s
    chunk_start, tokens = s, 0
    for gs, ge in _word_groups(markdown, s, e, limit):
        gt = count_tokens(markdown[gs:ge])
        if tokens and tokens + gt > limit:
            out.append((chunk_start, gs, tokens))
            chunk_start, tokens = gs, 0
        tokens += gt
        pos = ge
    out.append((chunk_start, max(pos, e), tokens))
    return out


_WORD = re.compile(r"\S+\s*")


def _word_groups(markdown: str, s: int, e: int, limit: int) -> Iterator[tuple[int, int]]:
    """The places a leaf may end: runs of whole words of about `limit` / 8 characters (counting tokens
    per run, not per word, keeps a million one-letter words quick), and a word longer than a leaf
    (an inline base64 image, text with no spaces) in pieces of `limit` / 4 characters, which stay
    within `limit` tokens even where a character costs several."""
    run, piece = max(limit // 8, 1), max(limit // 4, 1)
    start: int | None = None
    end = s  # set before it is read: a run ends where its last word does
    for m in _WORD.finditer(markdown, s, e):
        a, b = m.span()
        if b - a > piece:
            if start is not None:
                yield start, end
                start = None
            yield from ((p, min(p + piece, b)) for p in range(a, b, piece))
            continue
        start = a if start is None else start
        end = b
        if end - start >= run:
            yield start, end
            start = None
    if start is not None:
        yield start, end


def _pack(units: list[tuple[int, int, int]], limit: int) -> list[tuple[int, int, int]]:
    """Greedily join adjacent units into spans of at most `limit` tokens."""
    packed: list[list[int]] = []
    for s, e, t in units:
        if packed and packed[-1][2] + t <= limit:
            packed[-1][1], packed[-1][2] = e, packed[-1][2] + t
        else:
            packed.append([s, e, t])
    return [(s, e, t) for s, e, t in packed]


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
