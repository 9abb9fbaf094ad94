"""Inline citations in Forge's replies that open the cited passage, with the sentences behind the claim marked.

A reply cites a document section as `[file › section]` (a `SourceRef.citation`). `linked_reply` turns each
citation that names one of the turn's sources into a small toggle that opens, in place, the sentences of
that section which back the sentence the citation sits in (`excerpt`), with a little context around them.
It is plain HTML and CSS (`CITATION_CSS`): no rerun, works by click and by keyboard (Tab, then Space).

When the reply quotes a passage (“…”, whole or trimmed with …), every sentence it quotes is marked there.
A document's tables show as tables: `passage_markdown` for a whole passage, rows in a citation's panel.
`literal` is how any other text from a document or a user (a file name, a section, a summary) reaches a
label or caption: as written, never read as Markdown.

The reply comes from a model that may have read hostile documents, and it is rendered with raw HTML allowed:
every `<` and `&` the reply or a document wrote reaches the page as text (code included), links may only go
to http, https or mailto, and no image is fetched.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from functools import lru_cache
from typing import Callable, Iterable, NamedTuple, Sequence

from pydantic import BaseModel

from pmforge.core.sentences import sentence_spans
from pmforge.index.keyword import tokenize

CONTEXT_SENTENCES = 2  # shown on each side of the marked sentences
MAX_MARKED = 3  # sentences marked for one claim
SHOWN_CHARS = 320  # a longer sentence (a table row, a paragraph without stops) is clipped in the panel
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
GONE = "This passage is no longer available: that version of the file has since been replaced or deleted."
NOT_MATCHED = "No sentence here repeats the claim's words; the section opens:"


class ExcerptSentence(BaseModel):
    text: str  # as shown: markdown markers and link targets removed, clipped
    marked: bool = False
    new_line: bool = False  # starts a line of its own in the document
    gap_before: bool = False  # sentences of the passage are left out between the one before and this one
    cells: list[str] | None = None  # a table row: its cells as shown
    header: bool = False  # a table's header row


class Excerpt(BaseModel):
    """The sentences of a passage that back a claim, with context around them."""

    sentences: list[ExcerptSentence]
    cut_before: bool  # the passage goes on before the first sentence shown
    cut_after: bool
    matched: bool  # False: no sentence shares a word with the claim, and this is the passage's opening
    score: float = 0.0  # how well the best sentence backs the claim (compares sections cited alike)
    quoted: int = 0  # sentences marked because the reply quotes them

    @property
    def marked(self) -> list[str]:
        return [s.text for s in self.sentences if s.marked]


# ---------------------------------------------------------------- which sentences back a claim

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = {"hundred": 100, "thousand": 1_000, "k": 1_000, "m": 1_000_000, "million": 1_000_000,
           "bn": 1_000_000_000, "billion": 1_000_000_000}
_SCALE = r"(?:\s?(?P<scale>k|m|bn)\b|\s(?P<word_scale>hundred|thousand|million|billion)\b)?"
_NUMBER_WORD = re.compile(
    rf"\b(?:(?P<tens>{'|'.join(_TENS)})(?:[- ](?P<tens_unit>{'|'.join(_UNITS[1:10])}))?"
    rf"|(?P<unit>{'|'.join(_UNITS)})|(?:a\s)?(?P<dozen>dozen))\b" + _SCALE, re.I)
_DIGITS = re.compile(r"(?<![\w.])(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?P<fraction>\.\d+)?" + _SCALE, re.I)


def _number_token(value: float) -> str:
    shown = f"{value:f}".rstrip("0").rstrip(".")
    return "num" + shown.replace(".", "p")


def _digits_value(m: re.Match) -> str:
    value = float(m.group("digits").replace(",", "") + (m.group("fraction") or ""))
    scale = (m.group("scale") or m.group("word_scale") or "").lower()
    return _number_token(value * _SCALES.get(scale, 1))


def _word_value(m: re.Match) -> str:
    if m.group("tens"):
        value = 20 + 10 * _TENS.index(m.group("tens").lower())
        value += _UNITS.index(m.group("tens_unit").lower()) if m.group("tens_unit") else 0
    elif m.group("unit"):
        value = _UNITS.index(m.group("unit").lower())
    else:
        value = 12  # a dozen
    scale = (m.group("scale") or m.group("word_scale") or "").lower()
    return _number_token(value * _SCALES.get(scale, 1))


def _numbers_as_words(text: str) -> str:
    """Every number as one token, however it is written: "twenty" and "20", "$180k" and "$180,000",
    "1.2M" and "1.2 million" all meet."""
    return _NUMBER_WORD.sub(lambda m: " " + _word_value(m) + " ", _DIGITS.sub(_digits_value, text))


def _terms(text: str) -> set[str]:
    """Stemmed content words (the keyword index's tokenizer), numbers normalised."""
    return set(tokenize(_numbers_as_words(text)))


_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_LINE_MARKERS = re.compile(r"^\s*(?:>\s*)*(?:#{1,6}\s+|[-*+•]\s+|\d{1,3}[.)]\s+)?")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)")  # a target may hold (…): javascript:f(1)
_EMPHASIS = re.compile(r"\*\*|__|`")


