"""A reply as plain text, for pasting where Markdown would show as asterisks (an email, a chat, a ticket).

Read with a real Markdown parser, so emphasis, links, lists, headings and tables come out as a person would
type them: words without markers, list items on their own lines, a table's cells separated by tabs (a
spreadsheet pastes them into columns).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt("commonmark").enable("table")


def _inline(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":  # its alt text: the words, never the address
            parts.append(child.content)
    return "".join(parts)


def plain_text(markdown: str) -> str:
    """`markdown` as plain text: paragraphs apart by a blank line, list items one per line."""
    blocks: list[tuple[str, str]] = []  # (text, "list" / "table" / "" — rows of one group sit on single lines)
    lists: list[list[int]] = []  # one entry per open list: [next number] for ordered lists, [] for bullets
    prefix = ""
    row: list[str] = []
    in_cell = False
    for token in _PARSER.parse(markdown):
        kind = token.type
        if kind == "bullet_list_open":
            lists.append([])
        elif kind == "ordered_list_open":
            lists.append([int(token.attrGet("start") or 1)])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            indent = "  " * (len(lists) - 1)
            if lists[-1]:
                prefix = f"{indent}{lists[-1][0]}. "
                lists[-1][0] += 1
            else:
                prefix = f"{indent}- "
        elif kind in ("th_open", "td_open"):
            in_cell = True
        elif kind in ("th_close", "td_close"):
            in_cell = False
        elif kind == "inline":
            text = _inline(token)
            if in_cell:
                row.append(text)
            else:
                blocks.append((prefix + text, "list" if lists else ""))
                prefix = ""
        elif kind == "tr_close":
            blocks.append(("\t".join(row), "table"))
            row = []
        elif kind in ("fence", "code_block", "html_block"):
            blocks.append((token.content.rstrip("\n"), ""))
    return _joined(blocks)


def _joined(blocks: list[tuple[str, str]]) -> str:
    """Blocks together: list items and table rows on single lines, and a list right under the line that
    introduces it ("Recorded:"); everything else a blank line apart."""
    out: list[str] = []
    previous = ("", "")
    for text, group in blocks:
        if out:
            tight = (group and group == previous[1]) or (group == "list" and previous[0].endswith(":"))
            out.append("\n" if tight else "\n\n")
        out.append(text)
        previous = (text, group)
    return "".join(out).strip()
