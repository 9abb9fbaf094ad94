"""Success metrics as records: what is measured, where it is now, where it should get to, by when.

"Success is cost per return under $9 by end of Q3 without the return rate rising" is two records: a target
(cost per return → under $9 by end of Q3) and, from the same sentence, a guardrail of its own (the return
rate must not rise). Numbers, money, dates and the guardrail's wording are read by rules, because rules are
right for them; what the measure is called comes from the parse (the noun phrase the number belongs to).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pmforge.understand import text as t
from pmforge.understand.model import Metric

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_I = re.I

# Where a guardrail clause starts inside a sentence that also states a target.
GUARDRAIL = re.compile(
    # "without" guards only when something could get worse after it ("without the return rate rising"), not in
    # "approved without a human touch".
    r"[,;—–-]?\s*\b(?:without(?=(?:\s+[\w'’%$£€.-]+){0,6}?\s+(?:ris|go(?:ing)? up|get(?:ting)? worse|hurt|increas|"
    r"drop|fall|slip|los|add|rais|affect|harm|damag|worse|impact|hit|more|fewer|extra|push|blow)\w*)|while (?:keeping|holding|not letting|making sure)|as long as|provided|so long as|"
    r"but not at the expense of|not at the expense of|at no cost to|and (?:keep|hold)|but (?:keep|hold|don'?t let|"
    r"not let)|and (?:don'?t|not) let|(?:and|but) (?:\w+\s){1,4}(?:must ?n[o']t|can'?t|cannot|shouldn'?t) "
    r"(?:go|get|rise|drop|fall|increase|decrease|slip|suffer))\b", _I)
_TARGET_MARK = re.compile(
    r"\b(?:to|under|below|above|over|at least|at most|no more than|less than|more than|fewer than|down to|up to|"
    r"into|hit|reach|get (?:it |that )?(?:to|under|below|above)|target(?:ing)?(?: of| is)?|goal(?: of| is)?|"
    r"want(?:s|ed)?(?: it| that)?(?: at| to| under| below| above)?|aim(?:ing)? (?:for|at)|by)\s*$|[<>≤≥]\s*$", _I)
_BASELINE_MARK = re.compile(r"\b(?:from|is|are|sits at|currently|today|now|was|were|baseline(?: is| of)?|"
                            r"runs at|running at|stands at)\s*(?:at\s*)?(?:about|around|roughly|~)?\s*$", _I)
_WANT = re.compile(r"\b(?:want|target|goal|aim|hope|expect|need|should|success|would like|'d like)\w*\b", _I)
_BASELINE_AFTER = re.compile(r"^\s*(?:today|now|currently|right now|at the moment|as of now|last (?:year|quarter|"
                             r"month)|a month|monthly|per month|a week|weekly|on average)\b", _I)
DEADLINE = re.compile(
    r"\b(?:by|before|within|in|over|inside|after)\s+(?:the\s+)?(?:(?:end|start|middle) of\s+(?:the\s+)?)?"
    r"(?:q[1-4](?:\s*\d{2,4})?|h[12]|fy\s?\d{2,4}|\d{4}|january|february|march|april|may|june|july|august|"
    r"september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    r"(?:the\s+)?(?:next|first|coming)\s+(?:\d+|two|three|four|six|eight|twelve)?\s*(?:days?|weeks?|months?|"
    r"quarters?|years?)|(?:\d+|a|one|two|three|four|five|six|eight|nine|ten|twelve|eighteen)\s+(?:days?|weeks?|"
    r"months?|quarters?|years?)|(?:the\s+)?(?:(?:next|this|last|the)\s+)?(?:financial\s+|fiscal\s+|school\s+|"
    r"academic\s+)?(?:year|quarter|summer|winter|spring|autumn|fall|year[- ]end|"
    r"peak|holidays?|launch|renewal)|next\s+\w+)(?:\s+\d{4})?\b"
    r"|\bend of (?:the\s+)?(?:q[1-4]|year|quarter|month|\w+)\b", _I)
_DIRECTION_DOWN = re.compile(r"\b(?:reduc\w*|cut\w*|lower\w*|decreas\w*|drop\w*|fall\w*|halv\w*|shrink\w*|"
                             r"bring (?:it |that )?down|get (?:it |that )?down|down|under|below|fewer|less)\b", _I)
_DIRECTION_UP = re.compile(r"\b(?:increas\w*|rais\w*|grow\w*|boost\w*|improv\w*|doubl\w*|lift\w*|up|above|over|"
                           r"more|at least)\b", _I)
_NAME_STOP = frozenset("""
success target goal aim we i it that this they them what which number figure metric kpi indicator measure
outcome way thing lot bit one ones people something anything today now year quarter month week day end time
leading lagging anti-metric guardrail baseline north star part
""".split())
_EXPLICIT_KIND = re.compile(r"^\W*(?:(?:the|my|our|a|one)\s+)?(leading|lagging|anti-?metric|guardrail|north star|"
                            r"counter-?metric)(?:\s+(?:indicator|metric|outcome|signal|measure))?s?\s*(?:[:—–-]|is\b|"
                            r"would be\b|should be\b|=)", _I)


def explicit_kind(sentence: str) -> str:
    """A kind the PM names outright ("Lagging: …", "the leading indicator is …"), else ""."""
    m = _EXPLICIT_KIND.search(sentence)
    if not m:
        return ""
    word = m.group(1).lower()
    return {"leading": "leading", "lagging": "lagging", "north star": "lagging"}.get(word, "anti")


def split_guardrail(sentence: str) -> tuple[str, str]:
    """(target part, guardrail part): "X under $9 without the return rate rising" → ("X under $9",
    "the return rate rising"). The guardrail part is "" when there is none."""
    m = GUARDRAIL.search(sentence)
    if not m or m.start() < 8:
        return sentence, ""
    return sentence[: m.start()].rstrip(" ,;—–-"), sentence[m.end():].strip(" ,;.")


def _number_spans(text: str) -> list[re.Match]:
    return [m for m in t.NUMBER.finditer(text) if not re.fullmatch(r"(?:19|20)\d\d", m.group(0).strip())
            and not re.match(r"[qQhH][1-4]", text[max(0, m.start() - 1): m.start() + 1])]


def _value_with_mark(text: str, m: re.Match) -> str:
    """A number with the comparison word before it ("under $9", "at least 60%")."""
    before = text[max(0, m.start() - 16): m.start()]
    mark = re.search(r"(?:under|below|above|over|at least|at most|no more than|less than|more than|fewer than|"
                     r"down to|up to|<|>|≤|≥|~|about|around|roughly)\s*$", before, _I)
    value = m.group(0).strip()
    unit = _UNIT_AFTER.match(text[m.end():])
    if unit and not re.search(r"[%a-z]$", value, _I):
        value += " " + unit.group(1)  # "30 days", not "30"
    return (mark.group(0).strip() + " " + value).replace("< ", "<").replace("> ", ">") if mark else value


_UNIT_AFTER = re.compile(r"\s+((?:business |working |calendar )?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|"
                         r"years?|seconds?|points?|pts))\b", _I)


_UNITS = frozenset("""
minute minutes min mins hour hours hr hrs day days week weeks month months year years second seconds percent
point points pp dollar dollars pound pounds euro euros k m bn million billion times x %
""".split())
_CHANGE_VERBS = frozenset("reduce cut get bring increase lower improve grow raise lift halve double drop move "
                          "decrease shrink boost keep hold push".split())


def _is_name_word(token: "Token") -> bool:
    return (token.pos_ in ("NOUN", "PROPN") and token.lower_ not in _NAME_STOP and token.lower_ not in _UNITS
            and not token.like_num and token.ent_type_ not in ("DATE", "TIME", "MONEY", "PERCENT", "CARDINAL",
                                                               "ORDINAL"))


def _measure_name(doc: "Doc | None", text: str, first_number_at: int) -> str:
    """The noun phrase a figure measures: the object of a change verb ("get second visits from…"), the subject
    or complement of "is" ("callback rate is 22%", "the share of tenants who… at 60%"), else the nearest noun
    before the first figure. "" when none reads as a measure."""
    if doc is None:
        return ""
    before = [w for w in doc if w.idx < first_number_at and _is_name_word(w)]
    if not before:
        return ""

    def rank(w: "Token") -> tuple[int, int]:
        if w.dep_ == "dobj" and w.head.lemma_.lower() in _CHANGE_VERBS:
            return (0, -w.i)
        if w.dep_ in ("nsubj", "nsubjpass", "attr") and w.head.lemma_ == "be":
            return (1, -w.i)
        if w.dep_ in ("nsubj", "ROOT", "dobj", "attr"):
            return (2, -w.i)
        return (3, -w.i)

    heads = [w for w in before if w.dep_ not in ("compound", "amod", "nmod", "poss")]
    return _phrase(min(heads or before, key=rank))


def _phrase(head: "Token") -> str:
    """A measure's head with its modifiers and the "of/per X" after it ("average handling time", "cost per
    return", "share of tenants who upload a photo")."""
    doc = head.doc
    tokens = [w for left in head.lefts if left.dep_ in ("compound", "amod", "nmod", "npadvmod")
              for w in left.subtree if w.pos_ not in ("DET", "PRON", "NUM") and w.text not in "%$£€"] + [head]
    for child in head.rights:
        if child.dep_ == "prep" and child.lower_ in ("of", "per", "for", "on", "in") and child.i == head.i + 1:
            for w in child.subtree:
                if w.like_num or w.text in "%$£€," or w.ent_type_ in ("DATE", "PERCENT", "MONEY", "CARDINAL"):
                    break
                tokens.append(w)
            break
    tokens = sorted(set(tokens), key=lambda w: w.i)
    phrase = doc[tokens[0].i: tokens[-1].i + 1].text
    phrase = re.sub(r"\s+(?:from|to|under|below|above|by|at|is|are|was|of|per|for|in|on)$", "", phrase.strip(" ,."))
    return phrase if phrase.lower() not in _NAME_STOP else ""