def _words(text: str) -> str:
    """Text without markdown's markers or link targets, on one line; what the document escaped (`\\*`) shows
    as the character itself."""
    return " ".join(_BACKSLASH_ESCAPE.sub(r"\1", _EMPHASIS.sub("", _LINK.sub(r"\1", text))).split())


def _shown(sentence: str, starts_line: bool) -> str:
    """A sentence as the panel shows it: the words, clipped."""
    text = _words(_LINE_MARKERS.sub("", sentence) if starts_line else sentence)
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS].rsplit(" ", 1)[0] + " …"
    return text


class _Read(NamedTuple):
    spans: tuple[tuple[int, int], ...]  # sentences worth showing; a table row is one
    terms: tuple[frozenset[str], ...]
    rows: dict[int, "_Row"]  # by start: the spans that are table rows
    row_quotes: tuple[tuple[int, str], ...]  # (span, the row as quoted: see _row_quotes)


def _content_spans(passage: str, tables: list["_Table"]) -> list[tuple[int, int]]:
    """The passage's sentences worth showing: not headings, table rules or lines of punctuation. A table row
    is one, whatever full stops its cells hold."""
    blocks = [(t.start, t.end) for t in tables]
    spans = [(r.start, r.end) for t in tables for r in t.rows if any(ch.isalnum() for ch in r.line)]
    for start, end in sentence_spans(passage):
        line_start = passage.rfind("\n", 0, start) + 1
        if _HEADING.match(passage[line_start:end]) or not any(ch.isalnum() for ch in passage[start:end]):
            continue
        if not any(a <= start < b for a, b in blocks):
            spans.append((start, end))
    return sorted(spans)


@lru_cache(maxsize=64)
def _read(passage: str) -> _Read:
    """A passage's sentences, their terms and its table rows, once per passage however often a reply cites it."""
    tables = _tables(passage)
    spans = tuple(_content_spans(passage, tables))
    return _Read(spans, tuple(frozenset(_terms(passage[s:e])) for s, e in spans),
                 {r.start: r for t in tables for r in t.rows}, _row_quotes(tables, spans))


def _best_sentences(terms: tuple[frozenset[str], ...], claim: set[str]) -> tuple[list[int], float]:
    """The sentence sharing the most of the claim's words (a word counts less the more sentences hold it;
    numbers count more), then nearby sentences that add enough of the rest."""
    frequency: dict[str, int] = {}
    for sentence in terms:
        for term in sentence & claim:
            frequency[term] = frequency.get(term, 0) + 1

    def weight(found: Iterable[str]) -> float:
        return sum((1.5 if term.startswith("num") else 1.0) / frequency[term] for term in found)

    scores = [weight(sentence & claim) for sentence in terms]
    if not scores or max(scores) <= 0:
        return [], 0.0
    best = scores.index(max(scores))
    marked, covered = [best], terms[best] & claim
    for i in sorted(range(len(terms)), key=lambda i: (-scores[i], i)):
        if len(marked) >= MAX_MARKED or scores[i] <= 0:
            break
        gain = weight((terms[i] & claim) - covered)
        if i not in marked and abs(i - best) <= CONTEXT_SENTENCES + 1 and gain >= max(scores[best] / 2, 1.5):
            marked.append(i)
            covered |= terms[i] & claim
    return sorted(marked), scores[best]


