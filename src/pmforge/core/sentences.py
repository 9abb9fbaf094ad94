"""Where sentences start and end in prose, as offsets into the text.

Written for how PMs and their documents write ("Dr. Shah", "e.g.", "3.4%", "St. Mary's", bullet lists,
all-lower-case typing): a line break ends a sentence; abbreviations, initials and decimals do not; a
lower-case start after a full stop still starts one.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = (
    "dr", "mr", "mrs", "ms", "prof", "st", "sr", "jr", "vs", "etc", "approx", "inc", "ltd", "co", "corp", "dept",
    "no", "fig", "est", "mt", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "e.g", "i.e", "a.m", "p.m", "u.s", "u.k", "cf", "al", "min", "max", "avg", "yr", "yrs", "wk", "wks", "hr", "hrs",
)
# A dot that does not end a sentence is swapped for this one-dot leader before splitting; one character for
# one, so every offset found in the protected line is an offset in the original.
_DOT = "\u2024"
_ABBREV = re.compile(r"\b(" + "|".join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
                     + r")\.", re.I)
_INITIAL = re.compile(r"\b([A-Z])\.(?=\s*[A-Z])")  # "J. Smith"
_DECIMAL = re.compile(r"(\d)\.(\d)")
# After the end mark: closing quotes or brackets (kept with the sentence they close), then the space between.
_BOUNDARY = re.compile(r"(?<=[.!?…])([\"”’')\]]*)\s+(?=[\"“‘'(\[]?[A-Za-z0-9£$€₹¥])")
_LINE = re.compile(r"[^\n]+")


def _protected(line: str) -> str:
    line = _DECIMAL.sub(lambda m: m.group(1) + _DOT + m.group(2), line)
    line = _ABBREV.sub(lambda m: m.group(1).replace(".", _DOT) + _DOT, line)
    return _INITIAL.sub(lambda m: m.group(1) + _DOT, line)


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """`(start, end)` of every sentence in `text`, in order, without surrounding whitespace; blank lines
    give none. `text[start:end]` is the sentence exactly as written."""
    spans: list[tuple[int, int]] = []
    for line in _LINE.finditer(text or ""):
        base, start = line.start(), 0
        for cut in _BOUNDARY.finditer(_protected(line.group())):
            span = _trimmed(text, base + start, base + cut.start() + len(cut.group(1)))
            if span:
                spans.append(span)
            start = cut.end()
        span = _trimmed(text, base + start, line.end())
        if span:
            spans.append(span)
    return spans


def sentence_starts(text: str) -> list[int]:
    """Where each sentence of `text` starts: the places a passage may be cut or widened to."""
    return [start for start, _ in sentence_spans(text)]


_CLAUSE_END = re.compile(r"[:;][\"”’')\]]*\s+(?=\S)")


def clause_starts(text: str) -> list[int]:
    """Where each sentence starts, and each clause after a colon or semicolon inside one: finer places to
    widen a passage to when a whole sentence would not fit."""
    starts: list[int] = []
    for start, end in sentence_spans(text):
        starts.append(start)
        starts += [start + m.end() for m in _CLAUSE_END.finditer(text[start:end])]
    return starts
