"""Answering a factual question about the uploaded files in a sentence, offline.

The retrieved sections are cut into answerable units: sentences (never across list items), table rows
read with their column headers, and key–value header lines ("Author: …"). Units are ranked by the
question's rarer terms and by MiniLM similarity, then the answer is picked from the best units by the kind
of answer asked for: a person for "who", a date for "when", a number with its unit for "how many / how
much", an acronym's expansion, or the row a "which … shortest" question points to. The reply states the
answer first, then cites it, then quotes what supports it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from pmforge.core.models import RetrievedSection
from pmforge.understand import nlp
from pmforge.understand import text as t
from pmforge.understand.fields import unit_vectors

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

Kind = Literal["who", "when", "how_long", "how_many", "how_much", "stands_for", "which", "what"]

_STANDS_FOR = re.compile(r"\b(?:what (?:does|do|is|'s)\s+(?:an?\s+|the\s+)?(?P<a>[A-Za-z0-9][A-Za-z0-9&-]{1,9})\s+"
                         r"(?:stand for|mean|short for)|(?P<b>[A-Z][A-Z0-9&]{1,9})\s+(?:stands? for|is short for))",
                         re.I)
_WHEN = re.compile(r"\b(?:when|what (?:date|day|month|year|time|period|quarter)|by what date|how soon|"
                   r"which (?:date|day|month|year|quarter)|(?:launch|due|start|end|go-live|renewal|target) date|"
                   r"deadline)\b", re.I)
# A measure named anywhere in a "what" question ("What was the South's median refund wait?") asks for a number.
_MEASURE = re.compile(r"\b(?:median|average|mean|rate|headcount|count|total|percentage|share|proportion|score|"
                      r"number of|volume|how many|budget|price|cost|fee)\b", re.I)
_HOW_MUCH = re.compile(r"\bhow much\b|\bwhat (?:is |was |'s |did )?(?:the )?(?:price|cost|budget|fee|quote|"
                       r"spend|saving|savings|revenue)\b|\b(?:cost|quote|quoted|charge|charges|pay|price)\b", re.I)
_HOW_MANY = re.compile(r"\bhow (?:many|long|often|far|big|large|fast|slow)\b|\bwhat (?:is |was |'s )?(?:the )?"
                       r"(?:share|percent|percentage|proportion|number|rate|median|average|mean|count|total|"
                       r"volume|size|headcount|score|nps|sla)\b", re.I)
# "How many hours…" stays a count: a table's "Avg hours" column holds a bare number, not "5 hours".
_HOW_LONG = re.compile(r"\bhow long\b|\bwhat (?:is |was |'s )?(?:the )?(?:duration|length|timeline|time frame)\b",
                       re.I)
_SPELLED = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|eighteen|twenty|thirty|"
            r"forty|fifty|sixty|a few|several|a couple of)")
_DURATION = re.compile(rf"\b(?:\d+(?:[.,]\d+)?|{_SPELLED})(?:\s*(?:to|-|–)\s*(?:\d+|{_SPELLED}))?[\s-]"
                       r"(?:minute|hour|day|week|month|quarter|year)s?\b", re.I)
_WHO = re.compile(r"^\s*(?:who|whom|whose)\b|\bwho\b", re.I)
_WHICH = re.compile(r"^\s*which\b|\bwhich (?!date|day|month|year|quarter)\w+", re.I)

_KEY_VALUE = re.compile(r"^\s*(?:[-*]\s+)?\**(?P<key>[A-Z][\w /&().'-]{1,40}?)\**\s*:\s*\**\s*(?P<value>\S.{0,240}?)\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•–]|\d{1,2}[.)])\s+")
# A list item that opens with its subject: a quoted person ("Marcus, 52: …") or a defined term ("**Grade A**: …").
_LEAD = re.compile(r"^\**(?P<name>[^*:\n]{2,60}?)\**(?:,\s*\d{1,3})?\s*\**\s*:\s")
_PERSON_LEAD = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)?$")
# Document header lines people ask about in other words ("who wrote…" is the Author line).
_HEADER_ASKS = {
    "author": r"\b(?:wrote|written|author|authored|prepared|drafted)\b",
    "owner": r"\b(?:owns?|owner|responsible|accountable)\b",
    "version": r"\bversion\b",
    "status": r"\bstatus\b|\bis it (?:final|a draft|approved)\b",
    "period": r"\b(?:period|cover|covers|covered|time frame|timeframe)\b",
    "updated": r"\b(?:updated|last (?:changed|edited|revised))\b",
    "date": r"\b(?:dated|date of the (?:report|document|plan))\b",
}
_PRONOUN_START = re.compile(r"^(?:She|He|They|Her|His|Their|It|Its|This team|The team)\b")
_SMALLEST = re.compile(r"\b(?:shortest|lowest|cheapest|fewest|least|smallest|fastest|quickest|minimum|min|best)\b",
                       re.I)
_LARGEST = re.compile(r"\b(?:longest|highest|most|largest|biggest|slowest|maximum|max|worst|greatest|priciest|"
                      r"most expensive)\b", re.I)
_DATE = re.compile(r"\b(?:\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?(?:\s+\d{4})?|"
                   r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?"
                   r"(?:\s+\d{4})?|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\s+\d{4}|"
                   r"Q[1-4](?:\s+|\s*FY)?\d{2,4}|FY\s?\d{2,4}|\d{4}-\d{2}-\d{2})\b", re.I)
_BY_WHEN = re.compile(r"\b(?:by when|deadline|no later than|until when|latest date|cut-?off)\b", re.I)
_BEFORE = re.compile(r"\b(?:by|before|until|no later than)", re.I)
_ASKING_LEMMAS = frozenset("who what when which how many much do stand mean tell our say accord the a".split())
_ASKING = frozenset(t.content_terms("who what when which how many much does stand for mean tell about the our "
                                    "document report file say says according"))


# Tried in order: the first that matches says what kind of answer the question wants.
_KINDS: tuple[tuple[re.Pattern, Kind], ...] = (
    (_STANDS_FOR, "stands_for"),
    (_WHEN, "when"),
    (_WHO, "who"),
    (re.compile(r"\bhow much\b", re.I), "how_much"),
    (_HOW_LONG, "how_long"),
    (_HOW_MANY, "how_many"),
    (re.compile(r"\bwhich (?:customer|person|people|user|shopper|team|manager|lead|interviewee|respondent|"
                r"colleague|employee|member|one of (?:them|the customers))\b", re.I), "who"),
    (_WHICH, "which"),
    (_HOW_MUCH, "how_much"),
    (_MEASURE, "how_many"),
)


def answer_kind(question: str) -> Kind:
    return next((kind for pattern, kind in _KINDS if pattern.search(question)), "what")


@dataclass
class Unit:
    text: str
    section: RetrievedSection
    kind: Literal["sentence", "row", "field"] = "sentence"
    cells: dict[str, str] = field(default_factory=dict)
    before: str = ""  # the sentence before, in the same paragraph (the subject a pronoun points back to)
    table: int = -1  # which table of the section a row belongs to
    speaker: str = ""  # what a list item opens with: who is quoted ("Marcus, 52:") or the term defined


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]


def units(section: RetrievedSection) -> list[Unit]:
    """A section's answerable units, in order."""
    found: list[Unit] = []
    header: list[str] | None = None
    tables = 0
    previous = ""
    for line in section.text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = _cells(stripped)
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            if header is None or not any(header):
                # Word tables often arrive with an empty header row and the column names as the first row.
                tables += header is None
                header = cells
                continue
            row = {h or f"column {i + 1}": c for i, (h, c) in enumerate(zip(header, cells)) if c}
            found.append(Unit("; ".join(f"{h}: {c}" for h, c in row.items()), section, "row", row, table=tables))
            continue
        header = None
        if not stripped:
            previous = ""
            continue
        if re.match(r"^#{1,6}\s", stripped):
            previous = ""
            continue
        match = _KEY_VALUE.match(stripped)
        if match and len(match.group("key").split()) <= 3 and not _LIST_ITEM.match(stripped) \
                and len(match.group("value").split()) <= 20:
            found.append(Unit(stripped, section, "field", {match.group("key").strip(): match.group("value").strip()}))
            previous = ""
            continue
        item = bool(_LIST_ITEM.match(stripped))
        if item:
            previous = ""  # a list item is its own paragraph: a quote never runs into the next one
        speaker = _LEAD.match(_LIST_ITEM.sub("", stripped)) if item else None
        for sentence in t.sentences(stripped):
            found.append(Unit(sentence, section, "sentence", before=previous,
                              speaker=speaker.group("name") if speaker else ""))
            previous = sentence
    return _header_lines_only_in_blocks(found)