def excerpt(passage_text: str, claim: str, context: int = CONTEXT_SENTENCES, quotes: Sequence[str] = ()) -> Excerpt:
    """The sentences of `passage_text` that back `claim` (the reply's sentence that cites it), marked, with
    `context` sentences either side. When the reply quotes the passage (`quotes`, see `quotes_in`), the
    sentences it quotes, every one of them, are the ones marked. When no sentence shares a word with the claim,
    the passage's opening."""
    read = _read(passage_text)
    spans = read.spans
    best, score = _best_sentences(read.terms, _terms(claim))
    quoted = _quoted(passage_text, read, quotes)
    marked = quoted or best
    near = {j for i in marked for j in range(max(0, i - context), min(len(spans), i + context + 1))}
    shown_at = sorted(near) if marked else list(range(min(len(spans), 1 + context)))
    shown = []
    for k, i in enumerate(shown_at):
        start, end = spans[i]
        row = read.rows.get(start)
        shown.append(ExcerptSentence(
            text=_shown(passage_text[start:end], not passage_text[:start].rpartition("\n")[2].strip()),
            marked=i in marked,
            new_line=k > 0 and "\n" in passage_text[spans[i - 1][1]:start],
            gap_before=k > 0 and shown_at[k - 1] != i - 1,
            cells=[_shown(cell, False) for cell in row.cells] if row else None,
            header=bool(row and row.header)))
    return Excerpt(sentences=shown, cut_before=bool(shown_at) and shown_at[0] > 0,
                   cut_after=bool(shown_at) and shown_at[-1] < len(spans) - 1, matched=bool(marked),
                   score=score, quoted=len(quoted))


# ---------------------------------------------------------------- a document's tables

class _Row(NamedTuple):
    start: int  # the row's line in the text
    end: int
    line: str
    cells: list[str]  # as written (markdown inside)
    header: bool


class _Table(NamedTuple):
    start: int
    end: int
    rows: list[_Row]  # without the delimiter row, nor a header row with nothing in it (Word's tables)


_TEXT_LINE = re.compile(r"^.*$", re.M)
_DELIMITER_ROW = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_CELL_BORDER = re.compile(r"(?<!\\)\|")


def _is_delimiter(line: str) -> bool:
    return "|" in line and _DELIMITER_ROW.match(line) is not None


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip() for cell in _CELL_BORDER.split(inner)]


def _tables(text: str) -> list[_Table]:
    """The Markdown tables in `text` (GitHub's: outer pipes optional), not inside fenced code. Rows that
    start with a pipe count as a table without their header and delimiter rows too: a passage or a clipped
    summary may begin or end in the middle of one."""
    fences = [(start, end) for start, end, _ in _fences(text)]
    lines = [(m.start(), m.end()) for m in _TEXT_LINE.finditer(text)
             if not any(a <= m.start() < b for a, b in fences)]
    tables, i = [], 0
    while i < len(lines):
        line = text[slice(*lines[i])]
        piped = line.lstrip().startswith("|")
        next_line = text[slice(*lines[i + 1])] if i + 1 < len(lines) and lines[i + 1][0] == lines[i][1] + 1 else ""
        if not (piped or ("|" in line and _is_delimiter(next_line))):
            i += 1
            continue
        block, delimited = [lines[i]], False
        while i + 1 < len(lines) and lines[i + 1][0] == block[-1][1] + 1:
            following = text[slice(*lines[i + 1])]
            delimited = delimited or _is_delimiter(following)
            if not (following.lstrip().startswith("|") or ("|" in following and (delimited or not piped))):
                break
            block.append(lines[i + 1])
            i += 1
        i += 1
        table = _table(text, block)
        if table:
            tables.append(table)
    return tables


def _table(text: str, block: list[tuple[int, int]]) -> _Table | None:
    texts = [text[start:end] for start, end in block]
    delimiters = [k for k, line in enumerate(texts) if _is_delimiter(line)]
    closed = any(len(line.strip()) > 1 and line.strip()[0] == "|" == line.strip()[-1] for line in texts)
    if not delimiters and not closed:
        return None  # a line that merely starts with a pipe
    head = delimiters[0] - 1 if delimiters else -1
    rows = [_Row(start, end, line, _cells(line), k == head) for k, ((start, end), line) in enumerate(zip(block, texts))
            if k not in delimiters and not (k == head and not line.replace("|", "").strip())]
    return _Table(block[0][0], block[-1][1], rows)


def _table_html(table: _Table) -> str:
    """A table as one line of Forge's own HTML: every cell's text inert, a header row only when it has one."""
    width = max((len(row.cells) for row in table.rows), default=0)

    def row_html(row: _Row, tag: str) -> str:
        cells = row.cells + [""] * (width - len(row.cells))
        return "<tr>" + "".join(f"<{tag}>{_inert(_words(cell))}</{tag}>" for cell in cells) + "</tr>"

    head = "".join(row_html(row, "th") for row in table.rows if row.header)
    body = "".join(row_html(row, "td") for row in table.rows if not row.header)
    return ("<table>" + (f"<thead>{head}</thead>" if head else "") + (f"<tbody>{body}</tbody>" if body else "")
            + "</table>")


