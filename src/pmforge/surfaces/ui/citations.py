"""Inline citations in Forge's replies that open the cited passage, with the sentences behind the claim marked.

A reply cites a document section as `[file › section]` (a `SourceRef.citation`). `linked_reply` turns each
citation that names one of the turn's sources into a small toggle that opens, in place, the sentences of
that section which back the sentence the citation sits in (`excerpt`), with a little context around them.
It is plain HTML and CSS (`CITATION_CSS`): no rerun, works by click and by keyboard (Tab, then Space).

The reply comes from a model that may have read hostile documents, and it is rendered with raw HTML allowed:
every `<` and `&` the reply or a document wrote reaches the page as text (code included), links may only go
to http, https or mailto, and no image is fetched.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from functools import lru_cache
from typing import Callable, Iterable

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


class Excerpt(BaseModel):
    """The sentences of a passage that back a claim, with context around them."""

    sentences: list[ExcerptSentence]
    cut_before: bool  # the passage goes on before the first sentence shown
    cut_after: bool
    matched: bool  # False: no sentence shares a word with the claim, and this is the passage's opening
    score: float = 0.0  # how well the best sentence backs the claim (compares sections cited alike)

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
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_EMPHASIS = re.compile(r"\*\*|__|`")


def _shown(sentence: str, starts_line: bool) -> str:
    """A sentence as the panel shows it: the words, without markdown's markers or link targets."""
    text = _LINE_MARKERS.sub("", sentence) if starts_line else sentence
    text = _EMPHASIS.sub("", _LINK.sub(r"\1", text))
    text = " ".join(text.split())
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS].rsplit(" ", 1)[0] + " …"
    return text


def _content_spans(passage: str) -> list[tuple[int, int]]:
    """The passage's sentences worth showing: not headings, table rules or lines of punctuation."""
    spans = []
    for start, end in sentence_spans(passage):
        line_start = passage.rfind("\n", 0, start) + 1
        if _HEADING.match(passage[line_start:end]) or not any(ch.isalnum() for ch in passage[start:end]):
            continue
        spans.append((start, end))
    return spans


@lru_cache(maxsize=64)
def _read(passage: str) -> tuple[tuple[tuple[int, int], ...], tuple[frozenset[str], ...]]:
    """A passage's sentences and their terms, once per passage however often a reply cites it."""
    spans = tuple(_content_spans(passage))
    return spans, tuple(frozenset(_terms(passage[s:e])) for s, e in spans)


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


def excerpt(passage_text: str, claim: str, context: int = CONTEXT_SENTENCES) -> Excerpt:
    """The sentences of `passage_text` that back `claim` (the reply's sentence that cites it), marked, with
    `context` sentences either side. When no sentence shares a word with the claim, the passage's opening."""
    spans, terms = _read(passage_text)
    sentences = [passage_text[s:e] for s, e in spans]
    marked, score = _best_sentences(terms, _terms(claim))
    if marked:
        lo, hi = max(0, marked[0] - context), min(len(spans), marked[-1] + context + 1)
    else:
        lo, hi = 0, min(len(spans), 1 + context)
    shown = [
        ExcerptSentence(text=_shown(sentences[i], not passage_text[:spans[i][0]].rpartition("\n")[2].strip()),
                        marked=i in marked,
                        new_line=i > lo and "\n" in passage_text[spans[i - 1][1]:spans[i][0]])
        for i in range(lo, hi)
    ]
    return Excerpt(sentences=shown, cut_before=lo > 0, cut_after=hi < len(spans), matched=bool(marked),
                   score=score)


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
    show as typed, `$` is a dollar (not maths)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("$", "&#36;")


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


def _segments(reply: str) -> list[tuple[str, int, int, str]]:
    """The reply cut into ("prose", start, end, text) and ("html", start, end, html) pieces: fenced blocks
    and code spans become HTML whose every character is escaped, so a misjudged boundary costs looks, never
    safety."""
    pieces: list[tuple[str, int, int, str]] = []
    pos = 0
    for opener in _FENCE.finditer(reply):
        if opener.start() < pos or (opener.group(2)[0] == "`" and "`" in opener.group(3)):
            continue
        content_end, block_end = _fence_end(reply, opener)
        pieces += _code_spans(reply, pos, opener.start())
        content = reply[opener.end() + 1:content_end] if content_end > opener.end() else ""
        pieces.append(("html", opener.start(), block_end, _fence_html(opener, content)))
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


def _label(citation: str) -> str:
    return citation.removeprefix("[").removesuffix("]")


def _excerpt_html(found: Excerpt) -> str:
    parts = []
    for i, sentence in enumerate(found.sentences):
        text = _inert(sentence.text)
        gap = "<br>" if sentence.new_line else (" " if i else "")
        parts.append(gap + (f"<mark>{text}</mark>" if sentence.marked else text))
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
    with the sentences behind the claim marked. Other bracket text stays as written. Nothing the reply or a
    passage contains can add HTML: see the module's docstring."""
    by_citation: dict[str, list] = {}
    for source in sources:
        by_citation.setdefault(source.citation, []).append(source)
    segments = _segments(reply_markdown)
    if not by_citation:
        return _safe_links("".join(_prose(text) if kind == "prose" else text for kind, _, _, text in segments))

    citations = sorted(by_citation, key=len, reverse=True)
    pattern = re.compile("|".join(f"(?P<c{i}>{_citation_pattern(c)})" for i, c in enumerate(citations)))
    found = [(m.start(), m.end(), citations[_which(m)])
             for kind, start, end, _ in segments if kind == "prose"
             for m in pattern.finditer(reply_markdown, start, end)]
    cites = [(s, e) for s, e, _ in found]
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
        candidates = [(s, excerpt(text, claim)) for s, text in texts if text is not None]
        if candidates:
            source, best = max(candidates, key=lambda c: (c[1].matched, c[1].score))
            linked[start] = _citation_html(_label(source.citation), best, trailing)
        else:
            linked[start] = _citation_html(_label(citation), None, trailing)

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
"""
