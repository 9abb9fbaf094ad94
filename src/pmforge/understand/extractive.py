"""Extractive summaries: the offline summarizer, and the fallback when Haiku is unreachable."""

from __future__ import annotations

import re

from pmforge.understand.text import clip_words

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MD_NOISE = re.compile(r"[*_`>#|]+")


def sentences(text: str) -> list[str]:
    """Sentences of prose, with headings and blank lines as hard boundaries (a heading is not a sentence)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=#)", text):
        block = re.sub(r"^#{1,6}\s+.*$", "", block, flags=re.M)
        block = re.sub(r"^\s*\|.*$", "", block, flags=re.M)  # table rows are not sentences
        flat = " ".join(_MD_NOISE.sub(" ", block).split())
        out += [s.strip() for s in _SENTENCE.split(flat) if len(s.strip()) > 2]
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


def file_summary(filename: str, markdown: str, max_words: int = 70) -> str:
    """Title, main headings and the opening sentence: a faithful paragraph with nothing invented."""
    headings = [m.group(2).strip() for m in re.finditer(r"^(#{1,3})\s+(.+?)\s*#*$", markdown, re.M)]
    title = headings[0] if headings else filename
    body = re.sub(r"^#{1,6}\s+.*$", "", markdown, flags=re.M)
    first = next((s for s in sentences(body) if len(s.split()) >= 5), "")
    parts = [f"{_MD_NOISE.sub('', title).strip()}."]
    if len(headings) > 1:
        parts.append("Covers: " + "; ".join(_MD_NOISE.sub("", h).strip() for h in headings[1:8]) + ".")
    if first:
        parts.append(first)
    return clip_words(" ".join(parts), max_words)