# ---------------------------------------------------------------- what the reply quotes

_QUOTE = re.compile(r"“([^”]{1,2000}?)”|\"([^\"\n]{1,2000}?)\"")
_TRIMMED = re.compile(r"\[?(?:…|\.{3,})\]?")
_UNMARKED = frozenset(" \t\n\r\f\v\u00a0*_`>#|~\\")  # spacing and markdown's markers: compared without them
_SAME = {**dict.fromkeys("“”„‟″«»‘’‚‛′'", '"'), **dict.fromkeys("–—‒−", "-")}  # quotes nested either way
MIN_QUOTED_CHARS = 12  # a shorter piece of a quote ("not now") could be found anywhere


def quotes_in(reply: str) -> list[str]:
    """The pieces of text `reply` quotes (“…” or "…"), a quote trimmed with … giving one piece per part."""
    found = [m.group(1) or m.group(2) or "" for m in _QUOTE.finditer(reply)]
    return [piece for quote in found for piece in _TRIMMED.split(quote)
            if len(piece.split()) >= 2 and len(_compared(piece)[0]) >= MIN_QUOTED_CHARS]


def _compare(text: str) -> tuple[str, tuple[int, ...]]:
    """`text` as quotes are compared with it: link targets, markdown's markers and spacing left out, quote
    marks and dashes made plain, lower case; with the offset in `text` of each character kept."""
    dropped: set[int] = set()
    for m in _LINK.finditer(text):
        dropped.update(range(m.start(), m.start(1)))
        dropped.update(range(m.end(1), m.end()))
    chars, at = [], []
    for i, ch in enumerate(text):
        if ch in _UNMARKED or i in dropped:
            continue
        for plain in _SAME.get(ch, ch).lower():
            chars.append(plain)
            at.append(i)
    return "".join(chars), tuple(at)


_compared = lru_cache(maxsize=256)(_compare)


def _row_quotes(tables: list[_Table], spans: Sequence[tuple[int, int]]) -> tuple[tuple[int, str], ...]:
    """Each table row as Forge's offline answers quote one ("Store: Ohio; Shrink: 9.1"), compared form: the
    column names from the header row, or from the first row when the header is empty (Word's tables)."""
    index = {start: i for i, (start, _) in enumerate(spans)}
    found = []
    for table in tables:
        names = table.rows[0].cells if table.rows else []
        for row in table.rows[1:]:
            pairs = [f"{names[i] if i < len(names) and names[i] else f'column {i + 1}'}: {cell}"
                     for i, cell in enumerate(row.cells) if cell]
            if pairs and row.start in index:
                found.append((index[row.start], _compare("; ".join(pairs))[0]))
    return tuple(found)


def _quoted(passage: str, read: _Read, quotes: Sequence[str]) -> list[int]:
    """The indices of the passage's sentences (`read.spans`) that any of `quotes` comes from."""
    if not quotes:
        return []
    text, at = _compared(passage)
    found: set[int] = set()
    for quote in quotes:
        piece = _compared(quote)[0]
        k = text.find(piece)
        while k >= 0:
            start, end = at[k], at[k + len(piece) - 1] + 1
            found.update(i for i, (s, e) in enumerate(read.spans) if s < end and start < e)
            k = text.find(piece, k + 1)
        found.update(i for i, row in read.row_quotes if piece in row)
    return sorted(found)


# ---------------------------------------------------------------- safe text for raw HTML

# Every ASCII punctuation mark as a numeric reference: inside Forge's own HTML no markdown (emphasis, links,
# math, Streamlit's :colour[] directives) or tag can start from a document's or a reply's text.
_REFERENCES = {ch: f"&#{ord(ch)};" for ch in string.punctuation}


def _inert(text: str, keep_lines: bool = False) -> str:
    if not keep_lines:
        text = " ".join(text.split())
    return "".join(_REFERENCES.get(ch, "&#10;" if ch == "\n" else ch) for ch in text)


_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_INLINE_DESTINATION = re.compile(r"(\]\(\s*)([^\s)]+)")
_REFERENCE_DEFINITION = re.compile(
    r"(^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*\[(?:[^\]\\]|\\.){1,999}\]:[ \t]*\n?[ \t>]*)(\S+)", re.M)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_URL_IGNORED = "".join(map(chr, range(33)))  # a browser skips these before a URL's scheme