def _header_lines_only_in_blocks(found: list[Unit]) -> list[Unit]:
    """A lone "Self-Service Returns Portal: Launch Plan" is a title, not a header line: a line of "Key: value"
    counts as one when a neighbour is one too, or its key is a word or two."""
    kept = []
    for i, unit in enumerate(found):
        if unit.kind == "field":
            near = [found[j] for j in (i - 1, i + 1) if 0 <= j < len(found)]
            key = next(iter(unit.cells))
            if not any(n.kind == "field" for n in near) and len(key.split()) > 2:
                unit = Unit(unit.text, unit.section, "sentence")
        kept.append(unit)
    return kept


# ---------------------------------------------------------------- ranking

_ARGUMENTS = ("nsubj", "nsubjpass", "dobj", "attr", "dative", "oprd")
PREDICATE_WEIGHT = 2.0  # per (verb, argument) pair a unit shares with the question
DEADLINE_WEIGHT = 8.0  # a date the asked thing must happen by ("notice must reach Circulo by 1 October")
ACTOR_WEIGHT = 4.0  # a person who does what a "who" question asks ("the evaluation was run by Samuel Reyes")
_AGENT_PRONOUNS = frozenset({"he", "she", "they"})


@dataclass(frozen=True)
class _Parsed:
    """What the ranking reads of one text's parse, kept so each text (unit or question) is parsed once."""

    lemmas: frozenset[str]  # content lemmas: "ran" and "run", "led" and "leads" meet
    # (verb, argument) lemma pairs: "the evaluation was run by Samuel" and "who ran the evaluation" share
    # (run, evaluation); "she ran a two-day spike" does not.
    predicates: frozenset[tuple[str, str]]
    verbs: frozenset[str]
    nouns: frozenset[str]
    deadlines: tuple[tuple[str, frozenset[str]], ...]  # a date after "by/before/until", the words of its verb
    actors: tuple[tuple[str, str], ...]  # a person and the verb they are the subject or passive agent of