# Where a metric's figures start: everything before is the name of what is measured.
_FIGURE = r"[<>~" + t.CURRENCY + r"\d]"  # what a figure opens with: a comparison, a currency sign or a digit
_FIGURES_START = re.compile(
    r"\s*(?:[,:;(—–-]\s*)?\b(?:(?:is|are|was|were|sits|runs|stands|currently|today|now)\b(?:\s+(?:at|around|about|"
    r"roughly))?\s*(?=" + _FIGURE + r"|under|below|above|over|about|around|roughly|at least)|(?:going |coming |"
    r"get(?:ting)? |brought )?(?:down|up)\b|from\b(?=\s*" + _FIGURE + r")|to\b(?=\s*(?:" + _FIGURE
    + r"|under|below|above|over|at least))|under\b|below\b|above\b|over\b(?=\s*[" + t.CURRENCY + r"\d])|"
    r"at\b(?=\s*" + _FIGURE + r")|at least\b|at most\b|no more than\b|"
    r"less than\b|more than\b|fewer than\b|halv\w*|doubl\w*|cut (?:by|in)\b|target\w*\b|want\w*\b|goal\b|"
    r"aim\w*\b|should\b|must\b|by (?:q[1-4]|end|the end|next|\d{4}|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|"
    r"within\b|[<>≤≥~]|[" + t.CURRENCY + r"]?\d)", _I)
