"""Reading one message: sentences → parse → learned field labels → structured records.

For each statement the PM typed, spaCy's parse gives entities, noun phrases and dependency heads; the learned
classifier (`fields`) says which fields of the brief the sentence speaks to, or abstains; then each field's
reader turns the sentence into a record: a metric with its baseline, target and deadline; a decision criterion
with its polarity; an assumption's clean claim with its evidence apart; the people, roles and teams it names.
Rules stay where rules are right: numbers, money, dates, corrections, hedges, and the request a message makes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pmforge.core.models import Mode, SessionState
from pmforge.knowledge import Catalogue
from pmforge.understand import changes, claims, fields, metrics, nlp, people, scoring
from pmforge.understand import probes as probe_rules
from pmforge.understand import text as t
from pmforge.understand.intent import evaluation_target, intent_of
from pmforge.understand.model import Fact, Hedge, Metric, Person, Slot, Understanding
from pmforge.understand.text import sentences

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_I = re.I
# Labels that file a sentence under a field of the problem brief, in either mode.
_BRIEF_SLOTS: dict[str, Slot] = {
    "problem": "problem", "audience": "audience", "why_now": "why_now", "tried_before": "tried_before",
    "out_of_scope": "out_of_scope", "day_one": "day_one", "dependencies": "dependencies", "platform": "platform",
    "org_context": "org_context",
}
# Labels that feed the solution evaluation, read only once an option is being evaluated.
_EVALUATION_SLOTS: dict[str, Slot] = {
    "value_risk": "value_risk", "usability_risk": "usability_risk", "feasibility_risk": "feasibility_risk",
    "viability_risk": "viability_risk", "build_vs_buy": "build_vs_buy", "validation": "validation",
}
MAX_FIELDS_PER_SENTENCE = 2  # a sentence filed in three places is filed in at least one wrong one
# The fields a sentence can fill before any option is evaluated, and how likely the best of them must be to
# take a sentence the classifier read as evaluation evidence.
_MODE_1_LABELS = (*_BRIEF_SLOTS, "metric_leading", "metric_lagging", "anti_metric", "proceed_if", "do_not_proceed_if")
MODE_1_FLOOR = 0.2

_STOP_WORDS = re.compile(
    r"\b(?:kill|stop|scrap|shelve|abandon|pull the plug|walk away|drop (?:it|this|the)|no[- ]go|pause|halt|"
    r"shut (?:it|this) down|bin it|call it off|back out|rethink|deal-?breaker|red line|show-?stopper)\b", _I)
_NEGATED_GO = re.compile(
    r"\b(?:don'?t|do not|won'?t|will not|wouldn'?t|would not|shouldn'?t|should not|not|never|no)\s+(?:\w+\s+){0,2}?"
    r"(?:go ahead|proceed|roll (?:it )?out|launch|scale|expand|continue|fund|build|buy|sign|move forward|"
    r"go live|bother)\b", _I)
_UNLESS = re.compile(r"\bunless\b", _I)
_STATED_LEVEL = re.compile(
    r"\b(?:(low|medium|moderate|high|huge|big|biggest|major|minor|small|massive|serious|main|top|real)(?:est)?[- ]"
    r"(?:\w+[- ])?risk|risk (?:is|looks|seems|feels|is probably|would be) (?:pretty |quite |very |fairly |really )?"
    r"(low|medium|moderate|high|small|big|huge|minimal|manageable|serious|limited|significant)|"
    r"\b(?:rate|rated|rating|call|put|score|scored|see)\s+(?:the\s+|it\s+|this\s+|that\s+)?(?:\w+\s+)?(?:risk\s+)?"
    r"(?:as\s+|at\s+)?(low|medium|moderate|high)|risk\s*[:—–-]\s*(low|medium|moderate|high))\b", _I)
_LEVEL_WORDS = {"low": "low", "minor": "low", "small": "low", "minimal": "low", "manageable": "low", "limited": "low",
                "medium": "medium", "moderate": "medium", "high": "high", "huge": "high", "big": "high",
                "biggest": "high", "major": "high", "massive": "high", "serious": "high", "main": "high",
                "top": "high", "real": "high", "significant": "high"}
# Evidence that cuts against an option: doubts, obstacles, costs, failures. Read on the parse's negations
# too, so "they don't use the app" is against and "they already use the app" is for.
_AGAINST = re.compile(
    r"\b(?:tiny|cramped|fiddly|too small|worr\w*|concern\w*|risk\w*|problem\w*|issue\w*|hard|difficult|doubt\w*|fail\w*|expensive|costly|slow|"
    r"messy|dirty|missing|gaps?|unclear|unknown|blocker\w*|push(?:ed)? back|hate\w*|resist\w*|struggl\w*|"
    r"confus\w*|clunky|complicated|legacy|ignore\w*|overrid\w*|nobody|no one|only \d|too (?:much|many|long|slow|"
    r"hard|expensive)|brittle|flaky|manual|nervous|sceptic\w*|skeptic\w*|lock-?in|veto|complain\w*|tight|"
    r"stretch\w*|can'?t|cannot|won'?t|wouldn'?t|isn'?t|aren'?t|doesn'?t|don'?t|didn'?t|never|lack\w*|"
    r"no (?:api|budget|data|one|way|time))\b", _I)
_FOR = re.compile(
    r"\b(?:already|proven|works? (?:well|fine)|easy|easily|cheap|affordable|have the data|exists|tested well|"
    r"liked|loved|love|asked for|willing|fits|compatible|supports?|ready|in place|good|great|strong|solid|"
    r"confident|clean|reliable|accurate|fast|quick|simple|signed off|approved|on board|keen|excited|"
    r"enthusiastic|validated|proved|beats?|outperform\w*|saves?|saving|demand|waitlist|sign-?ups?|pre-?orders?)\b",
    _I)
_RECOMMEND = [
    ("build", re.compile(r"\b(?:we should|i'?d|i would|let'?s|lean(?:ing)? (?:towards?|to)|prefer|recommend|go with|"
                         r"better to|makes sense to)\s+(?:\w+\s)?(?:build\w*|make it|roll our own|do it in-?house)"
                         r"|\bbuild(?:ing)? (?:it )?(?:in-?house|ourselves) (?:is|makes|wins|seems)", _I)),
    ("buy", re.compile(r"\b(?:we should|i'?d|i would|let'?s|lean(?:ing)? (?:towards?|to)|prefer|recommend|better to|"
                       r"makes sense to)\s+(?:\w+\s)?(?:buy\w*|licen[cs]\w*|go with the vendor|use the vendor|"
                       r"go with [A-Z]\w+|buy off the shelf)|\bbuying (?:is|makes|wins|seems)", _I)),
    ("partner", re.compile(r"\b(?:we should|i'?d|i would|let'?s|lean(?:ing)? (?:towards?|to)|prefer|recommend|"
                           r"better to|makes sense to)\s+(?:\w+\s)?partner\w*|\bpartnering (?:is|makes|wins|seems)",
                           _I)),
]
_APPROACHES = ("concierge", "fake door", "wizard of oz", "a/b test", "pilot", "trial", "prototype test", "smoke test",
               "shadow mode", "experiment", "proof of concept", "beta", "soft launch", "spike")
_HIGH_IMPACT = re.compile(r"\b(?:whole|entire|everything|the (?:business )?case|won'?t work|dead|kill|critical|"
                          r"key|main|biggest|crucial|must|only if|depends on)\b", _I)


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
    # The probes as their files say now (frozen values: their order and what answers each are in the key).
    cache_key = (words, mode, filler, catalogue.probes, key)
    if cache_key in _CACHE:
        return _CACHE[cache_key].model_copy(deep=True)
    result = read(words, state, mode, filler, catalogue)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[cache_key] = result
    return result.model_copy(deep=True)


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


def read(words: str, state: SessionState, mode: Mode, filler: bool, catalogue: Catalogue) -> Understanding:
    intent, artifact_kind, solution_name = intent_of(words, mode, filler)
    result = Understanding(intent=intent, artifact_kind=artifact_kind, solution_name=solution_name)
    if intent in ("filler", "meta") or not words.strip():
        return result
    all_sentences = sentences(words)
    result.question = " ".join(s for s in all_sentences if s.rstrip().endswith("?"))
    effective_mode: Mode = "mode_2" if intent == "evaluate" else mode
    statements = [s for s in all_sentences
                  if not (s.rstrip().endswith("?") or t.is_meta(s) or intent in ("summarize", "artifact"))]
    docs = nlp.parse(statements) if statements else []
    headings = [heading_label(s) for s in statements]
    readings = fields.read(statements, docs, expected=_expected_labels(state, effective_mode, catalogue),
                           headed=_headed(statements, headings))
    earlier = changes.recorded_strings(state)
    known_options = _known_options(state)
    facts_by_sentence: dict[str, list[Fact]] = {}
    marked = changes.says_correction(words)
    each_correction = [changes.corrections(sentence, state, earlier, marked) for sentence in statements]
    whole = None if any(each_correction) else changes.message_correction(statements, earlier)
    if whole is not None:  # the old figure in one sentence, the new one in another
        each_correction = [[whole] if t.NUMBER.search(s) and (whole.old in s or whole.new in s) else []
                           for s in statements]
        result.corrections.append(whole)
    for sentence, doc, reading, found, heading in zip(statements, docs, readings, each_correction, headings):
        hedge = _hedge(sentence, doc)
        if hedge:
            result.hedges.append(hedge)
        result.status_changes += changes.status_changes(sentence, state)
        if whole is None:
            result.corrections += found
        result.departures += changes.departures(sentence, state)
        result.options += [o for o in _options_named(doc, known_options) if o not in result.options]
        # A correction fixes the record (correct_fact): its people would come back with the old value as a note.
        # The parse's people are read once per sentence: for the stakeholder filter, for who hurts, for a count.
        mentioned = [] if found else people.candidates(doc, known_options | {o.lower() for o in result.options})
        mentions = scoring.stakeholders_among(mentioned, doc)
        result.people += [Person(name=m.name, kind=m.kind, role=m.role_type, title=m.title,
                                 affiliation=m.affiliation, note=m.note, sentence=sentence) for m in mentions]
        if found or heading or (marked and changes.withdraws_figure(sentence)):
            # a correction fixes the record; a heading only names a field; a figure taken back is no fact
            facts_by_sentence[sentence] = []
            continue
        facts, found_metrics = _facts(sentence, doc, reading, effective_mode, hedge is not None, mentioned)
        if intent == "evaluate" and evaluation_target(sentence) is not None:
            # The request names the option and often describes it; it is not yet evidence about it.
            facts = [f for f in facts if f.slot in ("audience", "problem")]
            facts.append(Fact(slot="solution", text=t.tidy(sentence), score=1.0))
            found_metrics = []
        if not state.problem_brief.target_audience and any(f.slot == "problem" for f in facts) \
                and not any(f.slot == "audience" for f in facts):
            facts += _who_hurts(doc, mentioned)
        facts_by_sentence[sentence] = facts
        result.facts += facts
        result.metrics += found_metrics
    pm = _introduced_self(words)
    result.people = [p for p in result.people if p.name.split()[0] not in pm]
    if intent == "evaluate":
        result.facts = [f for f in result.facts if f.slot != "problem"] or result.facts
    result.probes = probe_rules.classify(statements, [facts_by_sentence.get(s, []) for s in statements],
                                         _answered_by(catalogue, effective_mode), result.people,
                                         [r for r in readings])
    return result


# Pronouns and words for everyone or for ourselves: the subject of a pain, but no one to design for.
_NOT_AN_AUDIENCE = frozenset("we i you it they this that team company business product people everyone everybody "
                             "anyone anybody someone somebody nobody folks".split())


def _noun_phrase(head: "Token") -> str:
    """The subject as one unbroken phrase: from its first word to its head, then what modifies it up to the
    first comma or clause ("English teacher with 5 sections", never "founder in the study a food")."""
    words = [w for w in head.subtree if w.i <= head.i]
    for w in head.subtree:
        if w.i <= head.i:
            continue
        if w.is_punct or w.dep_ in ("relcl", "acl", "appos", "cc", "conj") or w.i > head.i + 6:
            break
        words.append(w)
    return " ".join(w.text for w in words).strip()


def _who_hurts(doc: "Doc", mentioned: list[people.Mention]) -> list[Fact]:
    """Until the PM names the audience, the people a problem sentence says are hurting are it: the role or
    group that is the subject of the pain ("an English teacher with 5 sections gets like 150 essays")."""
    for mention in mentioned:
        if mention.kind not in ("role", "team"):
            continue
        # The subject of the sentence's own statement, not of a clause joined on with "and" ("…and our fleet
        # director wants to buy a system" says who asks, not who hurts).
        heads = [doc[i] for i in sorted(mention.tokens) if doc[i].dep_ in ("nsubj", "nsubjpass")
                 and doc[i].head.dep_ != "conj"]
        if not heads or heads[0].lemma_.lower() in _NOT_AN_AUDIENCE:
            continue
        head = heads[0]
        phrase = _noun_phrase(head)
        phrase = re.sub(r"^(?:our|their|the|an?|one|most|many|some|all)\s+", "", phrase, flags=re.I)
        if 1 <= len(phrase.split()) <= 10:
            return [Fact(slot="audience", text=t.capitalise(phrase) + ".", subject=mention.name, score=0.5)]
    return []


def _answered_by(catalogue: Catalogue, mode: Mode) -> dict[str, tuple[str, ...]]:
    """What answers each probe of the mode, as its catalogue file says."""
    return {probe.id: probe.answered_by for probe in map(catalogue.find_probe, catalogue.order(mode)) if probe}


def _expected_labels(state: SessionState, mode: Mode, catalogue: Catalogue) -> tuple[str, ...]:
    """The fields that would answer the probe Forge pursued last (what the PM is most likely answering)."""
    if state.active_mode != mode or not state.active_probe:
        return ()
    probe = catalogue.find_probe(state.active_probe)
    slots = probe.answered_by if probe else ()
    return tuple({"metric_anti": "anti_metric"}.get(slot, slot) for slot in slots)


# ---------------------------------------------------------------- each field's reader


# A sentence the PM opens with a field's name and a colon ("Lagging: …", "Why now: …") is filed there.
_FIELD_NAMES = {
    "problem": ("problem", "the problem", "pain"), "audience": ("audience", "users", "target users", "who"),
    "why_now": ("why now", "trigger"), "tried_before": ("tried before", "history"),
    "out_of_scope": ("out of scope", "not in scope", "scope"), "day_one": ("day one", "day 1", "v1", "mvp"),
    "dependencies": ("dependencies", "dependency", "upstream", "downstream", "adjacent", "deps"), "metric_leading": ("leading", "leading indicator"),
    "metric_lagging": ("lagging", "outcome", "north star"), "anti_metric": ("guardrail", "guardrails", "anti-metric"),
    "value_risk": ("value", "value risk"), "usability_risk": ("usability", "usability risk"),
    "feasibility_risk": ("feasibility", "feasibility risk"), "viability_risk": ("viability", "viability risk"),
    "build_vs_buy": ("build vs buy", "build or buy", "build/buy"), "validation": ("validation", "test", "pilot"),
}
_NAMED_FIELD = re.compile(r"^\s*(" + "|".join(sorted((re.escape(w) for words in _FIELD_NAMES.values()
                                                        for w in words), key=len, reverse=True)) + r")\s*[:—–]\s",
                          re.I)

# A line that only names a field ("**Evidence**", "Why now.", "Guardrails then:") heads the sentences after it.
_HEADING_NAMES = {**{w: label for label, words in _FIELD_NAMES.items() for w in words if w not in ("who", "test",
                                                                                                  "value", "history")},
                  "evidence": "problem", "who feels it": "audience", "who gets hurt": "audience",
                  "who it hurts": "audience", "who is affected": "audience", "users affected": "audience",
                  "go/no-go": "do_not_proceed_if", "go / no-go": "do_not_proceed_if", "kill criteria": "do_not_proceed_if",
                  "how we test it": "validation", "how we'd test it": "validation", "build, buy or partner":
                  "build_vs_buy", "build buy or partner": "build_vs_buy", "success": "metric_lagging",
                  "what we tried": "tried_before", "what we tried before": "tried_before", "stakeholders": "stakeholder"}
_HEADING_FILLER = re.compile(r"^(?:(?:ok|okay|so|now|and|right|here'?s|here is|then)\s+)*(?:the\s+|our\s+)?|"
                             r"(?:\s+(?:then|now|first|next|next up|quickly|super important|for me))+$", re.I)


def heading_label(sentence: str) -> str | None:
    """The field a sentence names when it is only a heading: "**Problem**", "Here's the problem.", "Day one."."""
    words = re.sub(r"[*_#>`]+", "", sentence).strip().rstrip(".:!—–-").strip().lower()
    if len(words.split()) > 5:
        return None
    return _HEADING_NAMES.get(words) or _HEADING_NAMES.get(_HEADING_FILLER.sub("", words).strip(" ,"))


_SELF_INTRO = re.compile(
    r"\b(?:i'?m|i am|my name is|name'?s)\s+(?P<a>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?\b(?!['’]s|\s+(?:team|group|office))"
    r"|^\W*(?P<b>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?\s*(?:here\b|[.,—–-]+\s*(?:(?:i'?m|i am)\s+(?:a|the)\s+)?(?:senior\s+)?"
    r"(?:pm|product manager|product lead|product owner|head of product)\b)", re.I)


def _introduced_self(words: str) -> set[str]:
    """The first name the PM introduces themselves by ("Rick Delaney. PM at Hallbrook", "Hi, I'm Ana from the
    payments team"): the PM is the one talking, not a stakeholder of their own brief."""
    return {m.group("a") or m.group("b") for m in _SELF_INTRO.finditer(words)
            if (m.group("a") or m.group("b"))[:1].isupper()} - {"Not", "Sure", "Sorry", "Afraid", "Happy", "Glad"}


def _headed(statements: list[str], headings: list[str | None]) -> list[str | None]:
    """Per sentence, the field the last heading above it names, within one message (`headings`: what each
    sentence names when it is a heading itself)."""
    out: list[str | None] = []
    current: str | None = None
    for sentence, label in zip(statements, headings):
        out.append(None if label else current)
        named = _NAMED_FIELD.match(sentence)  # "Why now: …" heads what follows it, as a bare heading does
        if named and not label:
            label = next(lab for lab, word in _FIELD_NAMES.items() if named.group(1).lower() in word)
        current = label or current
    return out


_NAMED_PROBLEM = re.compile(r"^\s*(?:so\s+|well\s+|basically\s+)?(?:the|our|my)\s+(?:real\s+|main\s+|core\s+|actual\s+|"
                            r"biggest\s+|underlying\s+)?problem\s+(?:is|here is|we have is)\b", re.I)


def _facts(sentence: str, doc: "Doc", reading: fields.Reading, mode: Mode, hedged: bool,
           mentioned: list[people.Mention]) -> tuple[list[Fact], list[Metric]]:
    """The records one classified sentence yields (`mentioned`: the people the parse finds in it)."""
    labels = sorted(reading.labels, key=lambda label: -reading.p(label))
    named = _NAMED_FIELD.match(sentence)
    if named:  # the PM filed the sentence themselves ("Viability: …", "why now: …"), and nowhere else
        label = next(lab for lab, word in _FIELD_NAMES.items() if named.group(1).lower() in word)
        labels = [label] + [other for other in labels if other != label and other in _UNFILED]
    elif _NAMED_PROBLEM.match(sentence) and "problem" not in labels:
        labels = ["problem"] + labels
    if mode == "mode_2" and all(label in _UNFILED for label in labels):
        # Evaluating a solution, a sentence about who must sign off or what it depends on is usually evidence
        # on a risk: the likeliest evaluation field is taken when it is more likely than not.
        best = max(_EVALUATION_SLOTS, key=reading.p)
        if reading.p(best) >= 0.5:
            labels.append(best)
    if mode == "mode_1" and labels and all(label in _EVALUATION_SLOTS for label in labels):
        # No option is being evaluated yet, so a risk or a vendor quote has nowhere to go: a sentence read that
        # way ("vans break down mid-route and we miss windows" read as feasibility) goes to its likeliest field
        # of the brief, when that is a fair reading of it.
        best = max(_MODE_1_LABELS, key=reading.p)
        if reading.p(best) >= MODE_1_FLOOR and reading.p(best) > reading.p("none"):
            labels = [best]
    if labels == ["org_context"] and reading.p("audience") >= AUDIENCE_FLOOR and _counts_people(doc, mentioned):
        # Background that counts a group of people ("it hits about 140 depot planners across 30 depots") says
        # who the product is for.
        labels = ["audience"]
    weak_metric = [label for label in labels if label in ("metric_leading", "metric_lagging") and reading.p(label) < 0.5
                   and not any(m.target and (m.baseline or m.deadline) for m in _metrics(sentence, label, labels))]
    if weak_metric and len(labels) == len(weak_metric):
        # A doubtful metric reading with no measure in it ("we bin about 9% of bakery sales" is the pain's size,
        # not a target): the sentence goes to its next likeliest field, if that is nearly as likely.
        runner_up = max((label for label in fields.LABELS if label not in weak_metric and label != "none"
                         and label not in fields.ROLE_LABELS.values()), key=reading.p)
        if reading.p(runner_up) >= 0.25 and reading.p(runner_up) >= 0.75 * reading.p(weak_metric[0]):
            labels = [runner_up]
    kept: list[str] = []
    for label in labels:
        # A second field only where one sentence naturally serves two (a target and its guardrail, a why-now
        # that also sizes the pain); otherwise the sentence goes where it is read best.
        if not kept or (len(kept) < MAX_FIELDS_PER_SENTENCE and any(_compatible(label, k) for k in kept)):
            kept.append(label)
    facts: list[Fact] = []
    found_metrics: list[Metric] = []
    tidy = t.tidy(sentence)
    for label in kept:
        score = reading.p(label)
        if label in _BRIEF_SLOTS:
            facts.append(Fact(slot=_BRIEF_SLOTS[label], text=tidy, score=score, hedged=hedged))
        elif label in ("metric_leading", "metric_lagging", "anti_metric"):
            found_metrics += _metrics(sentence, label, kept)
        elif label in ("proceed_if", "do_not_proceed_if"):
            facts.append(Fact(slot=_polarity(sentence, label), text=tidy, score=score, hedged=hedged))
        elif label == "solution":
            facts.append(Fact(slot="solution", text=tidy, score=score, hedged=hedged))
        elif label in _EVALUATION_SLOTS and mode == "mode_2":
            facts.append(_evaluation_fact(label, sentence, doc, score, hedged))
    found_metrics = [m for m in found_metrics if m.text]
    seen: set[str] = set()
    unique = []
    for m in found_metrics:
        if m.text not in seen:
            seen.add(m.text)
            unique.append(m)
    for m in unique:
        slot = _METRIC_SLOT[m.kind]
        facts.append(Fact(slot=slot, text=metrics.render(m), subject=m.name, score=reading.p(
            {"leading": "metric_leading", "lagging": "metric_lagging", "anti": "anti_metric"}[m.kind])))
    return facts, unique


AUDIENCE_FLOOR = 0.3


def _counts_people(doc: "Doc", mentioned: list[people.Mention]) -> bool:
    """Whether the sentence counts a role or a team: a number on the head of a people mention ("140 depot
    planners", "about 600 schools' teachers")."""
    for mention in mentioned:
        if mention.kind in ("role", "team") and any(
                child.dep_ == "nummod" or child.like_num for i in mention.tokens for child in doc[i].children):
            return True
    return False


# Labels that file nothing in the brief themselves (people are read on every sentence; dependencies and platform
# answer probes): they sit beside any field.
_UNFILED = frozenset({"stakeholder", "dependencies", "platform"})
_PAIRS = [frozenset(p) for p in (
    ("metric_lagging", "anti_metric"), ("metric_leading", "anti_metric"), ("metric_lagging", "metric_leading"),
    ("metric_lagging", "proceed_if"), ("metric_lagging", "do_not_proceed_if"), ("metric_leading", "proceed_if"),
    ("metric_leading", "do_not_proceed_if"), ("anti_metric", "do_not_proceed_if"), ("problem", "audience"),
    ("why_now", "problem"), ("out_of_scope", "day_one"), ("solution", "build_vs_buy"),
    ("validation", "proceed_if"), ("validation", "do_not_proceed_if"), ("viability_risk", "build_vs_buy"))]


_METRIC_SLOT: dict[str, Slot] = {"leading": "metric_leading", "lagging": "metric_lagging", "anti": "metric_anti"}


def _compatible(a: str, b: str) -> bool:
    return a in _UNFILED or b in _UNFILED or frozenset((a, b)) in _PAIRS


def _metrics(sentence: str, label: str, labels: list[str]) -> list[Metric]:
    """A metric sentence as records: the target part, and a guardrail clause as its own anti-metric."""
    stated = metrics.explicit_kind(sentence)
    head, guard = metrics.split_guardrail(sentence)
    found: list[Metric] = []
    if label == "anti_metric" and not guard:
        if "metric_lagging" in labels or "metric_leading" in labels:
            return []  # the target label reads this sentence; it has no separate guardrail clause
        doc = nlp.parse([sentence])[0]
        anti = metrics.parse_metric(sentence, doc, kind="anti")
        anti.text = t.tidy(sentence)
        return [anti]
    if label in ("metric_leading", "metric_lagging") or stated in ("leading", "lagging"):
        kind = stated if stated in ("leading", "lagging") else ("leading" if label == "metric_leading" else "lagging")
        for part in metrics.split_metrics(head):
            found.append(metrics.parse_metric(part, nlp.parse([part])[0], kind=kind))
    if guard:
        found.append(metrics.parse_guardrail(guard))
    return found


def _polarity(sentence: str, label: str) -> Slot:
    """"Don't go ahead if…", "I'd kill it if…" and "unless…" stop; "roll it out if…" goes on. The words decide,
    because the classifier reads "don't go" and "go" alike."""
    if _STOP_WORDS.search(sentence) or _NEGATED_GO.search(sentence):
        return "do_not_proceed_if"
    if _UNLESS.search(sentence) and label == "proceed_if":
        return "do_not_proceed_if" if re.search(r"\b(?:won'?t|wouldn'?t|not|no|don'?t)\b", sentence, _I) is None \
            else "proceed_if"
    return label  # type: ignore[return-value]


# How long a test runs, as people write it: "a three-week pilot", "for 6 weeks", "two-month trial".
_DURATION = re.compile(r"\b(?:\d+|one|two|three|four|five|six|eight|ten|twelve)[- ](?:day|week|month)s?\b", re.I)


def _evaluation_fact(label: str, sentence: str, doc: "Doc", score: float, hedged: bool) -> Fact:
    tidy = t.tidy(sentence)
    if label.endswith("_risk"):
        level_match = _STATED_LEVEL.search(sentence)
        level = _LEVEL_WORDS.get(next((g for g in level_match.groups() if g), "").lower(), "") \
            if level_match else ""
        return Fact(slot=label, text=tidy, detail=_direction(sentence, doc), level=level,
                    score=score, hedged=hedged)
    if label == "build_vs_buy":
        recommendation = next((kind for kind, pattern in _RECOMMEND if pattern.search(sentence)), "")
        return Fact(slot="build_vs_buy", text=tidy, detail=recommendation, score=score, hedged=hedged)
    approach = next((a for a in _APPROACHES
                     if a.replace(" ", "") in sentence.lower().replace(" ", "").replace("-", "")), "")
    timeline = metrics.DEADLINE.search(sentence) or _DURATION.search(sentence)
    return Fact(slot="validation", text=tidy, subject=approach, detail=timeline.group(0) if timeline else "",
                score=score, hedged=hedged)


def _direction(sentence: str, doc: "Doc") -> str:
    """Whether a piece of evidence speaks for the option or against it ("" when it does not say)."""
    against = len(_AGAINST.findall(sentence))
    supporting = len(_FOR.findall(sentence))
    if against > supporting:
        return "against"
    if supporting > against:
        return "for"
    return ""


# ---------------------------------------------------------------- assumptions and options


def _hedge(sentence: str, doc: "Doc") -> Hedge | None:
    if sentence.rstrip().endswith("?") or not t.is_hedged(sentence):
        return None
    claim, evidence = claims.claim_and_evidence(doc)
    if not claim:
        claim = t.claim_without_hedge(sentence)
    if len(claim.split()) < 3 or t.is_meta(claim) or _about_own_wording(sentence) or not _a_claim(claim):
        return None
    return Hedge(claim=t.clip_words(claim, 60), sentence=sentence, evidence=evidence,
                 type=changes.assumption_type(sentence), impact="high" if _HIGH_IMPACT.search(sentence) else "medium")


_FRAMING = re.compile(r"^(?:that|thats|this|it|which)(?:'s|’s| is| was)?\b.*\b(?:problem|issue|point|question|solution|"
                      r"answer|thing|pain)\b|^(?:the\s+)?\w+(?:\s+\w+)?\s+(?:do|does|did|are|is|will|would)\.?$", re.I)


def _a_claim(claim: str) -> bool:
    """A claim worth registering says something checkable about the world: not a remark on the
    framing ("that's the real problem"), not an elliptic answer ("the senior techs do"), not a whole story."""
    words = claim.split()
    return len(words) <= 80 and not _FRAMING.search(claim.strip().rstrip("."))


_OWN_WORDING = re.compile(
    r"\b(?:i|we)\s+(?:think|guess|suppose|believe)\s+(?:that\s+)?(?:the|our|my)\s+(?:main\s+|real\s+|key\s+|"
    r"headline\s+|first\s+)?(?:metric|indicator|kpi|measure|question|point|answer|priority|goal|target|"
    r"guardrail|leading|lagging|north star|day[- ]one|scope|focus)\b"
    r"|\b(?:i|we)\s+(?:think|guess)\s+(?:i'?d|we'?d|i would|we would|i should|we should)\s+(?:say|call|pick|"
    r"go with|choose|measure|use)\b", _I)


def _about_own_wording(sentence: str) -> bool:
    """"I think the leading indicator is…" hedges the PM's choice of words, not a belief about the world."""
    return bool(_OWN_WORDING.search(sentence))


def _known_options(state: SessionState) -> set[str]:
    evaluation = state.solution_evaluation
    names = {evaluation.solution_name.lower()} if evaluation.solution_name else set()
    for option in evaluation.build_vs_buy.options_considered:
        names.add(option.lower())
        names.update(w.lower() for w in re.findall(r"\b[A-Z][\w-]+", option))
    return {n for n in names if n}


def _options_named(doc: "Doc", known: set[str]) -> list[str]:
    """Vendors, products and systems a sentence names: a proper name that is bought, trialled or quoted, or
    that a tool word stands beside."""
    out: list[str] = []
    for ent in doc.ents:
        if ent.label_ not in ("ORG", "PRODUCT", "PERSON", "WORK_OF_ART", "FAC"):
            continue
        tokens = [w for w in ent if w.pos_ in ("PROPN", "NOUN")]
        if tokens and people.is_option(tokens, known):
            out.append(ent.text)
    return out
