"""What a message asks of Forge as a whole: a statement to take note of, a summary, a write-up, an option
to evaluate, a question about the files or about the method, or a remark about the conversation.

These are closed-class requests ("where are we?", "write up the brief", "let's stress-test X"): rules read
them. What a statement says about the product question is read by the language pipeline (`read`).
"""

from __future__ import annotations

import re

from pmforge.core.models import Mode
from pmforge.understand import nlp
from pmforge.understand import text as t
from pmforge.understand.model import Intent
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
    r"(?:^|[.!?]\s+|\b(?:let'?s|can we|could we|shall we|we should|i want to|i'?d like to|i'?d love to|(?:i|we) (?:should|would) like (?:us )?to|i'?d like us to|help me|"
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

def intent_of(words: str, mode: Mode, filler: bool) -> tuple[Intent, str, str]:
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


_ANY_EVALUATE = re.compile(r"\b" + _EVALUATE_VERB + r"\b\s*(?P<object>[^.?!;]*)", _I)
_ASKER = frozenset({"you", "u", "we", "us"})


_MODALS = frozenset({"can", "could", "would", "will", "shall", "should", "might", "'d", "'ll", "ca", "wo"})
_SOFTENERS = frozenset({"also", "please", "properly", "really", "just", "actually", "now", "then", "kindly"})


def _asked_for(words: str, start: int) -> bool:
    """Whether the evaluation verb at `start` is asked of Forge: an imperative ("stress-test it"), a modal with
    you or we ("can you evaluate", "if you would stress-test it"), or the verb wanted by the PM ("I want you
    to…", "we need to…", "let's…") — not a description ("Procurement evaluated three vendors", "finance wants to
    assess it", "the assessment team"). Read from the tokens before the verb, since the parse often takes a
    hyphenated verb ("stress-test") for a noun."""
    doc = nlp.parse([words])[0]
    first = next((w for w in doc if w.idx >= start), None)
    if first is None:
        return False
    if first.pos_ == "VERB" and first.tag_ in ("VBD", "VBN", "VBG", "VBZ"):
        return False
    before = [w for w in doc[first.sent.start: first.i] if w.lower_ not in _SOFTENERS and w.pos_ != "ADV"]
    if not before or before[-1].is_punct:
        return first.pos_ in ("VERB", "NOUN", "PROPN", "ADJ") and not (first.pos_ == "NOUN" and first.dep_ in (
            "compound", "nsubj") and not first.text.count("-") and first.lower_ not in ("evaluate", "assess"))
    previous = before[-1].lower_
    if previous in _ASKER and len(before) > 1 and before[-2].lower_ in _MODALS:
        return True  # "can you evaluate", "could we assess"
    if previous in _MODALS:
        around = {w.lower_ for w in before[-3:]} | {doc[first.i - 1].lower_}
        return bool(around & _ASKER)
    if previous in ("to", "let's", "lets") or (previous == "us" and len(before) > 1 and before[-2].lower_ == "let"):
        return previous != "to" or bool({w.lower_ for w in before[-4:-1]} & (_ASKER | {"i", "me"}))
    return False


def _named_option(words: str, before: int) -> str:
    """The option a message names for "evaluate it": a product or company name that is called a tool, an idea
    or a company ("Clausewise, an AI clause-review tool"; "it is called Startklaar"), else any such name, else
    a noun phrase with a solution noun — the last one named before the request."""
    doc = nlp.parse([words])[0]
    best: tuple[float, int, str] | None = None
    for chunk in doc.noun_chunks:
        names = [w for w in chunk if w.pos_ == "PROPN" and not w.is_stop and not (w.i == w.sent.start and not w.ent_type_)
                 and w.ent_type_ not in ("PERSON", "DATE", "NORP")]  # a made-up name is often read as a place
        if not names or chunk.start_char >= before:
            continue
        name = doc[names[0].i: names[-1].i + 1].text
        score = 1.0
        head = chunk.root.head
        neighbours = [head] + [c for c in chunk.root.children if c.dep_ == "appos"] + (
            [head.head] if head.dep_ == "prep" else [])  # "loggers from Sonatrace"
        if any(re.fullmatch(_SOLUTION_NOUNS + r"|company|firm|startup|vendor|supplier|kit", n.lower_)
               for n in neighbours if n.i not in range(chunk.start, chunk.end) and n.pos_ in ("NOUN", "PROPN")):
            score += 2.0
        if chunk.start > 0 and doc[chunk.start - 1].lower_ in ("called", "named", "dubbed"):
            score += 2.0
        if re.search(r"[a-z][A-Z]", name) or names[-1].ent_type_ in ("ORG", "PRODUCT"):
            score += 1.0
        candidate = (score, chunk.start, name)
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    if best is not None:
        return best[2]
    named = _NAMED_OPTION.search(words)
    return named.group(0) if named else ""


