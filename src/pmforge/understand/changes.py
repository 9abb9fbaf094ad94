"""What a message changes in the record rather than adds to it: a corrected value, a stakeholder who left,
an assumption confirmed or disproved, and the type and weight of a new assumption.

Corrections keep to rules because they are about numbers and names the record already holds ("actually it's
6.5%, not 7%", "scratch that", "Rosa Delgado, not Salgado").
"""

from __future__ import annotations

import re
from typing import Literal

from pmforge.core.models import SessionState
from pmforge.understand import text as t
from pmforge.understand.model import Correction, Departure, Hedge, StatusChange

_I = re.I

_CORRECTION = re.compile(
    r"\b(?:actually|scratch that|correction|i misspoke|sorry,? (?:i meant|it'?s|that'?s|the|no)|i meant|"
    r"let me correct|to correct|rather than|instead of|update:|updated|revised|is now|are now|it'?s now|"
    r"now (?:it'?s|at|down to|up to|closer to)|changed to|has changed|have changed|turns out|turned out|"
    r"i was wrong|that was wrong|wrong,|not quite|no wait|wait,? no|my mistake|my bad|typo|to be precise|"
    r"more like|closer to|nope|misread|misremember\w*|mis-?typed|mistyped|i'?d pulled|wrong (?:report|number|"
    r"figure|dashboard|tab|sheet)|scratch the|got (?:it|that) wrong|should have said|fix something|"
    r"correct a number|counted (?:\w+ ){0,3}twice|double[- ]counted|(?:must|need to|have to|should|want to) correct|"
    r"correct (?:myself|that|this|a|one|the)|"
    r"(?:is|was) not right|(?:isn|wasn)'?t right|incorrect(?:ly)?|misspel\w*|mis-?spelt|wrong (?:surname|name|"
    r"spelling)|spel(?:t|led) \S+(?: \S+)? wrong|(?:surname|name) wrong|"
    # The words people use to put a figure right, in any register: "small fix", "erratum", "should read", "I had
    # it wrong", "I mixed them up", "checked again", "in fact", "please change X to Y".
    r"(?:let me|small|quick|one) fix|fix (?:that|this)|erratum|oops|should (?:be|read|say)|read \S+ (?:for|as)|"
    r"(?:please|pls|can you|could you) (?:change|update|make|replace)|replace \S+ (?:\S+ )?with|in fact|"
    r"(?:had|got|have) (?:it|that|this|them|those) wrong|(?:is|was|were) wrong|i confused|mixed (?:it |them )?up|"
    r"double[- ]?check\w*|(?:re-?)?check\w* again|rechecked|the (?:right|correct|real|actual) (?:number|figure|"
    r"value)|correct (?:number|figure|value)|hmm,? no)\b"
    r"|" + t.NUMBER.pattern + r",?\s+not\s+" + t.NUMBER.pattern + r"|\bsorry\b|,\s*not\s+" + t.NUMBER.pattern, _I)
# A figure put right in place, old first: "that 4.8 should be 3.4", "replace 14 minutes with 12".
_NUMBER_SWAP = re.compile(
    r"(?:\breplace\s+(?P<replaced>" + t.NUMBER.pattern + r")(?:\s+[a-z]+){0,2}?\s+with|(?P<old>" + t.NUMBER.pattern
    + r")(?:\s+[a-z]+){0,2}?\s+(?:should (?:be|read|say)|->|→))\s+(?P<new>" + t.NUMBER.pattern + r")", _I)
_TOLD = r"\b(?:told(?: you)?|gave(?: you)?|quoted|mentioned|said)(?: it)?(?: as| was| of)?"
_OLD_MARK = re.compile(_TOLD + r"\s*(?:the\s+)?$|(?:\bnot|\binstead of|\brather than|\bwas|\bwere|\bfrom|\bsaid|\bthought|\bearlier|"
                       r"\bpreviously|\bnot the|\bscratch(?: that)?(?: the)?)\s*(?:the\s+|a\s+|an\s+|it'?s\s+|"
                       r"it was\s+)?$", _I)
