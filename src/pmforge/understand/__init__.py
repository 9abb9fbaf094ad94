"""Understanding a PM's message: from ordinary language to typed facts for the session state.

`understand(message, state)` is deterministic, local and fast (rules over sentences; no network).
The offline interviewer acts on its output through the same tools Claude calls; the router reads
its intent (summarise, write the brief, evaluate an option) and the probes the message answers.
Only the PM's own words are understood: pasted material is source text, never the PM's say-so.
"""

from __future__ import annotations

import re
from typing import Literal

from pmforge.core.models import Mode, SessionState
from pmforge.knowledge import MODES, Catalogue
from pmforge.understand import probes as probe_rules
from pmforge.understand import slots
from pmforge.understand import text as t
from pmforge.understand.model import (
    Correction,
    Departure,
    Fact,
    Hedge,
    Intent,
    ProbeAnswer,
    StatusChange,
    Understanding,
)
from pmforge.understand.text import sentences

_I = re.I

SUMMARIZE = re.compile(
    r"\b(?:summari[sz]e|summary (?:so far|of (?:where|what))|recap|where are we|where we are|where do we stand|"
    r"where we'?ve got to|what (?:do )?we have so far|what have we (?:got|covered|established|learned|learnt)|"
    r"play (?:it |that |this )?back|sum (?:it |this |that )?up|catch me up|remind me (?:where|what)|"
    r"what'?s (?:the|our) (?:status|picture)|give me the (?:gist|picture|state of play)|state of play|"
    r"take stock|what do we know so far)\b", _I)
ARTIFACT = re.compile(
    r"(?<!\ba )(?<!\bthe )(?<!\bmy )\b(?:write|draft|generate|export|produce|put together|create|send|share|download|"
    r"make|prepare|give me|print|email|circulate|pull together|spin up|turn (?:this|it) into)\b"
    r"(?:(?!\b(?:of|from|in)\b).){0,40}?\b(?:brief|register|evaluation|one-?pager|write-?up|summary (?:doc|document)|memo)\b"
    r"|\bwrite (?:it|this|that|things) up\b|\bsend (?:it|this|that|the (?:brief|register|evaluation)) (?:over )?to\b"
    r"|\b(?:can i|could i|let me) (?:get|have|download|see) the (?:\w+ )?(?:brief|register|evaluation)\b", _I)
_EVALUATE_VERB = (
    r"(?:evaluate|assess|stress-?test|pressure-?test|poke (?:some |a few )?holes in|kick the (?:tyres|tires) (?:on|of)|"
    r"sanity-?check|look hard at|take a hard look at|have a hard look at|dig into|tear apart|critique|scrutini[sz]e|"
    r"go through the risks (?:of|in)|weigh up|red-?team|test drive|road-?test|look (?:closely|properly|seriously) at|"
    r"put (?P<paced>.{2,60}?) through (?:its|their|the) paces)"
)
# A request, not a description: "let's stress-test X", "can we look hard at X", or the verb opening the sentence.
EVALUATE = re.compile(
    r"(?:^|[.!?]\s+|\b(?:let'?s|can we|could we|shall we|we should|i want to|i'?d like to|i'?d love to|help me|"
    r"time to|need to|want to|please|now)\s+(?:also\s+|properly\s+|actually\s+|just\s+)?)"
    + _EVALUATE_VERB + r"\s*(?P<object>[^.?!;]*)", _I)
SHOULD_WE = re.compile(r"\b(?:should we|do we|would we|are we going to|is it worth it to)\s+(?:actually\s+|really\s+)?"
                       r"(?:build|buy|go with|license|adopt|roll out|launch|use|do)\s+(?P<object>[^.?!;,]+)", _I)
_MODE_2 = re.compile(r"\b(?:mode 2|mode two|evaluate (?:the |a |this |our )?solution|solution evaluation|"
                     r"evaluation mode|move (?:on )?to (?:the )?solution)\b", _I)
_SOLUTION_NOUNS = (r"(?:tool|app|idea|option|proposal|solution|vendor|platform|system|product|approach|feature|"
                   r"assistant|bot|chatbot|model|engine|scheduler|auto-?\w+|dashboard|portal|service|integration|"
                   r"pitch|concept|device|module|add-?on|plugin|widget|workflow)s?")
