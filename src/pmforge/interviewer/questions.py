"""What the offline interviewer asks next, and how it shows it listened.

Questions come in three kinds, best first: follow-ups built from what the PM just said (their numbers,
names and doubts), the active probe's catalogue questions, and the questions for what the record still
lacks. None is asked twice in a session: a candidate is dropped when it matches an earlier question word for
word or by embedding similarity (`REPEAT_SIMILARITY`), unless the PM asks for the questions again.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from pmforge.core.models import SessionState
from pmforge.core.sentences import sentence_spans
from pmforge.understand import Understanding
from pmforge.understand import text as t
from pmforge.understand.fields import unit_vectors
from pmforge.understand.metrics import measure_name

REPEAT_SIMILARITY = 0.85  # the same question in other words (DESIGN.md, `eval sessions`: questions asked again)
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")
_NUMBERING = re.compile(r"^\s*(?:[-*>]|\d+[.)]|Question \d+:)\s*")
ASK_AGAIN = re.compile(r"\b(?:ask|repeat|say) (?:me )?(?:that|those|the questions?|it) again\b|"
                       r"\bwhat (?:were|was) (?:the|your) questions?\b", re.I)


@lru_cache(maxsize=16384)
def questions_in(reply: str) -> tuple[str, ...]:
    """The questions a reply asked: sentences ending in "?", outside quotes, without markup or numbering.
    Replies never change, so each is read once per process."""
    found = []
    for line in _QUOTED.sub(" ", reply).splitlines():
        line = _NUMBERING.sub("", line).replace("**", "").strip()
        for sentence in (line[s:e] for s, e in sentence_spans(line)):
            if sentence.endswith("?") and len(sentence.split()) >= 4:
                found.append(sentence)
    return tuple(found)


def question_key(question: str) -> str:
    """A question (or any sentence) as compared word for word: lower case, punctuation and spacing gone."""
    return " ".join(re.findall(r"[a-z0-9$%£€.]+", question.lower()))


def asked_before(state: SessionState) -> list[str]:
    found: list[str] = []
    for turn in state.turns:
        found += questions_in(turn.assistant)
    return found


def _parts(question: str) -> list[str]:
    """A catalogue question may be two ("Has this been tried before? What stopped it then?"): each is
    compared on its own, as a PM reads them."""
    parts = [p for p in re.split(r"(?<=[?.])\s+", question.strip()) if len(p.split()) >= 4]
    return parts or [question]


def fresh(candidates: list[str], earlier: list[str], limit: int) -> list[str]:
    """Up to `limit` candidates, in order, none of whose parts repeats an earlier question or another pick."""
    if not candidates:
        return []
    seen = {question_key(q) for q in earlier}
    pool = [q for q in dict.fromkeys(candidates) if not any(question_key(p) in seen for p in _parts(q))]
    if not pool:
        return []
    against = unit_vectors(list(dict.fromkeys(earlier))) if earlier else np.zeros((0, 384), dtype=np.float32)
    chosen: list[str] = []
    for question in pool:
        vectors = unit_vectors(_parts(question))
        if against.size and float((vectors @ against.T).max()) >= REPEAT_SIMILARITY:
            continue
        chosen.append(question)
        against = np.vstack([against, vectors]) if against.size else vectors
        if len(chosen) == limit:
            break
    return chosen


# ---------------------------------------------------------------- follow-ups from what was just said


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".!?")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


_UNIT = re.compile(r"\s*(?:%|percent|(?:minute|hour|day|week|month|year|second|point|store|site|user|customer|"
                   r"call|ticket|order|return|visit|case|job)s?\b)", re.I)


def _with_unit(sentence: str, value: str) -> str:
    """A number as the PM wrote it, with the unit after it ("41 hours", not "41")."""
    at = sentence.find(value)
    unit = _UNIT.match(sentence, at + len(value)) if at >= 0 else None
    return value + unit.group(0) if unit else value


def follow_ups(u: Understanding, state: SessionState, message: str = "") -> list[str]:
    """Questions that pick up the PM's own facts: a number without its target, a target without its
    baseline, a decision-maker's bar, a doubt and how to check it."""
    asks: list[str] = []
    leading_known = bool(state.problem_brief.success_metrics.leading) or any(m.kind == "leading" for m in u.metrics)
    for m in u.metrics:
        name = m.name or "that number"
        if m.kind == "anti":
            continue
        if m.baseline and not m.target:
            asks.append(f"You put {name} at {m.baseline}; what would count as success, and by when?")
        elif m.target and not m.baseline:
            asks.append(f"Where is {name} today, so we know how far {m.target} is?")
        elif m.target and not m.deadline:
            asks.append(f"By when should {name} reach {m.target}?")
        elif m.kind == "lagging" and not leading_known:
            asks.append(f"What would you see within weeks that tells you {name} is on its way to {m.target}?")
    measured = {m.name.lower() for m in u.metrics}
    audience = {f.text for f in u.slot("audience")}
    for sentence in t.sentences(message):
        values = [v for v in t.numbers(sentence) if not re.fullmatch(r"(?:19|20)\d\d", v)]
        name = measure_name(sentence) if values and not sentence.rstrip().endswith("?") else ""
        if not name or name.lower() in measured or len(name.split()) > 5 or t.is_hedged(sentence) \
                or u.corrections or re.match(r"(?:actually|it|its|it's|that|this|there)\b", name.lower()):
            continue  # a correction is acknowledged, not asked about; a pronoun names no measure
        values = [_with_unit(sentence, v) for v in values]
        if sentence in audience:
            asks.append(f"Of those {values[0]}, who would use it first?")
        else:
            asks.append(f"You put the {name[:1].lower() + name[1:] if not name[:2].isupper() else name} at "
                        f"{values[0]}; where would it need to be, and by when, for this to be worth doing?")
    for person in u.people:
        if person.role == "decision_authority":
            asks.append(f"What would {person.name} need to see to say yes?")
        elif person.role == "status_quo_beneficiary":
            asks.append(f"What does {person.name} lose if this changes, and how hard will they push back?")
        elif person.role == "execution_dependency":
            asks.append(f"How much of {person.name}'s day-to-day work would have to change?")
    for hedge in u.hedges:
        claim = _short_claim(hedge.claim)
        if not claim:
            asks.append("What would convince you that this belief holds, or that it doesn't?")
            continue
        if hedge.evidence:
            asks.append(f"Beyond what you mentioned, what is the cheapest way to check that {claim}?")
        else:
            asks.append(f"What would convince you that {claim}, or that it doesn't hold?")
    for correction in u.corrections:
        asks.append(f"Now that it is {correction.new}, does that change how big the problem is?")
    return asks