_LEAD_IN = re.compile(
    r"^\W*(?:(?:the|my|our|a|one)\s+)?(?:leading|lagging|anti-?metric|guardrail|north star|counter-?metric|main|"
    r"headline|key|primary|success|outcome|target|goal|kpi|metric)(?:\s+(?:indicator|metric|outcome|signal|measure|"
    r"number|kpi))?s?\s*(?:[:—–-]|is\b|would be\b|should be\b|=|means\b|looks like\b)\s*"
    r"|^\W*(?:(?:so|and|also|then|basically|honestly)\s+)?(?:i|we)(?:'d| would| will|'ll)?\s+(?:really\s+)?"
    r"(?:want|need|like|hope|aim|expect|have|got)(?:\s+to)?(?:\s+(?:get|see|bring|cut|reduce|lift|raise|push|"
    r"drive|move|take|hit))?\s+"
    r"|^\W*(?:get|bring|cut|reduce|lift|raise|push|drive|move|take)\s+", _I)
_SPLIT_METRICS = re.compile(r"(?:,?\s+and\s+|;\s*|,\s+plus\s+)(?=[^,;]*(?:\d|halv|doubl))", _I)


def split_metrics(sentence: str) -> list[str]:
    """Two measures in one sentence ("breakdowns from 23 to under 10, and on-time delivery from 91.5% to 96%")
    are two records; a clause without a figure of its own stays with the one before."""
    parts = [p.strip(" ,;.") for p in _SPLIT_METRICS.split(sentence) if p and p.strip(" ,;.")]
    figures = [p for p in parts if t.NUMBER.search(p) or re.search(r"\b(?:halv|doubl)", p, _I)]
    if len(parts) < 2 or len(figures) < 2:
        return [sentence]
    out: list[str] = []
    for part in parts:
        if out and not (t.NUMBER.search(part) or re.search(r"\b(?:halv|doubl)", part, _I)):
            out[-1] += ", " + part
        else:
            out.append(part)
    return out


