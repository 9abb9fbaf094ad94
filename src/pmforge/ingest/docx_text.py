"""A plain reader for Word documents MarkItDown refuses or cannot finish: paragraphs, headings (from
paragraph styles), lists, and tables as rows.

It streams word/document.xml through the standard library's expat parser, which never fetches an
external entity; internal entities are not expanded either (a document that declares entities gets
its plain text and nothing the declarations point to). The text it collects is capped, so a huge
document stops early instead of filling memory.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from typing import IO, BinaryIO
from xml.parsers import expat

DOCUMENT = "word/document.xml"
STYLES = "word/styles.xml"
_CHUNK = 1 << 16
_HEADING_NAME = re.compile(r"^\s*heading\s*([1-9])\s*$", re.I)
_HEADING_ID = re.compile(r"^heading\s*([1-9])$", re.I)
_LIST_NAME = re.compile(r"^\s*list (?:bullet|number|paragraph|continue)\s*([2-9])?\s*$", re.I)


class TooMuchText(Exception):
    """The document holds more text than the cap; reading stopped there."""


@dataclass
class _Paragraph:
    parts: list[str] = field(default_factory=list)
    style: str = ""
    list_level: int | None = None
    outline: int | None = None


def read_docx_text(data: BinaryIO, max_chars: int) -> str:
    """Markdown for the body of the Word document in `data` (a seekable binary stream)."""
    with zipfile.ZipFile(data) as zf:
        reader = _BodyReader(*_styles(zf), max_chars)
        with zf.open(DOCUMENT) as fh:
            _parse(fh, reader.start, reader.end, reader.text)
    return "\n\n".join(reader.blocks) + ("\n" if reader.blocks else "")


def _parser(start, end, text) -> expat.XMLParserType:
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.DefaultHandler = _ignore  # a default handler keeps internal entities unexpanded
    parser.StartElementHandler, parser.EndElementHandler = start, end
    if text is not None:
        parser.CharacterDataHandler = text
    parser.buffer_text = True
    return parser


def _parse(fh: IO[bytes], start, end, text) -> None:
    parser = _parser(start, end, text)
    while chunk := fh.read(_CHUNK):
        parser.Parse(chunk, False)
    parser.Parse(b"", True)


def _ignore(_data: str) -> None:
    pass


def _local(name: str) -> str:
    return name.rsplit(" ", 1)[-1]


def _attr(attrs: dict, local: str) -> str | None:
    for key, value in attrs.items():
        if _local(key) == local:
            return value
    return None


def _styles(zf: zipfile.ZipFile) -> tuple[dict[str, int], dict[str, int]]:
    """Style id -> heading level (from names like "heading 2" or "Title", and outline levels), and
    style id -> list level (from names like "List Bullet 2")."""
    levels: dict[str, int] = {}
    lists: dict[str, int] = {}
    if STYLES not in zf.namelist():
        return levels, lists
    current: list[str] = []

    def start(name: str, attrs: dict) -> None:
        local = _local(name)
        if local == "style":
            current[:] = [_attr(attrs, "styleId") or ""]
        elif current and current[0] and local == "name":
            value = _attr(attrs, "val") or ""
            m = _HEADING_NAME.match(value)
            if m:
                levels[current[0]] = int(m.group(1))
            elif value.strip().lower() == "title":
                levels[current[0]] = 1
            elif m := _LIST_NAME.match(value):
                lists[current[0]] = int(m.group(1) or 1) - 1
        elif current and current[0] and local == "outlineLvl" and current[0] not in levels:
            level = _int(_attr(attrs, "val"))
            if level is not None and level < 9:
                levels[current[0]] = level + 1

    def end(name: str) -> None:
        if _local(name) == "style":
            current[:] = []

    with zf.open(STYLES) as fh:
        _parse(fh, start, end, None)
    return levels, lists


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class _BodyReader:
    """expat callbacks that turn the body's paragraphs and tables into Markdown blocks."""

    def __init__(self, heading_levels: dict[str, int], list_levels: dict[str, int], max_chars: int):
        self.levels = heading_levels
        self.lists = list_levels
        self.max_chars = max_chars
        self.size = 0
        self.blocks: list[str] = []
        self.paragraphs: list[_Paragraph] = []  # a text box holds paragraphs inside a paragraph
        self.tables = 0  # nesting depth; only the outermost table makes rows
        self.rows: list[list[list[str]]] = []  # outermost table: rows of cells of paragraph texts
        self.in_text = False
        self.list_open = False  # the last block is a list the next item joins
        self.skipped = 0  # depth inside a markup-compatibility Fallback (a copy of what Choice holds)

    def start(self, name: str, attrs: dict) -> None:
        local = _local(name)
        if self.skipped or local == "Fallback":
            self.skipped += 1
            return
        para = self.paragraphs[-1] if self.paragraphs else None
        if local == "p":
            self.paragraphs.append(_Paragraph())
        elif local == "t":
            self.in_text = True
        elif para is not None and local == "tab":
            self._add(para, "\t")
        elif para is not None and local in ("br", "cr"):
            self._add(para, "\n")
        elif para is not None and local == "pStyle":
            para.style = _attr(attrs, "val") or ""
        elif para is not None and local == "numPr" and para.list_level is None:
            para.list_level = 0
        elif para is not None and local == "ilvl":
            para.list_level = _int(_attr(attrs, "val")) or 0
        elif para is not None and local == "outlineLvl":
            para.outline = _int(_attr(attrs, "val"))
        elif local == "tbl":
            self.tables += 1
            if self.tables == 1:
                self.rows = []
        elif local == "tr" and self.tables == 1:
            self.rows.append([])
        elif local == "tc" and self.tables == 1 and self.rows:
            self.rows[-1].append([])

    def end(self, name: str) -> None:
        if self.skipped:
            self.skipped -= 1
            return
        local = _local(name)
        if local == "t":
            self.in_text = False
        elif local == "p" and self.paragraphs:
            para = self.paragraphs.pop()
            text = "".join(para.parts).strip()
            if not text:
                return
            if self.tables and self.rows and self.rows[-1]:
                self.rows[-1][-1].append(text)
            else:
                self._emit(*self._block(para, text))
        elif local == "tbl" and self.tables:
            self.tables -= 1
            if self.tables == 0:
                table = _table(self.rows)
                if table:
                    self._emit(table, False)
                self.rows = []

    def text(self, data: str) -> None:
        if self.in_text and self.paragraphs and not self.skipped:
            self._add(self.paragraphs[-1], data)

    def _add(self, para: _Paragraph, text: str) -> None:
        self.size += len(text)
        if self.size > self.max_chars:
            raise TooMuchText
        para.parts.append(text)

    def _emit(self, block: str, is_list_item: bool) -> None:
        if is_list_item and self.list_open:
            self.blocks[-1] += "\n" + block  # one list, not a paragraph per item
        else:
            self.blocks.append(block)
        self.list_open = is_list_item

    def _block(self, para: _Paragraph, text: str) -> tuple[str, bool]:
        level = self.levels.get(para.style)
        if level is None:
            m = _HEADING_ID.match(para.style)
            level = int(m.group(1)) if m else None
        if level is None and para.outline is not None and para.outline < 9:
            level = para.outline + 1
        if level is not None:
            return "#" * min(level, 6) + " " + " ".join(text.split()), False
        list_level = para.list_level if para.list_level is not None else self.lists.get(para.style)
        if list_level is not None:
            return "  " * min(list_level, 8) + "- " + " ".join(text.split()), True
        return text, False


def _table(rows: list[list[list[str]]]) -> str:
    rows = [r for r in rows if r]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [_cell(" ".join(parts)) for parts in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