_SOLUTION_WORDS = re.compile(r"\b(?:" + _SOLUTION_NOUNS + r"|plan|pilot|build|partner|offer)\b", _I)
_NAMED_OPTION = re.compile(r"\b(?:(?:the|our|this|that)\s+|[A-Z][\w'’]+(?:\s+[A-Z][\w'’]+)*\s+)(?:[\w'’-]+\s+){0,2}?"
                           + _SOLUTION_NOUNS + r"\b|\b[A-Z][a-z]+[A-Z]\w+\b")
_WRAP_UP = re.compile(r"\b(?:wrap(?:ping)? (?:it |this |things |that )?up|let'?s (?:call|mark) (?:it|this) (?:done|"
                      r"complete)|we'?re done with (?:mode|the problem|discovery)|close out (?:mode|this)|"
                      r"move (?:on )?to mode 2|next mode)\b", _I)
_DOC_QUESTION = re.compile(
    r"\b(?:according to|in the (?:doc|document|file|report|research|notes|deck|spreadsheet|survey|interviews?|"
    r"transcripts?|memo|study|analysis|findings|pdf|upload)|what (?:does|did) (?:the|our|that|this) \w+ (?:say|show|"
    r"tell)|(?:the|our) (?:doc|document|file|report|research|notes|deck|survey|interviews?|data|study|findings|"
    r"analysis) (?:say|says|show|shows|said|showed|mention|found|find)|does (?:the|our) \w+ (?:say|show|mention)|"
    r"remind me what (?:the|our)|look (?:it )?up|check the (?:doc|file|report|research|notes))\b", _I)
_METHOD_QUESTION = re.compile(
    r"\b(?:what do you mean|what(?:'s| is| are) (?:an? |the )?(?:anti-?metric|leading (?:indicator|metric)|"
    r"lagging (?:indicator|metric)|probe|assumption register|decision criteri\w*|value hypothesis|mode [12]|"
    r"status quo beneficiar\w*|edge mapping|stakeholder map\w*)|why do you (?:ask|need|want)|why does that matter|"
    r"how do i answer)\b", _I)
# "What does X mean?" and "explain X" ask about Forge's method only when X is one of its words ("what does
# anti-metric mean"); "what does DSD mean here?" asks about the PM's files.
_TERM_QUESTION = re.compile(r"\b(?:what does .{1,30} mean|explain (?:what|the|that)|can you explain)\b", _I)
# The words of the session and of the method itself. A message whose content words are all among them
# ("where are we?", "write up the brief", "what's a leading metric?") needs no search; one that names
# anything else ("summarise what the vendor said about pricing") does.
SESSION_TERMS = t.content_terms(
    "summarize summarise summary summaries recap status picture stand far covered established learned learnt "
    "play back sum catch remind gist state stock know knows known brief briefs register evaluation evaluate "
    "problem solution assumption assumptions probe probes mode modes metric metrics anti-metric anti-metrics "
    "leading lagging indicator indicators criteria criterion decision hypothesis value stakeholder stakeholders "
    "map mapping edge edges beneficiary beneficiaries status-quo quo write draft generate export produce "
    "create send share download prepare print email circulate pull together spin turn one-pager write-up "
    "wrap wrapping call mark done complete close move next explain mean means meant answer answering "
    "question questions ask asking asked need want matter matters thing things point far session "
    "discussed talked said say saying let's lets go going okay please thanks good great doc document "
    "everything anything something stuff give show make doing decide decided agree agreed sure "
    "we've we're what's that's it's i'm you're let's there's here's where's how's")


def speaks_beyond_session(words: str) -> bool:
    """Whether the message names something other than the session and the method (then files may answer)."""
    return bool(t.content_terms(words) - SESSION_TERMS)
_CORRECTION = re.compile(
    r"\b(?:actually|scratch that|correction|i misspoke|sorry,? (?:i meant|it'?s|that'?s|the|no)|i meant|"
    r"let me correct|to correct|rather than|instead of|update:|updated|revised|is now|are now|it'?s now|"
    r"now (?:it'?s|at|down to|up to|closer to)|changed to|has changed|have changed|turns out|turned out|"
    r"i was wrong|that was wrong|wrong,|not quite|no wait|wait,? no|my mistake|my bad|typo|to be precise|"
    r"more like|closer to|nope|misread|misremember\w*|mis-?typed|mistyped|i'?d pulled|wrong (?:report|number|"
    r"figure|dashboard|tab|sheet)|scratch the|got (?:it|that) wrong|should have said|fix something|"
    r"correct a number)\b"
    r"|" + t.NUMBER.pattern + r",?\s+not\s+" + t.NUMBER.pattern, _I)