# ---------------------------------------------------------------- the opening: what Forge understood

# A guardrail's "name" that is really a clause ("I'd say inventory value shouldn't go", "Nothing"): not said back.
_NOT_A_MEASURE = re.compile(r"^(?:i|we|nothing|anything|none)\b|\b(?:should\w*|shouldn'?t|can'?t|cant|cannot|must\w*|"
                            r"won'?t|not|go|goes|going|drop|rise|get|gets)\b", re.I)
CLAIM_WORDS = 12  # a belief said back longer than this reads as the PM's own sentence given back


def _short_claim(claim: str) -> str:
    """A belief in a few words, for a question or the opening: the claim itself when short, else its first
    clause when that stands on its own; "" when only the PM's whole sentence would do (it is not given back)."""
    claim = _lower_first(claim)
    if len(claim.split()) <= CLAIM_WORDS:
        return claim
    first = t.CLAUSE_BREAK.split(claim)[0].strip(" ,")
    return first if 4 <= len(first.split()) <= CLAIM_WORDS else ""


_ROLE_PHRASES = {
    "decision_authority": "{name} has the final say",
    "execution_dependency": "{name} would have to change how they work",
    "status_quo_beneficiary": "{name} does well out of today's way",
    "pain_holder": "{name} feels the pain",
}


def opening(u: Understanding) -> str:
    """One or two short sentences, in Forge's words, on what it took from the message (never a quote)."""
    said: list[str] = []
    for correction in u.corrections[:1]:
        said.append(f"So it is {correction.new} now")
    for m in u.metrics:
        if m.kind == "anti" and _NOT_A_MEASURE.search(m.name or "x"):
            said.append("the guardrail is on record")
        elif m.kind == "anti":
            said.append(f"{m.name} must not get worse")
        elif m.name and m.target:
            to = "" if re.match(r"(?:down|up) to\b|under|below|above|over|at (?:least|most)|less|more|fewer",
                                m.target, re.I) else "to "
            said.append(f"the number to move is {m.name}" + (f", from {m.baseline}" if m.baseline else "")
                        + f" {to}{m.target}" + (f" {m.deadline}" if m.deadline else ""))
        if len(said) >= 2:
            break
    for person in u.people:
        phrase = _ROLE_PHRASES.get(person.role)
        if phrase and len(said) < 2:
            said.append(phrase.format(name=person.name))
    if u.hedges and len(said) < 2:
        claim = _short_claim(u.hedges[0].claim)
        if not claim:
            said.append("what you are not sure of goes in the register as a belief to test")
        else:
            said.append(f"that {claim} is still to be checked" if not said else
                        f"{claim} is a belief to test, not a fact yet")
    if not said:
        return ""
    text = "; ".join(said)
    return text[:1].upper() + text[1:] + "."
