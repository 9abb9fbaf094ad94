"""Extractive summaries: the offline summarizer, and the fallback when Haiku is unreachable."""

from __future__ import annotations

import re

from pmforge.core.sentences import sentence_spans
from pmforge.understand.text import clip_words

_MD_NOISE = re.compile(r"[*_`>#|]+")


def sentences(text: str) -> list[str]:
    """Sentences of prose, with headings and blank lines as hard boundaries (a heading is not a sentence)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=#)", text):
        block = re.sub(r"^#{1,6}\s+.*$", "", block, flags=re.M)
        block = re.sub(r"^\s*\|.*$", "", block, flags=re.M)  # table rows are not sentences
        flat = " ".join(_MD_NOISE.sub(" ", block).split())
        out += [flat[s:e] for s, e in sentence_spans(flat) if e - s > 2]
    return out



def questions_in(text: str, max_words: int = 40) -> str:
    """The questions a reply asked (what the PM's next message answers)."""
    asked = [s for s in sentences(text) if s.endswith("?")]
    return clip_words(" ".join(asked), max_words)


def turn_summary(user: str, assistant: str, asked: str = "", max_words: int = 60) -> str:
    """What the PM said carries the facts worth finding later. The topic comes from the question the PM
    was answering (asked in the previous turn), not from the next question Forge asks in this one."""
    said = clip_words(" ".join(user.split()), max_words)
    return (f"Answering: {asked} | " if asked else "") + f"PM: {said}"


# Closing #s are stripped after the match: a lazy title before `[ \t#]*$` backtracks quadratically on "# # # …".
_HEADING_LINE = re.compile(r"^(#{1,6})[ \t]+(.+)$", re.M)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_NOT_A_TITLE = re.compile(r"^(?:[-+*•>|<!\[`~]|\d{1,3}[.)]\s)|[.,;:!]$")
TITLE_MAX_WORDS = 15


def _plain(text: str) -> str:
    """Markdown's markers removed; a character the document escaped (a name's `\\_\\_`) is its own and stays."""
    parts = _ESCAPED.split(text)  # odd items are the escaped characters
    return " ".join("".join(p if i % 2 else _MD_NOISE.sub("", p) for i, p in enumerate(parts)).split())


def _title(markdown: str) -> tuple[str, int]:
    """The document's title and the offset of its line (-1: none): the opening line when it is a heading or a
    short line standing alone (Word's Title style converts to a plain paragraph above the first heading),
    else the first heading."""
    opening = re.search(r"\S[^\n]*", markdown)
    if opening:
        line = opening.group().rstrip()
        heading = _HEADING_LINE.match(line)
        if heading:
            return _plain(heading.group(2).rstrip(" \t#")), opening.start()
        rest = markdown[opening.end():]
        alone = bool(rest.strip()) and re.match(r"[ \t]*\n[ \t]*(?:\n|#)", rest) is not None
        words = _plain(line).split()
        if alone and 0 < len(words) <= TITLE_MAX_WORDS and not _NOT_A_TITLE.search(line) and \
                any(ch.isalpha() for ch in line):
            return " ".join(words), opening.start()
    first = next((m for m in _HEADING_LINE.finditer(markdown) if len(m.group(1)) <= 3), None)
    return (_plain(first.group(2).rstrip(" \t#")), first.start()) if first else ("", -1)


def file_summary(filename: str, markdown: str, max_words: int = 70) -> str:
    """Title, main headings and the opening sentence: a faithful paragraph with nothing invented."""
    title, at = _title(markdown)
    headings = [_plain(m.group(2).rstrip(" \t#")) for m in _HEADING_LINE.finditer(markdown)
                if len(m.group(1)) <= 3 and m.start() != at]
    covers = [h for h in dict.fromkeys(headings) if h and h.casefold() != title.casefold()]
    line_end = markdown.find("\n", at) if at >= 0 else -1
    body = markdown[:at] + (markdown[line_end:] if line_end >= 0 else "") if at >= 0 else markdown
    body = re.sub(r"^#{1,6}\s+.*$", "", body, flags=re.M)
    first = next((s for s in sentences(body) if len(s.split()) >= 5), "")
    parts = [f"{title or filename}."]
    if covers:
        parts.append("Covers: " + "; ".join(covers[:7]) + ".")
    if first:
        parts.append(first)
    return clip_words(" ".join(parts), max_words)