_OLD_MARK = re.compile(r"(?:\bnot|\binstead of|\brather than|\bwas|\bwere|\bfrom|\bsaid|\bthought|\bearlier|"
                       r"\bpreviously|\bnot the|\bscratch(?: that)?(?: the)?)\s*(?:the\s+|a\s+|an\s+|it'?s\s+|"
                       r"it was\s+)?$", _I)
_PHRASE_SWAP = [
    re.compile(r"\b(?:it'?s|it is|they'?re|they are|that'?s|that is|is|are|was|were)\s+(?:our\s+|the\s+|an?\s+)?"
               r"(?P<new>[\w£$€%.,' -]{2,50}?),?\s+not\s+(?:the\s+|our\s+|an?\s+)?(?P<old>[\w£$€%.' -]{2,50}?)"
               r"(?:\s+[—–-]|[.,;!]|$)", _I),
    re.compile(r"\bnot\s+(?:the\s+)?(?P<old>[\w£$€%.' -]{2,50}?)\s*[,;—–-]+\s*(?:but|it'?s|it is|they'?re|rather)\s+"
               r"(?:the\s+)?(?P<new>[\w£$€%.' -]{2,50}?)(?:[.,;!]|$)", _I),
]
_DEPARTED = re.compile(
    r"\b(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?|she|he|they)\s+(?:has |have |just |recently )*(?:moved teams|moved on|"
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


def _intent(words: str, mode: Mode, filler: bool) -> tuple[Intent, str, str]:
    """(intent, artifact kind, solution name) for the message as a whole."""
    if filler:
        return "filler", "", ""
    lowered = words.lower()
    if ARTIFACT.search(words):
        if re.search(r"\bregister\b|\bassumptions?\b", lowered) and not re.search(r"\bbrief\b", lowered):
            kind = "assumption_register"
        elif re.search(r"\bproblem\b", lowered):
            kind = "problem_brief"
        elif re.search(r"\b(?:evaluation|solution|risks?)\b", lowered) or mode == "mode_2":
            kind = "solution_evaluation"
        else:
            kind = "problem_brief"
        return "artifact", kind, ""
    if mode == "mode_1":
        name = evaluation_target(words)
        if name is not None:
            return "evaluate", "", name
    if _WRAP_UP.search(words):
        return "wrap_up", "", ""
    if SUMMARIZE.search(words):
        return "summarize", "", ""
    questions = [s for s in sentences(words) if s.rstrip().endswith("?")]
    if questions and len(questions) * 2 >= len(sentences(words)):
        if _METHOD_QUESTION.search(words) or (_TERM_QUESTION.search(words) and not speaks_beyond_session(words)):
            return "question_method", "", ""
        return "question_files", "", ""
    if _DOC_QUESTION.search(words) and "?" in words:
        return "question_files", "", ""
    if all(t.is_meta(s) for s in sentences(words)):
        return "meta", "", ""
    return "statement", "", ""


def evaluation_target(words: str) -> str | None:
    """The option the PM asks to evaluate ("stress-test the Acme idea" → "Acme idea"), "" for an unnamed
    one ("let's evaluate the solution"), None when the PM is not asking for an evaluation."""
    if _MODE_2.search(words):
        m = EVALUATE.search(words)
        return _solution_name(m.group("object")) if m and _SOLUTION_WORDS.search(m.group("object")) else ""
    for pattern in (SHOULD_WE, EVALUATE):
        for m in pattern.finditer(words):
            obj = m.groupdict().get("paced") or m.group("object")
            if re.fullmatch(r"\s*(?:it|this|that|them)\b.*", obj, _I):
                # "poke holes in it": the option is named elsewhere in the message.
                named = _NAMED_OPTION.search(words)
                obj = named.group(0) if named else obj
            if _SOLUTION_WORDS.search(obj) or re.search(r"\b[A-Z][a-z]+", obj) or pattern is SHOULD_WE:
                if re.search(r"\b(?:problem|brief|register|assumptions?|metrics?|stakeholders?|audience|"
                             r"numbers|data we have)\b", obj, _I) and not _SOLUTION_WORDS.search(obj):
                    continue
                return _solution_name(obj)
    return None


def _solution_name(phrase: str) -> str:
    phrase = re.split(r"\b(?:and see|to see|so we|so that|before|because|since|with me|for me|now|together|"
                      r"properly|a bit|first|in detail|then)\b|[,—–(]", phrase, maxsplit=1)[0]
    phrase = re.sub(r"^(?:at\s+|on\s+|in\s+|into\s+|of\s+)?(?:the|our|this|that|a|an|their|your)\s+", "",
                    phrase.strip(), flags=_I)
    phrase = re.sub(r"\s+(?:idea|option|proposal|approach|thing|one)$", "", phrase.strip(), flags=_I) or phrase
    name = t.clip_words(phrase.strip(" .?!"), 8).rstrip(" …")
    return "" if name.lower() in ("solution", "it", "this", "that", "idea", "option", "proposal", "one") else name


def _assumption_type(sentence: str) -> str:
    return next((kind for kind, pattern in _TYPE_HINTS if pattern.search(sentence)), "organisational")


def _hedge(sentence: str) -> Hedge | None:
    if sentence.rstrip().endswith("?") or not t.is_hedged(sentence):
        return None
    claim = t.claim_without_hedge(sentence)
    if len(claim.split()) < 4 or t.is_meta(claim):
        return None
    return Hedge(claim=t.clip_words(claim, 60), sentence=sentence, type=_assumption_type(sentence),
                 impact="high" if _HIGH_IMPACT.search(sentence) else "medium")


def _status_changes(sentence: str, state: SessionState) -> list[StatusChange]:
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


def _brief_strings(state: SessionState) -> list[str]:
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


def _corrections(sentence: str, state: SessionState, earlier: list[str]) -> list[Correction]:
    if not _CORRECTION.search(sentence):
        return []
    found = list(t.NUMBER.finditer(sentence))
    olds = [m for m in found if _OLD_MARK.search(sentence[max(0, m.start() - 20): m.start()])]
    news = [m for m in found if m not in olds]
    corrections = []
    if olds and news:
        return [Correction(old=olds[0].group(0).strip(), new=news[0].group(0).strip(), sentence=sentence)]
    if news:
        # The old value is whatever number of the same kind sits in the record next to the same words.
        new = news[0].group(0).strip()
        kind = t.number_kind(new)
        best: tuple[float, str] = (0.0, "")
        for text in earlier:
            shared = t.overlap(sentence, text)
            for m in t.NUMBER.finditer(text):
                value = m.group(0).strip()
                if t.number_kind(value) == kind and t.number_core(value) != t.number_core(new) and shared > best[0]:
                    best = (shared, value)
        if best[1] and best[0] >= 0.2:
            corrections.append(Correction(old=best[1], new=new, sentence=sentence))
        return corrections
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


def _departures(sentence: str, state: SessionState) -> list[Departure]:
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


def _sentence_facts(sentence: str, mode: str) -> list[Fact]:
    facts: list[Fact] = []
    if slots.ORG.search(sentence):
        facts.append(Fact(slot="org_context", text=sentence.strip()))
    measures = slots.metric_facts(sentence) + slots.criteria_facts(sentence)
    # A target or a stop line is not the problem itself, unless the PM says it is.
    aims = any(m.slot != "metric_lagging" for m in measures) or bool(measures and slots.GOAL.search(sentence))
    if slots.is_problem(sentence) and (not aims or slots.PROBLEM_EXPLICIT.search(sentence)) \
            and not sentence.lower().startswith(("if ", "unless ")):
        facts.append(Fact(slot="problem", text=t.tidy(sentence)))
    if slots.is_audience(sentence):
        facts.append(Fact(slot="audience", text=t.tidy(sentence)))
    facts += slots.stakeholder_facts(sentence)
    facts += measures
    if slots.is_solution(sentence):
        facts.append(Fact(slot="solution", text=t.tidy(sentence)))
    if mode == "mode_2":
        facts += slots.risk_facts(sentence)
        facts += slots.build_buy_facts(sentence)
        facts += slots.validation_facts(sentence)
    return facts


def understand(words: str, state: SessionState, mode: Mode | None = None, filler: bool = False, *,
               catalogue: Catalogue) -> Understanding:
    """What the PM's own words this turn say, for the state as it stands. `words` excludes pastes; the
    probes a message can answer are the `catalogue`'s."""
    return _understand(words, state, mode or state.active_mode, filler, catalogue, _state_key(state))


def _state_key(state: SessionState) -> tuple:
    # Understanding reads the register, the stakeholders and the brief; a cached result is valid while they stay.
    return (state.turn_count, len(state.assumptions), len(state.problem_brief.stakeholders),
            state.problem_brief.problem_statement[:40], id(state))


_CACHE: dict[tuple, Understanding] = {}


def _understand(words: str, state: SessionState, mode: Mode, filler: bool, catalogue: Catalogue,
                key: tuple) -> Understanding:
    cache_key = (words, mode, filler, tuple(catalogue.order(m) for m in MODES), key)
    if cache_key in _CACHE:
        return _CACHE[cache_key].model_copy(deep=True)
    result = _read(words, state, mode, filler, catalogue)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[cache_key] = result
    return result.model_copy(deep=True)


def _read(words: str, state: SessionState, mode: Mode, filler: bool, catalogue: Catalogue) -> Understanding:
    intent, artifact_kind, solution_name = _intent(words, mode, filler)
    result = Understanding(intent=intent, artifact_kind=artifact_kind, solution_name=solution_name)
    if intent in ("filler", "meta") or not words.strip():
        return result
    all_sentences = sentences(words)
    questions = [s for s in all_sentences if s.rstrip().endswith("?")]
    result.question = " ".join(questions)
    effective_mode: Mode = "mode_2" if intent == "evaluate" else mode
    earlier = _brief_strings(state)
    facts_by_sentence: list[list[Fact]] = []
    for sentence in all_sentences:
        asks_evaluation = intent == "evaluate" and evaluation_target(sentence) is not None
        if sentence.rstrip().endswith("?") or t.is_meta(sentence) or intent in ("summarize", "artifact"):
            facts_by_sentence.append([])
            continue
        hedge = _hedge(sentence)
        if hedge:
            result.hedges.append(hedge)
        result.status_changes += _status_changes(sentence, state)
        corrections = _corrections(sentence, state, earlier)
        result.corrections += corrections
        result.departures += _departures(sentence, state)
        # A correction restates an old fact; it fixes the record instead of adding to it.
        facts = [] if corrections else _sentence_facts(sentence, effective_mode)
        if asks_evaluation:
            # The request names the option and often describes it; it is not yet evidence about it.
            facts = [f for f in facts if f.slot in ("stakeholder", "audience", "problem")]
            facts.append(Fact(slot="solution", text=t.tidy(sentence)))
        facts_by_sentence.append(facts)
        result.facts += facts
    if intent == "evaluate":
        result.facts = [f for f in result.facts if f.slot not in ("problem",)] or result.facts
    candidates = list(catalogue.order(effective_mode))
    result.probes = probe_rules.classify(all_sentences, facts_by_sentence, candidates)
    return result


def filled_slots(state: SessionState, u: Understanding) -> set[str]:
    """The skeleton slots that have content once this message is taken into account."""
    brief, metrics, evaluation = state.problem_brief, state.problem_brief.success_metrics, state.solution_evaluation
    have: set[str] = {f.slot for f in u.facts}
    for slot, present in (("metric_leading", metrics.leading), ("metric_lagging", metrics.lagging),
                          ("metric_anti", metrics.anti_metrics),
                          ("do_not_proceed_if", brief.decision_criteria.do_not_proceed_if),
                          ("proceed_if", brief.decision_criteria.proceed_if), ("problem", brief.problem_statement),
                          ("audience", brief.target_audience),
                          ("build_vs_buy", evaluation.build_vs_buy.recommendation != "undecided"),
                          ("validation", evaluation.validation_plan.approach)):
        if present:
            have.add(slot)
    if any(s.role == "decision_authority" for s in brief.stakeholders) or any(
            f.slot == "stakeholder" and f.detail.startswith("decision_authority") for f in u.facts):
        have.add("decision_authority")
    for dim in ("value", "usability", "feasibility", "viability"):
        if getattr(evaluation, f"{dim}_risk").level != "unknown":
            have.add(f"{dim}_risk")
    return have


__all__ = ["Correction", "Departure", "Fact", "Hedge", "ProbeAnswer", "StatusChange", "Understanding",
           "evaluation_target", "filled_slots", "sentences", "understand"]