_PARSED: dict[str, _Parsed] = {}


def _read(doc: "Doc", text: str) -> _Parsed:
    deadlines = []
    for prep in doc:
        if prep.dep_ == "prep" and _BEFORE.fullmatch(prep.lower_):
            said = frozenset(w.lemma_.lower() for c in prep.head.children if c.dep_ != "prep" for w in c.subtree)
            deadlines += [(doc[date.left_edge.i: date.right_edge.i + 1].text, said) for date in prep.children
                          if date.dep_ == "pobj" and date.ent_type_ == "DATE"]
    actors = []
    for w in doc:
        if not (w.ent_type_ == "PERSON" or w.lower_ in _AGENT_PRONOUNS):
            continue
        node = w.head if w.dep_ in ("compound", "flat") else w
        if node.dep_ == "nsubj":
            actors.append((w.text, node.head.lemma_.lower()))
        elif node.dep_ == "pobj" and node.head.dep_ == "agent":
            actors.append((w.text, node.head.head.lemma_.lower()))
    return _Parsed(
        lemmas=frozenset(w.lemma_.lower() for w in doc if not (w.is_stop or w.is_punct or w.is_space)
                         and len(w.text) > 1) | t.content_terms(text),
        predicates=frozenset((w.head.lemma_.lower(), noun.lemma_.lower()) for w in doc
                             if w.dep_ in _ARGUMENTS and w.head.pos_ == "VERB" and not w.is_stop
                             for noun in _argument_nouns(w)),
        verbs=frozenset(w.lemma_.lower() for w in doc if w.pos_ == "VERB"),
        nouns=frozenset(w.lemma_.lower() for w in doc if w.pos_ in ("NOUN", "PROPN") and not w.is_stop),
        deadlines=tuple(deadlines), actors=tuple(actors))