# The same, said after the figure: "the 31% I told you was wrong", "the 38% is not right", "that 4,800 counted…".
_OLD_AFTER = re.compile(r"^\s*(?:[\w%-]+\s+){0,3}?(?:(?:that |which )?(?:i|we) (?:told|gave|quoted|said|mentioned|"
                        r"reported|shared|used|had)|(?:is|was|were) (?:not right|wrong|off|incorrect|outdated|stale)|"
                        r"(?:isn'?t|wasn'?t) right|(?:that |which |it )?(?:was |were )?(?:counted|included|including)|"
                        r"double[- ]counted)\b", _I)
_PHRASE_SWAP = [
    re.compile(r"\b(?:it'?s|it is|they'?re|they are|that'?s|that is|is|are|was|were)\s+(?:our\s+|the\s+|an?\s+)?"
               r"(?P<new>[\w£$€%.,' -]{2,50}?),?(?:\s+and|\s+but)?\s+not\s+(?:the\s+|our\s+|an?\s+)?"
               r"(?P<old>[\w£$€%.' -]{2,50}?)"
               r"(?:\s+[—–-]|[.,;!]|$)", _I),
    re.compile(r"\bnot\s+(?:the\s+)?(?P<old>[\w£$€%.' -]{2,50}?)\s*[,;—–-]+\s*(?:but|it'?s|it is|they'?re|rather)\s+"
               r"(?:the\s+)?(?P<new>[\w£$€%.' -]{2,50}?)(?:[.,;!]|$)", _I),
]
_DEPARTED = re.compile(
    r"\b(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?|she|he|they)\s+(?:has |have |just |recently )*(?:moved teams|moved on|"
    r"moved over|moved across|went over to|"
    r"moved to|left|is leaving|'s leaving|retired|stepped down|was replaced|got promoted|is on leave|went on leave|"
    r"no longer (?:leads|runs|owns|works|involved|there|on|in charge|the)|is out|isn'?t involved|switched teams|"
    r"changed teams|changed roles|went to)", _I)
_SUCCESSOR = re.compile(
    r"\b(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\s+(?:now\s+)?(?:leads|runs|owns|heads|took over|takes over|is taking over|"
    r"has taken over|replaces|replaced|is the new|is now|will (?:lead|own|run)|is in charge)"
    r"|\b(?:now|instead)\s+(?:it'?s\s+)?(?P<who2>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\s+(?:leads|runs|owns|who)", 0)
_CONFIRM = re.compile(
    r"\b(?:confirmed|we checked|i checked|checked and|verified|validated|it'?s true|is true|holds up|held up|"
    r"the data (?:shows|backs|supports|confirms)|proved (?:right|true)|was right|were right|turns out (?:it|that|"
    r"they|he|she|we) (?:is|are|was|were|do|does|did) |they do\b|it does\b|yes,? they|sure enough|as expected|"
    r"is correct|backs (?:it|that) up)\b", _I)
_INVALIDATE = re.compile(
    r"\b(?:turns out|turned out|was wrong|were wrong|wasn'?t true|isn'?t true|not true|not the case|proved wrong|"
    r"we were wrong|i was wrong|that'?s wrong|no longer true|doesn'?t hold|didn'?t hold|disproved|debunked|"
    r"the data says otherwise|actually (?:they|it|he|she|we) (?:don'?t|doesn'?t|didn'?t|won'?t|can'?t|aren'?t|"
    r"isn'?t)|invalidated|killed (?:that|the) (?:theory|assumption)|scrap (?:that|the) assumption|"
    r"opposite|not at all)\b", _I)