def measure_name(clause: str) -> str:
    """What a metric clause measures: its words before the figures, without the lead-in ("Lagging: second
    visits down from 38%…" → "second visits"; "Success is cost per return under $9" → "cost per return")."""
    text = clause.strip()
    for _ in range(2):
        text = _LEAD_IN.sub("", text).strip()
    m = _FIGURES_START.search(text)
    name = text[: m.start()] if m else ""
    name = re.sub(r"^(?:the|our|a|an)\s+", "", name.strip(" ,;:—–-"), flags=_I)
    name = re.sub(r"\s+(?:is|are|was|were|of|for|in|on|at|to|from|by)$", "", name, flags=_I)
    words = name.split()
    if not words or len(words) > 12 or name.lower() in _NAME_STOP or re.search(r"[:;!?]", name) \
            or words[0].lower() in _NOT_A_MEASURE:
        return ""  # not a measure's name: the brief keeps the PM's clause instead
    return name


# Words a measure's name does not start with ("It starts June: 3", "If cycle time doesn't drop").
_NOT_A_MEASURE = frozenset("it if when we i they he she this that there pass fail from why because so and but "
                           "then".split())


def parse_metric(sentence: str, doc: "Doc | None" = None, kind: str = "lagging") -> Metric:
    """One metric record from the part of a sentence that states it (its guardrail split off first)."""
    numbers = _number_spans(sentence)
    deadline_match = None
    for m in DEADLINE.finditer(sentence):
        if re.search(r"\d|q[1-4]|end|next|year|month|week|quarter|peak|launch|renewal|"
                     r"january|february|march|april|may|june|july|august|september|october|november|december",
                     m.group(0), _I):
            deadline_match = m
    deadline = deadline_match.group(0).strip() if deadline_match else ""
    # A number inside the deadline ("within 6 months") is not a value.
    values = [m for m in numbers if not (deadline_match and deadline_match.start() <= m.start() < deadline_match.end())]
    baseline = target = ""
    for m in values:
        before = sentence[max(0, m.start() - 24): m.start()]
        after = sentence[m.end(): m.end() + 24]
        wanted = _WANT.search(sentence[: m.start()])
        if not target and (_TARGET_MARK.search(before) or (wanted and re.search(r"\bat\s*$", before))):
            target = _value_with_mark(sentence, m)
        elif not baseline and (_BASELINE_MARK.search(before) or _BASELINE_AFTER.search(after)):
            baseline = m.group(0).strip()
    if values and not target and not baseline:
        target = _value_with_mark(sentence, values[-1])
        if len(values) > 1:
            baseline = values[0].group(0).strip()
    if values and baseline and not target and len(values) > 1:
        target = _value_with_mark(sentence, values[-1])
    name = measure_name(sentence)
    direction = ""
    if _DIRECTION_DOWN.search(sentence):
        direction = "down"
    elif _DIRECTION_UP.search(sentence):
        direction = "up"
    return Metric(name=name, baseline=baseline, target=target, deadline=deadline, kind=kind,
                  direction=direction, text=t.tidy(sentence))