def _safe_destination(m: re.Match) -> str:
    """A link to anything but http, https or mailto (javascript:, data:, …) becomes a link to nowhere."""
    destination = _BACKSLASH_ESCAPE.sub(r"\1", m.group(2)).lstrip(_URL_IGNORED).replace("\t", "")
    scheme = _SCHEME.match(destination)
    if scheme and scheme.group(1).lower() not in SAFE_SCHEMES:
        return m.group(1) + "#" + m.group(2)
    return m.group(0)


def _prose(text: str) -> str:
    """Reply text outside code: markdown keeps working (quotes, lists, emphasis, links), tags and entities
    show as typed, `$` is a dollar (not maths). An autolink to a web or mail address (`<https://…>`) stays a
    link: its brackets go, and the bare address is linked as any other would be."""
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("$", "&#36;")


_AUTOLINK = re.compile(r"<((?:https?://|mailto:)[^\s<>]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>", re.I)


def _safe_links(markdown: str) -> str:
    """The whole reply, once assembled (Forge's own HTML holds no brackets, so a link that spans a code span
    or a citation is seen whole): images are shown as their markdown, never fetched; links go only to http,
    https or mailto."""
    markdown = markdown.replace("![", "!\\[")
    markdown = _INLINE_DESTINATION.sub(_safe_destination, markdown)
    return _REFERENCE_DEFINITION.sub(_safe_destination, markdown)


def _before_html(text: str) -> str:
    """Prose that Forge's own HTML follows: a trailing backslash would escape the tag's `<`."""
    trailing = len(text) - len(text.rstrip("\\"))
    return text + "\\" if trailing % 2 else text


# ---------------------------------------------------------------- code in the reply

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})([^\n]*)$", re.M)
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _fence_end(reply: str, opener: re.Match) -> tuple[int, int]:
    """Where a fenced block's content ends and where its closing line ends (the reply's end if unclosed)."""
    fence = opener.group(2)
    closer = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
    found = closer.search(reply, opener.end() + 1)
    return (found.start(), found.end()) if found else (len(reply), len(reply))


def _fence_html(opener: re.Match, content: str) -> str:
    """A fenced block as one line of HTML (`<pre>` on one line is a block of its own wherever it sits)."""
    indent = len(opener.group(1))
    lines = [line[min(indent, len(line) - len(line.lstrip(" "))):] for line in content.split("\n")]
    language = re.sub(r"[^A-Za-z0-9_+-]", "", (opener.group(3).split() or [""])[0])
    attribute = f' class="language-{language}"' if language else ""
    return (f"{opener.group(1)}<pre><code{attribute}>" + _inert("\n".join(lines).rstrip("\n"), keep_lines=True)
            + "</code></pre>")


def _code_span_html(content: str) -> str:
    content = content.replace("\n", " ")
    if len(content) > 2 and content[0] == " " and content[-1] == " " and content.strip():
        content = content[1:-1]
    return "<code>" + _inert(content, keep_lines=True) + "</code>"


def _fences(text: str) -> list[tuple[int, int, re.Match]]:
    """(start, end, opening line) of each fenced block; an unclosed one runs to the end."""
    found: list[tuple[int, int, re.Match]] = []
    for opener in _FENCE.finditer(text):
        if (found and opener.start() < found[-1][1]) or (opener.group(2)[0] == "`" and "`" in opener.group(3)):
            continue
        found.append((opener.start(), _fence_end(text, opener)[1], opener))
    return found


def _segments(reply: str) -> list[tuple[str, int, int, str]]:
    """The reply cut into ("prose", start, end, text) and ("html", start, end, html) pieces: fenced blocks
    and code spans become HTML whose every character is escaped, so a misjudged boundary costs looks, never
    safety."""
    pieces: list[tuple[str, int, int, str]] = []
    pos = 0
    for start, block_end, opener in _fences(reply):
        content_end = _fence_end(reply, opener)[0]
        pieces += _code_spans(reply, pos, start)
        content = reply[opener.end() + 1:content_end] if content_end > opener.end() else ""
        pieces.append(("html", start, block_end, _fence_html(opener, content)))
        pos = block_end
    return pieces + _code_spans(reply, pos, len(reply))