def _parsed(texts: list[str]) -> list[_Parsed]:
    """Each text's parse, read once per process."""
    missing = [x for x in dict.fromkeys(texts) if x not in _PARSED]
    if missing:
        if len(_PARSED) > 50_000:
            _PARSED.clear()
        for text, doc in zip(missing, nlp.parse(missing)):
            _PARSED[text] = _read(doc, text)
    return [_PARSED[x] for x in texts]


def _terms(texts: list[str]) -> list[frozenset[str]]:
    return [p.lemmas for p in _parsed(texts)]


def _argument_nouns(argument: Token) -> list[Token]:
    """An argument's head noun and the nouns compounded onto it ("the returns platform vendor evaluation" is
    about the evaluation, the vendor and the platform, however the parse hangs them together)."""
    return [argument] + [w for w in argument.subtree if w is not argument and w.pos_ in ("NOUN", "PROPN")
                         and w.dep_ in ("compound", "nmod", "npadvmod", "appos")]


def _predicates(texts: list[str]) -> list[frozenset[tuple[str, str]]]:
    return [p.predicates for p in _parsed(texts)]


def _asked_predicates(question: str) -> frozenset[tuple[str, str]]:
    """Each verb of a question with each noun in it: a short question's parse may hang "the returns platform
    vendor evaluation" on "returns", but "who ran" it asks about running the evaluation all the same."""
    asked = _parsed([question])[0]
    return frozenset((verb, noun) for verb in asked.verbs for noun in asked.nouns) | asked.predicates


def _deadlines(text: str, nouns: set[str]) -> list[str]:
    """Dates something the question names must happen by: the date after "by", "before" or "until", when
    the verb it hangs from has one of the question's nouns among its words."""
    return [date for date, said in _parsed([text])[0].deadlines if said & nouns]


def _actors(text: str, verbs: set[str]) -> list[str]:
    """People who do one of the question's verbs in a sentence: its subject, or the agent of its passive."""
    return [person for person, verb in _parsed([text])[0].actors if verb in verbs]


SIMILARITY_WEIGHT = 3.0  # MiniLM cosine beside the rarity-weighted shared lemmas