def evaluation_target(words: str) -> str | None:
    """The option the PM asks to evaluate ("stress-test the Acme idea" → "Acme idea"), "" for an unnamed
    one ("let's evaluate the solution"), None when the PM is not asking for an evaluation."""
    if _MODE_2.search(words):
        m = EVALUATE.search(words)
        return _solution_name(m.group("object")) if m and _SOLUTION_WORDS.search(m.group("object")) else ""
    asked = [m for m in _ANY_EVALUATE.finditer(words) if not EVALUATE.match(words, m.start())
             and _asked_for(words, m.start())]
    for pattern in (SHOULD_WE, EVALUATE, asked):
        for m in (pattern.finditer(words) if isinstance(pattern, re.Pattern) else pattern):
            obj = m.groupdict().get("paced") or m.group("object")
            if re.fullmatch(r"\s*(?:it|this|that|them|this one|that one)\b.*", obj, _I):
                # "poke holes in it": the option is named elsewhere in the message.
                obj = _named_option(words, m.start()) or obj
            if _SOLUTION_WORDS.search(obj) or re.search(r"\b[A-Z][a-z]+", obj) or pattern is SHOULD_WE:
                if re.search(r"\b(?:problem|brief|register|assumptions?|metrics?|stakeholders?|audience|"
                             r"numbers|data we have)\b", obj, _I) and not _SOLUTION_WORDS.search(obj):
                    continue
                return _solution_name(obj)
    return None


def _solution_name(phrase: str) -> str:
    """The noun phrase being evaluated: "a self-service returns portal: the customer picks…" → "self-service
    returns portal"; "Liftwise's predictive module properly" → "Liftwise's predictive module"."""
    generic = re.match(r"\s*(?:(?:one|an?|the|this|that|our)\s+)?(?:option|idea|solution|proposal|thing|one)"
                       r"(?:\s+\w+ly)?\s*:\s*(?P<rest>.+)", phrase, _I)
    if generic:  # "one option specifically: the QuickLight self-install kit"
        phrase = generic.group("rest")
    phrase = re.split(r"\b(?:and see|to see|so we|so that|before|because|since|with me|for me|now|together|"
                      r"properly|a bit|first|in detail|then|from|hard)\b|[,:;—–(]", phrase, maxsplit=1)[0].strip(
        " .?!")
    chunk = _first_noun_phrase(phrase)
    if chunk:
        phrase = chunk
    phrase = re.sub(r"^(?:at\s+|on\s+|in\s+|into\s+|of\s+)?(?:the|our|this|that|a|an|their|your)\s+", "",
                    phrase.strip(), flags=_I)
    phrase = re.sub(r"\s+(?:idea|option|proposal|approach|thing|one)$", "", phrase.strip(), flags=_I) or phrase
    name = t.clip_words(phrase.strip(" .?!"), 8).rstrip(" …")
    return "" if name.lower() in ("solution", "it", "this", "that", "idea", "option", "proposal", "one") else name


def _first_noun_phrase(phrase: str) -> str:
    """The first noun phrase of a request's object, with a possessive owner kept ("Liftwise's module")."""
    if not phrase:
        return ""
    doc = nlp.parse([phrase])[0]
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ == "PRON":
            continue
        start, end = chunk.start, chunk.end
        # The parse sometimes reads a noun as an adjective at the end: "self-service returns portal".
        while end < len(doc) and doc[end].pos_ in ("ADJ", "NOUN", "PROPN") and doc[end].dep_ in (
                "oprd", "compound", "amod", "appos", "ROOT"):
            end += 1
        return doc[start:end].text
    return ""