def _code_spans(reply: str, start: int, end: int) -> list[tuple[str, int, int, str]]:
    """Code spans as CommonMark finds them: a run of n backticks up to the next run of exactly n (not past a
    blank line); a run preceded by a backslash starts one backtick later."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(reply, start, end)]
    by_length: dict[int, list[int]] = {}
    for index, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(index)
    blanks = [m.start() for m in _BLANK_LINE.finditer(reply, start, end)]
    pieces, pos = [], start
    for index, (a, b) in enumerate(runs):
        if a < pos:
            continue
        escaped = a
        while escaped > start and reply[escaped - 1] == "\\":
            escaped -= 1
        opening = a + (a - escaped) % 2  # "\`": the first backtick is text
        later = by_length.get(b - opening, [])
        following = later[bisect_right(later, index):][:1]
        if b == opening or not following:
            continue
        close_start, close_end = runs[following[0]]
        if bisect_right(blanks, close_start) != bisect_right(blanks, b - 1):
            continue  # a code span never crosses a blank line
        pieces.append(("prose", pos, opening, reply[pos:opening]))
        pieces.append(("html", opening, close_end, _code_span_html(reply[b:close_start])))
        pos = close_end
    pieces.append(("prose", pos, end, reply[pos:end]))
    return pieces


# ---------------------------------------------------------------- the reply with its citations linked

def _citation_pattern(citation: str) -> str:
    """A citation as the reply may write it: the separator as › or >, spaces as any whitespace."""
    return re.escape(citation).replace("›", "(?:›|>)").replace("\\ ", r"\s+")


def _claims(reply: str, cites: list[tuple[int, int]]) -> list[str]:
    """The words each citation backs: the rest of its line when a colon follows it ("[plan.md › Scope]: “…”
    “…”"); else its clause of the sentence it sits in (from the citation before it in that sentence up to
    the next one), the whole sentence when the clause is too short to say anything, or the sentence just
    before when the citation stands after it."""
    masked = list(reply)
    for s, e in cites:
        masked[s:e] = " " * (e - s)
    text = "".join(masked)
    spans = sentence_spans(text)
    return [_claim(text, spans, cites, index) for index in range(len(cites))]


def _claim(text: str, spans: list[tuple[int, int]], cites: list[tuple[int, int]], index: int) -> str:
    start, end = cites[index]
    if re.match(r"[ \t]*:", text[end:end + 80]):
        line_end = text.find("\n", end)
        return text[text.rfind("\n", 0, start) + 1:line_end if line_end >= 0 else len(text)]
    sentence = next(((s, e) for s, e in spans if s <= start < e), None)
    if sentence:
        inside = [c for c in cites if sentence[0] <= c[0] < sentence[1]]
        position = inside.index(cites[index])
        clause = text[inside[position - 1][1] if position else sentence[0]:
                      inside[position + 1][0] if position + 1 < len(inside) else sentence[1]]
        return clause if len(_terms(clause)) >= 2 else text[sentence[0]:sentence[1]]
    before = [(s, e) for s, e in spans if e <= start and "\n" not in text[e:start]]
    after = [(s, e) for s, e in spans if s >= end and "\n" not in text[end:s]]
    chosen = before[-1] if before else after[0] if after else None
    return text[chosen[0]:chosen[1]] if chosen else ""


_TRAILING_PUNCTUATION = re.compile(r"[.,;:!?)]{0,3}")


def _segment_end(segments: list[tuple[str, int, int, str]], position: int) -> int:
    return next(end for _, start, end, _ in segments if start <= position < end)


def label(citation: str) -> str:
    """A citation as one plain line: 'plan.md › Scope', without its brackets."""
    return citation.removeprefix("[").removesuffix("]")


def _rows_html(rows: list[ExcerptSentence]) -> str:
    """Table rows of an excerpt: inline elements laid out as a table (a <table> would end the reply's
    paragraph the citation sits in)."""
    width = max(len(row.cells or []) for row in rows)
    out = []
    for row in rows:
        cells = (row.cells or []) + [""] * (width - len(row.cells or []))
        role = "columnheader" if row.header else "cell"
        out.append(f'<span class="forge-cite-row{" forge-cite-head" if row.header else ""}" role="row">' + "".join(
            f'<span class="forge-cite-cell" role="{role}">'
            + (f"<mark>{_inert(cell)}</mark>" if row.marked and cell else _inert(cell)) + "</span>"
            for cell in cells) + "</span>")
    return '<span class="forge-cite-table" role="table">' + "".join(out) + "</span>"


def _excerpt_html(found: Excerpt) -> str:
    runs: list[list[ExcerptSentence]] = []  # a sentence, or table rows shown one after the other
    for sentence in found.sentences:
        if runs and sentence.cells is not None and runs[-1][0].cells is not None and not sentence.gap_before:
            runs[-1].append(sentence)
        else:
            runs.append([sentence])
    parts = []
    for i, run in enumerate(runs):
        first, table = run[0], run[0].cells is not None
        # A table lays out as a block of its own: no space or break beside it.
        gap = "" if not i or table or runs[i - 1][0].cells is not None else "<br>" if first.new_line else " "
        if first.gap_before:
            gap += "…" if table else "… "
        text = _inert(first.text)
        parts.append(gap + (_rows_html(run) if table else f"<mark>{text}</mark>" if first.marked else text))
    body = ("… " if found.cut_before else "") + "".join(parts) + (" …" if found.cut_after else "")
    note = "" if found.matched else f'<span class="forge-cite-note">{_inert(NOT_MATCHED)}</span>'
    return note + f'<span class="forge-cite-text">{body}</span>'


def _citation_html(label: str, found: Excerpt | None, trailing: str = "") -> str:
    """One citation: a toggle (a checkbox inside the label, so click and Space both work) and its panel.
    All on one line and inline-only, so it sits inside the reply's paragraph or list item. `trailing` is the
    punctuation right after the citation, kept before the panel so an open panel does not strand it."""
    name = _inert(label)
    body = _excerpt_html(found) if found else f'<span class="forge-cite-gone">{_inert(GONE)}</span>'
    return ('<span class="forge-cite">'
            '<label class="forge-cite-chip" title="Show the cited passage">'
            f'<input type="checkbox" class="forge-cite-toggle" aria-label="Show the cited passage: {name}">'
            f'<span class="forge-cite-label">{name}</span></label>{_inert(trailing)}'
            f'<span class="forge-cite-panel"><span class="forge-cite-title">{name}</span>{body}</span>'
            '</span>')


def _which(m: re.Match[str]) -> int:
    """The index of the citation a match of `(?P<c0>…)|(?P<c1>…)|…` found."""
    name = m.lastgroup
    if name is None:  # every alternative is a named group, so one of them matched
        raise ValueError(f"no citation group in {m.group()!r}")
    return int(name[1:])


def linked_reply(reply_markdown: str, sources: list, passage_of: Callable[[object], str | None]) -> str:
    """`reply_markdown` as markdown for `st.markdown(..., unsafe_allow_html=True)`: every citation naming one
    of `sources` (`SourceRef`s) opens its passage (`passage_of(source)`, None when that file version is gone)
    with the sentences behind the claim marked (every sentence the reply quotes from it). Other bracket text
    stays as written. Nothing the reply or a passage contains can add HTML: see the module's docstring."""
    by_citation: dict[str, list] = {}
    for source in sources:
        by_citation.setdefault(source.citation, []).append(source)
    if not by_citation:
        return untrusted_markdown(reply_markdown)

    segments = _segments(reply_markdown)
    citations = sorted(by_citation, key=len, reverse=True)
    pattern = re.compile("|".join(f"(?P<c{i}>{_citation_pattern(c)})" for i, c in enumerate(citations)))
    found = [(m.start(), m.end(), citations[_which(m)])
             for kind, start, end, _ in segments if kind == "prose"
             for m in pattern.finditer(reply_markdown, start, end)]
    cites = [(s, e) for s, e, _ in found]
    quoted = quotes_in(reply_markdown)
    passages: dict[tuple, str | None] = {}

    def passage(source) -> str | None:
        key = (source.file_id, source.filename, source.start, source.end)
        if key not in passages:
            passages[key] = passage_of(source)
        return passages[key]

    linked: dict[int, str] = {}
    ends: dict[int, int] = {}
    for (start, end, citation), claim in zip(found, _claims(reply_markdown, cites)):
        punctuation = _TRAILING_PUNCTUATION.match(reply_markdown, end, _segment_end(segments, start))
        trailing = punctuation.group() if punctuation else ""  # it matches the empty string: never None
        ends[start] = end + len(trailing)
        texts = [(s, passage(s)) for s in by_citation[citation]]
        candidates = [(s, excerpt(text, claim, quotes=quoted)) for s, text in texts if text is not None]
        if candidates:
            source, best = max(candidates, key=lambda c: (c[1].quoted, c[1].matched, c[1].score))
            linked[start] = _citation_html(label(source.citation), best, trailing)
        else:
            linked[start] = _citation_html(label(citation), None, trailing)

    out = []
    for kind, start, end, text in segments:
        if kind == "html":
            out.append(text)
            continue
        pos = start
        for cite in sorted(s for s in ends if start <= s < end):
            out.append(_before_html(_prose(reply_markdown[pos:cite])) + linked[cite])
            pos = ends[cite]
        out.append(_prose(reply_markdown[pos:end]))
    return _safe_links("".join(out))