def _rank(question: str, candidates: list[Unit]) -> list[tuple[float, Unit]]:
    wanted = _terms([question])[0] - _ASKING - _ASKING_LEMMAS
    frequency: dict[str, int] = {}
    unit_terms = []
    for unit, terms in zip(candidates, _terms([u.text for u in candidates])):
        terms = terms | t.content_terms(unit.section.section)
        unit_terms.append(terms)
        for term in terms & wanted:
            frequency[term] = frequency.get(term, 0) + 1
    n = len(candidates)
    vectors = unit_vectors([question] + [u.text[:500] for u in candidates])
    similarity = vectors[1:] @ vectors[0]
    asked_headers = [key for key, pattern in _HEADER_ASKS.items() if re.search(pattern, question, re.I)]
    # Words in a fifth of the units ("returns" in a returns project) name nothing in particular.
    counts: dict[str, int] = {}
    for unit in candidates:
        for word in _words(unit.text):
            counts[word] = counts.get(word, 0) + 1
    distinctive = {w for w in _words(question) if counts.get(w, 0) <= max(2, n // 5)} - _QUESTION_WORDS
    asked_predicates = _asked_predicates(question)
    asked_verbs = {verb for verb, _ in asked_predicates}
    asked_nouns = {noun for _, noun in asked_predicates}
    by_when = bool(_BY_WHEN.search(question))
    kind = answer_kind(question)
    ranked = []
    for unit, terms, sim, predicates in zip(candidates, unit_terms, similarity,
                                            _predicates([u.text for u in candidates])):
        lexical = sum(math.log(1 + n / frequency[w]) for w in terms & wanted)
        score = lexical + SIMILARITY_WEIGHT * float(sim) + PREDICATE_WEIGHT * len(predicates & asked_predicates)
        if by_when and _deadlines(unit.text, asked_nouns):
            score += DEADLINE_WEIGHT
        if kind == "who" and _actors(unit.text, asked_verbs):
            score += ACTOR_WEIGHT
        if unit.kind == "row":
            score += _row_fit(question, unit, distinctive)
        if unit.kind == "field":
            key = next(iter(unit.cells)).lower()
            if any(h in key for h in asked_headers):
                # A header line speaks for its whole file: it matches when the question names the file.
                named = _words(re.sub(r"[-_.]", " ", unit.section.filename)) & distinctive
                score += 3.0 + 3.0 * len(named)
        ranked.append((score, unit))
    ranked.sort(key=lambda pair: -pair[0])
    return ranked


def _words(text: str) -> set[str]:
    return {w[:-2] if w.endswith("'s") else w for w in re.findall(r"[a-z0-9][a-z0-9'&]*", text.lower())}


_QUESTION_WORDS = frozenset("who whom whose what when which how many much did does do is was were are the a an of "
                            "in on at for to by our we they it its".split())


def _row_fit(question: str, unit: Unit, distinctive: set[str]) -> float:
    """A row fits when its first cell is what the question names ("ParcelBack's …") and one of its columns is
    what it asks for, closely ("price per return" over "per-return cost per year")."""
    cells = list(unit.cells.items())
    if len(cells) < 2:
        return 0.0
    named = 3.0 * len(_words(cells[0][1]) & distinctive)
    headers = [h for h, _ in cells[1:]]
    vectors = question_vector_pair(question, headers)
    asked = _words(question) - _QUESTION_WORDS
    columns = [len(_words(h) & asked) / max(len(_words(h) | asked), 1) + float(v) for h, v in zip(headers, vectors)]
    return named + 3.0 * max(columns, default=0.0)


def question_vector_pair(question: str, texts: list[str]) -> np.ndarray:
    """Cosine of the question with each text."""
    vectors = unit_vectors([question] + texts)
    return vectors[1:] @ vectors[0]


# ---------------------------------------------------------------- picking the answer


def _persons(text: str) -> list[str]:
    doc = nlp.parse([text])[0]
    return [e.text for e in doc.ents if e.label_ == "PERSON"]


def _dates(text: str) -> list[str]:
    doc = nlp.parse([text])[0]
    found = []
    for e in doc.ents:
        if e.label_ == "DATE":
            start = e.start  # the model may leave the day out of "1 October 2025"
            while start > 0 and doc[start - 1].like_num and e.start <= doc[start - 1].head.i < e.end:
                start -= 1
            found.append(doc[start: e.end].text)
    return found or [m.group(0) for m in _DATE.finditer(text)]


_SPELLED_PERCENT = re.compile(r"\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-(?:one|two|three|four|"
                              r"five|six|seven|eight|nine))?|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
                              r"seventeen|eighteen|nineteen|one|two|three|four|five|six|seven|eight|nine) "
                              r"(?:percent|per cent)\b", re.I)
_SHARE = re.compile(r"\b(?:share|percent|percentage|proportion|rate|what fraction|how many percent)\b", re.I)


def _numbers(text: str, question: str, kind: Kind) -> list[str]:
    """The numbers of the kind the question wants: money for "how much", a percentage for "what share";
    an age or a count beside them is not the answer."""
    given = set(t.numbers(question))
    values = [v for v in t.numbers(text) + [m.group(0) for m in _SPELLED_PERCENT.finditer(text)] if v not in given]
    if kind == "how_much" and not re.search(r"\bhow much (?:time|longer)\b", question, re.I):
        return [v for v in values if t.number_kind(v) == "money"]
    if _SHARE.search(question):
        return [v for v in values if t.number_kind(v) == "percent" or _SPELLED_PERCENT.fullmatch(v)]
    return values


def _near(text: str, values: list[str], question: str) -> str:
    """The value closest to the question's terms in the text."""
    if len(values) <= 1:
        return values[0] if values else ""
    wanted = t.content_terms(question) - _ASKING
    words = text.lower()
    anchors = [m.start() for term in wanted for m in re.finditer(re.escape(term[:5]), words)]
    if not anchors:
        return values[0]
    return min(values, key=lambda v: min(abs(words.find(v.lower()) - a) for a in anchors))


def _best_cell(unit: Unit, question: str, want) -> str:
    """The cell of a row (or the value of a header line) whose column the question names, that holds the
    kind of value wanted."""
    asked = _words(question) - _QUESTION_WORDS
    headers = list(unit.cells)
    closeness = question_vector_pair(question, headers)
    scored = []
    for position, (header, value) in enumerate(unit.cells.items()):
        if not want(value) or (unit.kind == "row" and position == 0 and len(unit.cells) > 1):
            continue
        words = _words(header)
        scored.append((len(words & asked) / max(len(words | asked), 1) + float(closeness[position]), -position,
                       value))
    return max(scored)[2] if scored else ""


def _expansion(acronym: str, candidates: list[Unit]) -> tuple[str, Unit | None]:
    """An acronym's expansion as the files define it: "RMA (Return Merchandise Authorization)", "Return
    Merchandise Authorization (RMA)", "RMA: …", or a glossary row. An expansion whose initials spell the
    acronym wins over one that merely sits beside it ("Full launch (GA)")."""
    a = re.escape(acronym)
    patterns = [re.compile(rf"\b{a}\s*\(([^)]{{4,80}})\)"), re.compile(rf"([A-Z][\w&' -]{{3,80}}?)\s*\(\s*{a}\s*\)"),
                re.compile(rf"\b{a}\b\**\s*(?:stands for|means|is short for|[:—–-])\s*([^.;\n]{{4,80}})")]
    letters = re.sub(r"[^a-z0-9]", "", acronym.lower())
    loose: tuple[str, Unit | None] = ("", None)
    for unit in candidates:
        found = [m.group(1).strip() for p in patterns for m in p.finditer(unit.text)]
        if unit.kind in ("field", "row"):
            found += [v for k, v in unit.cells.items() if k.strip().strip("*").lower() == acronym.lower()]
            cells = list(unit.cells.values())
            if len(cells) >= 2 and cells[0].strip("* ").lower() == acronym.lower():
                found.append(cells[1])
        for words in found:
            initials = "".join(w[0] for w in re.findall(r"[A-Za-z0-9]+", words)).lower()
            if initials.startswith(letters) or letters in initials or initials == letters[:len(initials)] > "":
                return words, unit
            if loose[1] is None and len(words.split()) >= 2:
                loose = (words, unit)
    return loose


def _which(question: str, candidates: list[Unit]) -> tuple[str, Unit | None]:
    """"Which vendor has the shortest setup?": compare the rows of the best-matching table on the column the
    question names; the answer is that row's first cell."""
    smallest, largest = _SMALLEST.search(question), _LARGEST.search(question)
    rows = [u for u in candidates if u.kind == "row"]
    if not rows or not (smallest or largest):
        return "", None
    wanted = t.content_terms(question) - _ASKING
    tables: dict[tuple[str, int], list[Unit]] = {}
    for row in rows:
        tables.setdefault((row.section.id, row.table), []).append(row)
    best: tuple[int, str, Unit | None] = (0, "", None)
    for table in tables.values():
        headers = list(table[0].cells)
        for header in headers[1:]:
            # The column compared, and the table whose first column is what the question asks for ("which reason").
            score = len(t.content_terms(header) & wanted) + 2 * len(t.content_terms(headers[0]) & wanted)
            if score <= best[0] or not t.content_terms(header) & wanted and not _LARGEST.search(question):
                continue
            valued = []
            for row in table:
                numbers = t.numbers(row.cells.get(header, ""))
                if numbers:
                    valued.append((float(t.number_core(numbers[0]).replace(",", "") or 0), row))
            if len(valued) >= 2:
                pick = min(valued, key=lambda v: v[0]) if smallest else max(valued, key=lambda v: v[0])
                best = (score, next(iter(pick[1].cells.values())), pick[1])
    return best[1], best[2]


@dataclass
class Answer:
    value: str  # the answer itself, "" when only a supporting sentence was found
    unit: Unit
    quote: str


def find_answer(question: str, sections: list[RetrievedSection]) -> Answer | None:
    candidates = [u for s in sections for u in units(s)]
    if not candidates:
        return None
    kind = answer_kind(question)
    if kind == "stands_for":
        match = _STANDS_FOR.search(question)
        acronym = (match.group("a") or match.group("b")) if match else ""
        value, unit = _expansion(acronym, candidates)
        if unit is not None:
            return Answer(value, unit, unit.text)
    if kind == "which":
        value, unit = _which(question, candidates)
        if unit is not None:
            return Answer(value, unit, unit.text)
    ranked = _rank(question, candidates)
    wanted = _terms([question])[0] - _ASKING - _ASKING_LEMMAS
    for score, unit in ranked[:6]:
        said = _terms([unit.text])[0] | t.content_terms(unit.section.section) | _words(
            re.sub(r"[-_.]", " ", unit.section.filename))
        if not said & wanted and not (unit.kind == "field" and score >= 6.0):
            continue  # nothing of the question in it: a header line counts when it matched its file
        value, quote = _pick(kind, question, unit)
        if value or kind in ("what", "which"):
            return Answer(value, unit, quote)
    top = ranked[0][1]
    if t.content_terms(top.text + " " + top.section.section) & wanted and kind in ("what", "which"):
        return Answer("", top, top.text)
    return None


def _pick(kind: Kind, question: str, unit: Unit) -> tuple[str, str]:
    """The answer of `kind` in one unit, and the quote that supports it."""
    if unit.kind in ("row", "field"):
        want = {
            "who": lambda v: bool(_persons(v)) or bool(re.match(r"[A-Z][a-z]+ [A-Z][a-z]+", v)),
            "when": lambda v: bool(_dates(v)) or bool(t.numbers(v)),
            "how_many": lambda v: bool(_numbers(v, question, "how_many")),
            "how_much": lambda v: bool(_numbers(v, question, "how_much")) or bool(t.numbers(v)),
            "how_long": lambda v: bool(_DURATION.search(v)),
        }.get(kind, lambda v: True)
        if kind == "who" and unit.kind == "row":
            # A table's "Owner" or "Lead" column may hold a team rather than a person: the column the
            # question names decides, among cells that are words rather than figures.
            want = lambda v: bool(v.strip()) and not t.numbers(v)  # noqa: E731
        value = _best_cell(unit, question, want)
        return value, unit.text
    text = unit.text
    if kind == "who":
        if unit.speaker and _PERSON_LEAD.match(unit.speaker) and (re.search(r"\b(?:said|says|say|told|complain|mention|customer|interviewee|"
                                       r"respondent|quote|had to|who)\b", question, re.I)):
            return unit.speaker, text
        people = _persons(text)
        if not people and unit.before and _PRONOUN_START.match(text):
            people = _persons(unit.before)
            return (people[0], f"{unit.before} {text}") if people else ("", text)
        return (people[0] if people else ""), text
    if kind == "which" and unit.speaker:
        return unit.speaker, text
    if kind == "when":
        dates = _dates(text)
        # "When" asks for a point in time: "6 October 2025" over the "four-week" pilot beside it, and the
        # date a deadline is set by when the question asks "by when".
        points = [d for d in dates if not _DURATION.fullmatch(d.strip())] or dates
        if _BY_WHEN.search(question):
            asked_nouns = {noun for _, noun in _asked_predicates(question)}
            points = _deadlines(text, asked_nouns) or points
        return (points[0] if points else ""), text
    if kind == "how_long":
        return _near(text, [m.group(0) for m in _DURATION.finditer(text)], question), text
    if kind in ("how_many", "how_much"):
        return _near(text, _numbers(text, question, kind), question), text
    return "", text


def _third_person(verb: str) -> str:
    """A regular verb after "does": run → runs, reach → reaches, carry → carries."""
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _subject(words: str) -> str:
    return words[:1].upper() + words[1:]


# Questions whose wording turns into the answer's sentence by putting the answer in the question word's place.
# Anything else is answered as "**answer** [citation]": a sentence that reads wrong is worse than none.
_DECLARATIVE: tuple[tuple[re.Pattern, object], ...] = (
    (re.compile(r"^who (?P<verb>is|was|(?!does\b|do\b|did\b)\w+(?:s|ed))\s+(?P<rest>[^?]+)\?$", re.I),
     lambda m, a: f"{a} {m['verb'].lower()} {m['rest']}"),
    (re.compile(r"^what does (?P<x>[A-Za-z0-9&-]+) (?:stand for|mean)\?$", re.I),
     lambda m, a: f"{m['x']} stands for {a}"),
    (re.compile(r"^how (?P<q>much|long) (?P<aux>does|do) (?P<subj>[^?]+?) (?P<verb>cost|run|take|last)\?$", re.I),
     lambda m, a: f"{_subject(m['subj'])} "
                  f"{_third_person(m['verb']) if m['aux'].lower() == 'does' else m['verb']} {a}"),
    (re.compile(r"^how many (?P<noun>[a-z][\w -]*?) (?P<verb>are|were) (?P<rest>[^?]+)\?$", re.I),
     lambda m, a: f"{a} {m['noun']} {m['verb']} {m['rest']}"),
    (re.compile(r"^(?:what|which) (?P<verb>is|was|are|were) (?P<x>the [^?]+)\?$", re.I),
     lambda m, a: f"{_subject(m['x'])} {m['verb']} {a}"),
)


def answer_sentence(question: str, value: str) -> str:
    """The answer as a sentence in the question's own words ("Who leads the Reno team?" → "**Gloria Mbeki**
    leads the Reno team"), or the bold answer alone when the question's shape is not one of the safe ones."""
    bold = f"**{value}**"
    asked = " ".join(question.split())
    for pattern, build in _DECLARATIVE:
        match = pattern.match(asked)
        if match:
            return build(match, bold)  # type: ignore[operator]
    return bold


def reply_to(question: str, sections: list[RetrievedSection]) -> str:
    """The answer first, then where it is, then the words that support it; or a plain "not found"."""
    answer = find_answer(question, sections)
    if answer is None:
        return ("I did not find this in your files, so I won't guess at it. If it is in a document you haven't "
                "uploaded yet, add it and ask again.")
    citation = answer.unit.section.citation
    quote = t.clip_words(answer.quote, 60)
    if answer.value:
        return f"{answer_sentence(question, answer.value.strip().rstrip('.'))} {citation}.\n\n> “{quote}”"
    return f"{citation}: “{quote}”"