_TYPE_HINTS = [
    ("stakeholder_dependency", re.compile(r"\b(?:vp|director|head of|team|stakeholders?|sign(?:s)? off|approv\w*|"
                                          r"buy-?in|leadership|union|legal|finance|cfo|ceo|board|managers? will|"
                                          r"will agree|on board)\b", _I)),
    ("technical", re.compile(r"\b(?:data|system|integrat\w*|api|platform|model|latency|infrastructure|pipeline|"
                             r"pos|erp|sap|accuracy|engineer\w*|build|feed|export)\b", _I)),
    ("market", re.compile(r"\b(?:competitors?|market|price|pricing|segment|industry|rivals?|vendors?)\b", _I)),
    ("value", re.compile(r"\b(?:customers?|users?|shoppers?|buyers?|value|adopt\w*|use it|want|need|trust|pay|"
                         r"switch|prefer|like|staff|managers?|nurses?|drivers?|patients?)\b", _I)),
]
_HIGH_IMPACT = re.compile(r"\b(?:whole|entire|everything|the (?:business )?case|won'?t work|dead|kill|critical|"
                          r"key|main|biggest|crucial|must|only if|depends on)\b", _I)



def assumption_type(sentence: str) -> str:
    return next((kind for kind, pattern in _TYPE_HINTS if pattern.search(sentence)), "organisational")


def hedge_of(sentence: str) -> Hedge | None:
    if sentence.rstrip().endswith("?") or not t.is_hedged(sentence):
        return None
    claim = t.claim_without_hedge(sentence)
    if len(claim.split()) < 4 or t.is_meta(claim):
        return None
    return Hedge(claim=t.clip_words(claim, 60), sentence=sentence, type=assumption_type(sentence),
                 impact="high" if _HIGH_IMPACT.search(sentence) else "medium")


def status_changes(sentence: str, state: SessionState) -> list[StatusChange]:
    invalid, confirm = _INVALIDATE.search(sentence), _CONFIRM.search(sentence)
    if not (invalid or confirm):
        return []
    live = [a for a in state.assumptions if not a.retired and a.status in ("active", "at_risk")]
    named = set(re.findall(r"\bA\d+\b", sentence))
    targets = [a for a in live if a.id in named]
    if not targets:
        scored = sorted(((t.overlap(t.claim_without_hedge(sentence) or sentence, a.claim), a) for a in live),
                        key=lambda pair: -pair[0])
        targets = [a for score, a in scored[:1]
                   if score >= 0.5 and len(t.content_terms(sentence) & t.content_terms(a.claim)) >= 2]
    status: Literal["confirmed", "invalidated"] = "invalidated" if invalid else "confirmed"
    return [StatusChange(assumption_id=a.id, status=status, reason=t.clip_words(sentence, 60)) for a in targets]


def recorded_strings(state: SessionState) -> list[str]:
    out: list[str] = []

    def walk(node):
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(state.problem_brief.model_dump())
    walk(state.solution_evaluation.model_dump())
    out += [a.claim for a in state.assumptions if not a.retired]
    return out


def says_correction(words: str) -> bool:
    return bool(_CORRECTION.search(words))


def corrections(sentence: str, state: SessionState, earlier: list[str], marked: bool = False) -> list[Correction]:
    """What one sentence puts right; `marked` when another sentence of the message says it is a correction
    ("The surname was given incorrectly. It is Ruth Okonjo, not Okafor.")."""
    if not _CORRECTION.search(sentence):
        return _name_swap(sentence, earlier) if marked else []
    swap = _NUMBER_SWAP.search(sentence)
    if swap:
        old = (swap.group("replaced") or swap.group("old")).strip()
        if t.number_core(old) != t.number_core(swap.group("new")):
            return [Correction(old=old, new=swap.group("new").strip(), sentence=sentence)]
    found = list(t.NUMBER.finditer(sentence))
    olds = [m for m in found if _said_before(sentence, m)]
    news = [m for m in found if m not in olds]
    corrections = []
    if olds and news:
        return [Correction(old=olds[0].group(0).strip(), new=news[0].group(0).strip(), sentence=sentence)]
    if news and not olds:
        # The old value is whatever number of the same kind sits in the record next to the same words.
        new = news[0].group(0).strip()
        kind = t.number_kind(new)
        best: tuple[float, str] = (0.0, "")
        # Sentence by sentence: a record of several figures names each beside its own words.
        for text in (part for record in earlier for part in t.sentences(record)):
            shared = t.overlap(sentence, text)
            for m in t.NUMBER.finditer(text):
                value = m.group(0).strip()
                if t.number_kind(value) == kind and t.number_core(value) != t.number_core(new) and shared > best[0]:
                    best = (shared, value)
        if best[1] and best[0] >= 0.2:
            corrections.append(Correction(old=best[1], new=new, sentence=sentence))
        return corrections
    return _name_swap(sentence, earlier)