def _markdown(text: str) -> str:
    """Text whose markdown should work, made safe for raw HTML (links still to be made safe)."""
    return "".join(_prose(piece) if kind == "prose" else piece for kind, _, _, piece in _segments(text))


def _with_tables(text: str, rest: Callable[[str], str]) -> str:
    """`text` with its tables as Forge's own HTML blocks and the text between them through `rest`."""
    out, pos = [], 0
    for table in _tables(text):
        out += [rest(text[pos:table.start]), "\n\n" + _table_html(table) + "\n\n"]
        pos = table.end
    out.append(rest(text[pos:]))
    return "".join(out)


def passage_markdown(passage: str) -> str:
    """A document's passage for `st.markdown(..., unsafe_allow_html=True)`: its markdown works (headings,
    lists, emphasis, links to http, https or mailto), its tables are tables, and nothing it holds adds HTML
    or fetches an image (see the module's docstring)."""
    return _safe_links(_with_tables(passage, _markdown))


# Anything that may start markdown, HTML, an entity, maths or a Streamlit directive or icon (`:material/…:`).
# A bare http address or e-mail still becomes a link: GitHub's autolinks are found in the text after escapes.
_MARKUP = re.compile(r"[\\`*_\[\]<>!|~:$&#/]")
_LINE_START = re.compile(r"^(?:([-+=])|(\d+)([.)]))")  # a list item or a rule


