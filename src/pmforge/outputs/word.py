"""Markdown to Word: the subset Forge's briefs use (headings, paragraphs, bullets, bold and italic runs,
pipe tables), parsed line by line into a python-docx document."""

from __future__ import annotations

import io
import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_PUA = 0xE000  # backslash-escaped ASCII punctuation is parked here while markup is parsed
_SEPARATOR_CELL = re.compile(r"\s*:?-{3,}:?\s*")


def _protect(text: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", lambda m: chr(_PUA + ord(m.group(1))), text)


def _restore(text: str) -> str:
    return re.sub("[\ue021-\ue07e]", lambda m: chr(ord(m.group(0)) - _PUA), text)


@lru_cache(maxsize=1)
def _emphasis() -> "MarkdownIt":
    # CommonMark's delimiter algorithm, linear in a line's length: an unmatched marker is not retried to the end
    # of the line, as a pattern search would (quadratic: minutes for a long line of stray asterisks).
    from markdown_it import MarkdownIt

    return MarkdownIt("zero").enable(["emphasis"])


def _runs(text: str, bold: bool = False, italic: bool = False) -> list[tuple[str, bool, bool]]:
    """`text` as (words, bold, italic) runs: `**bold**`, `*italic*` and `_italic_` (never inside snake_case)."""
    out: list[tuple[str, bool, bool]] = []
    strong = em = 0
    for token in _emphasis().parseInline(text)[0].children or []:
        if token.type in ("strong_open", "strong_close"):
            strong += 1 if token.type == "strong_open" else -1
        elif token.type in ("em_open", "em_close"):
            em += 1 if token.type == "em_open" else -1
        elif token.content:
            out.append((token.content, bold or strong > 0, italic or em > 0))
    return out


def _add_runs(paragraph, text: str, bold: bool = False) -> None:
    for chunk, is_bold, is_italic in _runs(text, bold=bold):
        run = paragraph.add_run(_restore(chunk))
        run.bold = is_bold or None
        run.italic = is_italic or None


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") else line
    return [cell.strip() for cell in line.split("|")]


def _add_table(doc, lines: list[str]) -> None:
    rows = [_cells(line) for line in lines]
    rows = [r for r in rows if not all(_SEPARATOR_CELL.fullmatch(c) for c in r)]
    if not rows:
        return
    width = max(len(r) for r in rows)
    table = doc.add_table(rows=0, cols=width)
    table.style = "Table Grid"
    for index, row in enumerate(rows):
        cells = table.add_row().cells
        for cell, text in zip(cells, row + [""] * (width - len(row))):
            _add_runs(cell.paragraphs[0], text, bold=index == 0)


def markdown_to_docx(markdown: str) -> bytes:
    """A Word file from the Markdown subset the renderers emit.

    Supported: `#`–`######` headings, paragraphs (consecutive lines join), `- ` bullets (two-space indents
    nest), `**bold**`, `*italic*` and `_italic_` spans, backslash escapes, and `|` tables whose first row
    is the header (a `---` separator row is skipped).
    """
    from docx import Document  # a turn imports this module; python-docx is needed only when a file is written

    doc = Document()
    lines = [_protect(line.rstrip()) for line in markdown.splitlines()]
    para: list[str] = []

    def flush() -> None:
        if para:
            _add_runs(doc.add_paragraph(), " ".join(para))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$", stripped)
        bullet = re.match(r"^( *)[-*+]\s+(.*)$", line)
        if not stripped:
            flush()
        elif heading:
            flush()
            level = len(heading.group(1))
            text = heading.group(2)
            _add_runs(doc.add_heading("", level=level), text)
            if level == 1 and not doc.core_properties.title:
                doc.core_properties.title = _restore("".join(chunk for chunk, _, _ in _runs(text)))
        elif bullet:
            flush()
            depth = min(len(bullet.group(1)) // 2, 2)
            style = "List Bullet" if depth == 0 else f"List Bullet {depth + 1}"
            _add_runs(doc.add_paragraph(style=style), bullet.group(2).strip())
        elif stripped.startswith("|"):
            flush()
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            _add_table(doc, block)
            continue
        else:
            para.append(stripped)
        i += 1
    flush()

    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