def parse_guardrail(clause: str, doc: "Doc | None" = None) -> Metric:
    """A guardrail clause ("the return rate rising", "hurting on-time delivery") as an anti-metric record."""
    clause = re.sub(r"^(?:the|our|any)\s+", "", clause.strip(), flags=_I)
    hurt = re.match(r"^(?:hurting|harming|damaging|affecting|losing|reducing|increasing|raising|worsening|"
                    r"denting|sacrificing|compromising)\s+(?:the\s+|our\s+)?(?P<what>.+)$", clause, _I)
    moving = re.match(r"^(?P<what>.+?)\s+(?:going|getting|creeping|moving)?\s*(?P<how>up|down|worse|rising|rises|"
                      r"rise|increasing|increases|dropping|drops|drop|falling|falls|fall|slipping|slips|suffering|"
                      r"suffers|spiking|spikes|tanking|worsening|going up|going down|doesn'?t (?:drop|fall|rise|"
                      r"go up|go down|get worse|slip)|stays? (?:above|below|under|over) .+|must ?n[o']t .+|"
                      r"can'?t .+|shouldn'?t .+)\b.*$", clause, _I)
    numbers = _number_spans(clause)
    limit = _value_with_mark(clause, numbers[0]) if numbers else ""
    if hurt:
        name = hurt.group("what").strip(" .")
        rendered = f"{t.capitalise(name)} must not get worse"
    elif moving:
        name = moving.group("what").strip(" .")
        how = moving.group("how").lower()
        if re.match(r"(?:going |creeping )?(?:up|ris|increas|spik)", how):
            rendered = f"{t.capitalise(name)} must not rise"
        elif re.match(r"(?:going )?(?:down|drop|fall|slip|tank)|doesn'?t (?:drop|fall|go down|slip)", how):
            rendered = f"{t.capitalise(name)} must not fall"
        elif how.startswith("stay"):
            rendered = f"{t.capitalise(name)} must {how}"
        else:
            rendered = f"{t.capitalise(name)} must not get worse"
    else:
        name = clause.strip(" .")
        rendered = f"Without {clause.strip(' .')}"
    if limit and limit not in rendered:
        rendered += f" {limit}" if re.match(r"(?:more|less|fewer) than|over|under|above|below|by", limit, _I) \
            else f" (limit {limit})"
    return Metric(name=name, target=limit, kind="anti", text=rendered + ".")


def render(metric: Metric) -> str:
    """What the brief shows: "Cost per return: $17 → under $9 by end of Q3" when the record is whole, the PM's
    own clause (tidied) when it is not."""
    if metric.kind == "anti" or not metric.name or not metric.target:
        return metric.text  # a baseline alone ("from 4 days to same day") reads better in the PM's words
    value = f"{metric.baseline} → {metric.target}" if metric.baseline else metric.target
    deadline = f" {metric.deadline}" if metric.deadline else ""
    rendered = f"{t.capitalise(metric.name)}: {value}{deadline}."
    return rendered if _keeps_everything(metric.text, rendered) else metric.text


_CALENDAR = re.compile(r"\b(?:q[1-4]|h[12]|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|"
                       r"nov\w*|dec\w*)\b", _I)


def _keeps_everything(said: str, rendered: str) -> bool:
    """A record is shown in its structured form only when it keeps every figure and date the PM gave and adds
    none: otherwise ("by 31st March", "₹22", "Q2 2025") the PM's own clause is the faithful record."""
    def figures(text: str) -> set[str]:
        return {t.number_core(v) for v in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}

    def dates(text: str) -> set[str]:
        return {m.group(0).lower()[:3] for m in _CALENDAR.finditer(text)}

    return figures(said) == figures(rendered) and dates(said) <= dates(rendered)