def untrusted_markdown(text: str) -> str:
    """Markdown written by someone Forge does not vouch for (the PM, a model, a document) for
    `st.markdown(..., unsafe_allow_html=True)`: its formatting stays; no HTML, image or unsafe link comes of it."""
    return _safe_links(_markdown(text))


def literal(text: str) -> str:
    """Text from a document or a user (a file name, a section, a summary) as markdown that shows it exactly
    as written, on one line: for a label, a caption or a bold name. No emphasis, link, image, HTML tag or
    entity, maths, Streamlit directive (`:red[…]`, `:material/…:`) or emoji shortcode starts from it.
    Safe with unsafe_allow_html=True too."""
    escaped = _MARKUP.sub(lambda m: "\\" + m.group(), " ".join(text.split()))
    return _LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), escaped)


def literal_block(text: str) -> str:
    """`literal`, except that the text's tables show as tables: for a caption with unsafe_allow_html=True."""
    return _with_tables(text, literal)


# ---------------------------------------------------------------- style

# Colours come from the text colour (currentColor), so the chip and panel suit light and dark themes alike.
CITATION_CSS = """
.forge-cite-chip {
  display: inline; cursor: pointer; white-space: normal;
  -webkit-box-decoration-break: clone; box-decoration-break: clone;  /* a chip that wraps keeps both ends */
  font-size: 0.8em; line-height: 1.2; padding: 0.05em 0.45em; border-radius: 0.5em;
  border: 1px solid color-mix(in srgb, currentColor 25%, transparent);
  background: color-mix(in srgb, currentColor 6%, transparent);
}
.forge-cite-chip:hover { background: color-mix(in srgb, currentColor 12%, transparent); }
.forge-cite-toggle { position: absolute; opacity: 0; width: 1px; height: 1px; margin: 0; pointer-events: none; }
.forge-cite-toggle:focus-visible + .forge-cite-label { outline: 2px solid currentColor; outline-offset: 2px;
  border-radius: 0.4em; }
.forge-cite:has(.forge-cite-toggle:checked) .forge-cite-chip {
  background: color-mix(in srgb, currentColor 16%, transparent);
}
.forge-cite-panel { display: none; }
.forge-cite:has(.forge-cite-toggle:checked) > .forge-cite-panel {
  display: block; margin: 0.4em 0 0.6em; padding: 0.55em 0.8em; font-size: 0.9em; line-height: 1.55;
  border-left: 3px solid color-mix(in srgb, currentColor 40%, transparent); border-radius: 0.3em;
  background: color-mix(in srgb, currentColor 5%, transparent);
}
.forge-cite-title { display: block; font-size: 0.85em; font-weight: 600; opacity: 0.75; margin-bottom: 0.25em; }
.forge-cite-note, .forge-cite-gone { display: block; font-style: italic; opacity: 0.8; }
.forge-cite-text { display: block; }
.forge-cite-text mark {
  color: inherit; padding: 0 0.1em; border-radius: 0.2em;
  background: color-mix(in srgb, #f4c430 45%, transparent);
}
.forge-cite-table { display: table; border-collapse: collapse; margin: 0.3em 0; }
.forge-cite-row { display: table-row; }
.forge-cite-cell { display: table-cell; padding: 0.15em 0.6em; vertical-align: top;
  border: 1px solid color-mix(in srgb, currentColor 20%, transparent); }
.forge-cite-head .forge-cite-cell { font-weight: 600; }
"""