def _name_swap(sentence: str, earlier: list[str]) -> list[Correction]:
    """A name or phrase put right: "it's Rosa Delgado, not Salgado", "not the ops team — it's finance"."""
    corrections = []
    for pattern in _PHRASE_SWAP:
        swap = pattern.search(sentence)
        if swap:
            old, new = swap.group("old").strip(" .,"), swap.group("new").strip(" .,")
            if len(new.split()) > 1 and len(old.split()) == 1 and old[:1].isupper() and new.split()[-1][:1].isupper():
                new = new.split()[-1]  # "it's Rosa Delgado, not Salgado": the surname is what changes
            if old.lower() != new.lower() and any(old.lower() in s.lower() for s in earlier):
                corrections.append(Correction(old=old, new=new, sentence=sentence))
                break
    return corrections


def _said_before(sentence: str, m: re.Match) -> bool:
    """Whether a figure is the one being put right: "not 7%", "the 31% I told you", "that 4,800 counted…"."""
    return bool(_OLD_MARK.search(sentence[max(0, m.start() - 20): m.start()]) or _OLD_AFTER.match(sentence[m.end():]))


def withdraws_figure(sentence: str) -> bool:
    """A sentence that takes back a figure ("The 31% I told you was wrong", "the 94 minutes I told was with
    weekends") states nothing new to record."""
    return any(_OLD_AFTER.match(sentence[m.end():]) or re.search(_TOLD + r"\s*$", sentence[max(0, m.start() - 24):
                                                                                          m.start()], _I)
               for m in t.NUMBER.finditer(sentence))


def message_correction(sentences: list[str], earlier: list[str]) -> Correction | None:
    """A figure put right across a message's sentences ("Sorry, one correction. The 31% I told you was wrong,
    it counted pending shipments. Actual RTO is 26%."): the first figure the record holds, then the first later
    figure of the same kind that it does not."""
    words = " ".join(sentences)
    if len(sentences) < 2 or not _CORRECTION.search(words):
        return None
    recorded = {t.number_core(m.group(0)) for record in earlier for m in t.NUMBER.finditer(record)}
    matches = list(t.NUMBER.finditer(words))
    found = [m.group(0).strip() for m in matches]
    marked = [m.group(0).strip() for m in matches if _said_before(words, m)]
    old = next((v for v in marked + found if t.number_core(v) in recorded), None)
    if old is None:
        return None
    later = found[found.index(old) + 1:]
    new = next((v for v in later if t.number_kind(v) == t.number_kind(old)
                and t.number_core(v) not in recorded), None)
    return Correction(old=old, new=new, sentence=words) if new else None


def departures(sentence: str, state: SessionState) -> list[Departure]:
    m = _DEPARTED.search(sentence)
    if not m:
        return []
    who = m.group("who")
    people = [s.name for s in state.problem_brief.stakeholders]
    mentioned = [p for p in people if re.search(r"\b" + re.escape(p.split()[0]) + r"\b", sentence)]
    if who.lower() in ("she", "he", "they") and mentioned:
        who = mentioned[0]
    elif who.lower() in ("she", "he", "they"):
        named = [p for p in people if re.match(r"^[A-Z][a-z]+", p) and not t.ROLE_PHRASE.fullmatch(p)]
        if not named:
            return []
        who = named[-1]
    else:
        match = next((p for p in people if p.split()[0].lower() == who.split()[0].lower()), None)
        if match is None:
            return []
        who = match
    successor = _SUCCESSOR.search(sentence)
    replacement = (successor.group("who") or successor.group("who2")) if successor else ""
    if replacement and replacement.split()[0].lower() == who.split()[0].lower():
        replacement = ""
    return [Departure(name=who, replacement=replacement, sentence=sentence)]
