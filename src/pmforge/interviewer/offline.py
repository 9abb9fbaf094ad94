"""The offline interviewer: a deterministic stand-in for Claude that needs no key.

It answers the same requests through the same interface. For routing it returns the rule
router's decision as a `route` tool call. For a reply it reads the PM's own words with
`pmforge.understand`, calls the same tools Claude would (first round), and once the tools have
run it writes the reply (second round): the sentence of an uploaded file that answers a question,
cited; an earlier turn only when it bears on this message; then questions about what is still
missing. Nothing is invented: every sentence it shows comes from the PM, the uploaded files, the
state or the probe catalogue. What the tools recorded is told by the turn itself (`turn.acknowledge`),
in both modes, so it is not said here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import count

from pmforge.core.errors import ForgeError
from pmforge.core.models import SessionState
from pmforge.core.settings import Settings
from pmforge.interviewer import plan as offline_plan
from pmforge.interviewer.answer import reply_to
from pmforge.interviewer.questions import ASK_AGAIN, asked_before, follow_ups, fresh, opening, questions_in
from pmforge.interviewer.rules import ROUTE_TOOL, read_message, rule_route
from pmforge.knowledge import Catalogue
from pmforge.llm.base import LLM, ChatRequest, ChatResponse
from pmforge.llm.inputs import AssembledContext, FileToSummarize, RouteInputs, TurnToSummarize
from pmforge.llm.messages import Message, ToolCall
from pmforge.prompt.render import own_words
from pmforge.tools import TOOLS, tool_call, tool_for
from pmforge.tools.session import CompleteMode, GenerateArtifact, RecordPattern
from pmforge.understand import Understanding, extractive, filled_slots, nlp
from pmforge.understand import text as t

# Said once per session (the app's sidebar, `forge chat` on stderr), never inside a reply.
OFFLINE_NOTICE = ("Forge is running offline: a built-in interviewer asks the questions and a local model searches "
                  "your files; nothing leaves this machine. For Claude, put ANTHROPIC_API_KEY (and VOYAGE_API_KEY "
                  "for Voyage embeddings) in a .env file and start Forge again.")

_HOW_MUCH = re.compile(r"\b(?:how (?:many|much|long|often)|what (?:share|percent|percentage|proportion|number|"
                       r"rate|price|cost)|when|which year|what year)\b", re.I)

GLOSSARY = {
    "anti-metric": "An anti-metric (or guardrail) is a number that must not get worse while you push the main one "
                   "up: cutting waste without raising out-of-stocks, say.",
    "leading": "A leading indicator moves within weeks and tells you early whether the change is working (adoption, "
               "usage, a behaviour), before the business outcome can move.",
    "lagging": "A lagging outcome is the business result you finally care about (revenue, shrink, churn); it moves "
               "over quarters, so you pair it with a leading indicator.",
    "assumption": "The assumption register lists what the plan rests on but nobody has verified: each has a "
                  "confidence, an impact and the cheapest way to check it.",
    "criteri": "Decision criteria are the go / no-go lines agreed in advance: the result that would make you go "
               "ahead, and the one that would make you stop.",
    "probe": "A probe is one line of inquiry (why now, who must change, who benefits from today's way…); "
             "I work through them in order and mark each answered when you have covered it.",
    "mode": "Mode 1 frames the problem (is it real, worth solving, how we'd measure it); Mode 2 evaluates one "
            "solution against it (value, usability, feasibility and viability risk, build vs buy, how to test it).",
}


def best_sentences(text: str, query: str, limit: int = 1) -> list[str]:
    """The sentences of `text` that answer `query` best: shared terms weighted by rarity in the section,
    a number when the question asks for one; returned in document order."""
    candidates = extractive.sentences(text) or [text]
    wanted = t.content_terms(query)
    frequency: dict[str, int] = {}
    for sentence in candidates:
        for term in t.content_terms(sentence):
            frequency[term] = frequency.get(term, 0) + 1
    wants_number = bool(_HOW_MUCH.search(query))

    def score(item: tuple[int, str]) -> tuple[float, int]:
        index, sentence = item
        terms = t.content_terms(sentence)
        value = sum(1.0 / frequency[w] for w in terms & wanted)
        if wants_number and t.QUANTITY.search(sentence):
            value += 0.75
        return value, -index

    ranked = sorted(enumerate(candidates), key=score, reverse=True)[:limit]
    return [extractive.clip_words(s, 50) for _, s in sorted(ranked)]


def best_sentence(text: str, query: str) -> str:
    return best_sentences(text, query, 1)[0]


class OfflineLLM(LLM):
    name = "offline"
    online = False

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()  # the rule router's tunables (probe_max_asks, synthesis cadence)

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers from the inputs the request was rendered from, chosen by their type (never the prose)."""
        match request.context:
            case RouteInputs() as inputs:  # Phase A: the rule router's decision, made once per turn
                decision = inputs.rule_decision or rule_route(inputs, self.settings)
                return ChatResponse(tool_calls=[ToolCall(id="route_1", name=ROUTE_TOOL, input=decision.model_dump())],
                                    stop_reason="tool_use")
            case AssembledContext() as ctx:
                return self._reply(ctx, request.messages)
            case TurnToSummarize(user=user, assistant=assistant, asked=asked):
                return ChatResponse(text=extractive.turn_summary(user, assistant, asked))
            case FileToSummarize(filename=filename, markdown=markdown):
                return ChatResponse(text=extractive.file_summary(filename, markdown))
        raise ForgeError(f"The offline interviewer cannot answer a {request.purpose} request built without its "
                         "inputs.")

    # ---- Phase B
    def _reply(self, ctx: AssembledContext, messages: list[Message]) -> ChatResponse:
        state: SessionState = ctx.state if ctx.state is not None else SessionState()
        d = ctx.decision
        u = read_message(ctx.user_message, state, ctx.catalogue)  # the router's own reading, from its cache
        words = own_words(ctx.user_message)  # a long paste is material, never a source of tool calls
        filler = u.intent == "filler"
        if messages[-1].tool_results:
            # Second round: the tools have run (the turn acknowledges what they recorded); now ask.
            return ChatResponse(text=self._compose(ctx, state, u, _recorded(messages)),
                                stop_reason="end_turn")
        ids = count(1)
        entering = d.action == "enter_mode" and d.mode == "mode_2"
        mode = "mode_2" if entering else state.active_mode
        calls = [] if filler else offline_plan.tool_calls(u, state, mode, ctx.org_context, entering, ctx.turn_number)
        if d.action == "complete_mode":
            kind = "problem_brief" if d.mode == "mode_1" else "solution_evaluation"
            calls.append(tool_call(CompleteMode, {"mode": d.mode}))
            if not any(name == tool_for(GenerateArtifact).name for name, _ in calls):
                calls.append(tool_call(GenerateArtifact, {"kind": kind}))
        for pid in d.patterns[:1]:
            pattern = ctx.catalogue.find_pattern(pid)
            if pattern:
                calls.append(tool_call(RecordPattern, {"pattern": pattern.id,
                                                 "evidence": extractive.clip_words(words, 30)}))
        uses = [ToolCall(id=f"offline_{next(ids)}", name=name, input=args) for name, args in calls]
        if not uses:
            return ChatResponse(text=self._compose(ctx, state, u, False), stop_reason="end_turn")
        return ChatResponse(tool_calls=uses, stop_reason="tool_use")

    def _compose(self, ctx: AssembledContext, state: SessionState, u: Understanding, recorded: bool) -> str:
        d = ctx.decision
        parts: list[str] = [opening(u)] if u.intent == "statement" else []
        if d.action == "enter_mode" and d.mode == "mode_2":
            name = u.solution_name or state.solution_evaluation.solution_name or "the proposed solution"
            parts.append(f"Let's evaluate **{name}** (Mode 2). We'll test it against the problem we framed: value, "
                         "usability, feasibility and viability risk, build vs buy, then the cheapest test of the "
                         "riskiest assumption.")
        if u.intent == "summarize" or d.action == "complete_mode":  # asked for, or the mode changes
            parts.append(_synthesis(state, ctx.catalogue))
        elif u.intent == "question_method":
            parts.append(_explain(u.question or ctx.user_message))
        elif u.intent == "filler" and not recorded:
            parts.append("Noted — let's keep going.")
        elif u.intent == "statement" and not recorded and not u.probes and ctx.user_message.strip() and not parts:
            parts.append("Got it.")
        if not ctx.user_message.strip() or (u.intent == "filler" and "<pasted" in ctx.user_message):
            parts.append("You pasted a long text: it is saved as a source and searched like your files.")
        parts += _grounding(ctx, state, u)
        parts.append(_questions(ctx, state, u))
        if d.action == "complete_mode" and d.mode == "mode_1":
            # The completion and the brief are acknowledged by the turn; what comes next is said here.
            parts.append("To stress-test an option next, say which (e.g. “let's evaluate the vendor's tool”).")
        if any("- Still open:" in p for p in parts):  # never "has what it needs" beside a list of open items
            parts = [p for p in parts if "has what it needs" not in p]
        # Never silent: a reply with nothing to record, ask or quote still says it heard the PM.
        return "\n\n".join(p for p in parts if p) or "Noted — let's keep going."


_BOOKKEEPING = {tool.name for tool in TOOLS.values() if tool.bookkeeping}  # never acknowledged


def _recorded(messages: list[Message]) -> bool:
    """Whether a call of the previous round recorded something the turn will acknowledge (then a bare
    "Got it." would be noise)."""
    names = {call.id: call.name for call in messages[-2].tool_calls}
    return any(not r.is_error and names.get(r.call_id) not in _BOOKKEEPING for r in messages[-1].tool_results)


@lru_cache(maxsize=16384)
def _quotes_in(reply: str) -> frozenset[int]:
    return frozenset(int(n) for n in re.findall(r"\bin turn (\d+)\b", reply))


def _quoted_turns(state: SessionState) -> set[int]:
    """The earlier turns Forge has already quoted. Each reply is read once per process (replies never change),
    so a 1,000-turn session costs what a 10-turn one does."""
    found: set[int] = set()
    for turn in state.turns:
        found |= _quotes_in(turn.assistant)
    return found


def _grounding(ctx: AssembledContext, state: SessionState, u: Understanding) -> list[str]:
    parts: list[str] = []
    d = ctx.decision
    message = ctx.user_message
    asked = u.question or (message if u.intent == "question_files" else "")
    if ctx.documents and asked:
        parts.append(reply_to(asked, ctx.documents))
    elif ctx.documents and u.intent == "statement":
        top = max(ctx.documents, key=lambda p: p.score)  # passages arrive in reading order, not by score
        # Unasked, a passage is quoted only when it bears on the message and no earlier reply quoted it.
        if t.overlap(message, top.text) >= 0.3 and not _cited_before(state, top.citation):
            parts.append(f"From your files, {top.citation}: “{best_sentence(top.text, message)}”")
    elif d.requires_retrieval and ctx.has_documents and asked:
        parts.append("I did not find this in the uploaded files, so I won't guess at it.")
    if ctx.conversations and u.intent == "statement" and not u.corrections:  # corrections are acknowledged
        parts += _changed_numbers(ctx, state, message)
    return parts


def _cited_before(state: SessionState, citation: str) -> bool:
    return any(citation in turn.assistant for turn in state.turns[-50:])


def _changed_numbers(ctx: AssembledContext, state: SessionState, message: str) -> list[str]:
    """An earlier turn is brought up only when it adds something: the same thing given a different number
    then. Said once per earlier turn, in Forge's words, with what changed."""
    now = set(t.numbers(message))
    if not now:
        return []
    already = _quoted_turns(state)
    for earlier in sorted(ctx.conversations, key=lambda x: -x.score):
        if earlier.turn_number in already:
            continue
        for sentence in extractive.sentences(own_words(earlier.user)):
            then = set(t.numbers(sentence))
            shared = t.content_terms(message) & t.content_terms(sentence)
            kinds = {t.number_kind(n) for n in then} & {t.number_kind(n) for n in now} - {"plain"}
            if then and kinds and not (then & now) and len(shared) >= 2:
                old, new = sorted(then)[0], sorted(now)[0]
                return [f"In turn {earlier.turn_number} you put this at {old}; now {new}. If {new} replaces it, "
                        f"say “actually {new}, not {old}” and I'll correct it everywhere it appears."]
    return []


def _explain(question: str) -> str:
    lowered = question.lower()
    for key, text in GLOSSARY.items():
        if key in lowered:
            return text
    return ("I ask about the problem before the solution: who feels it, why now, who must change, who benefits "
            "from today's way, what it touches, and how we'd measure success. Then we stress-test one option.")


_SLOT_QUESTIONS = [
    (re.compile(r"first few weeks|early", re.I), "metric_leading"),
    (re.compile(r"business outcome|baseline", re.I), "metric_lagging"),
    (re.compile(r"must not get worse|anti-metric", re.I), "metric_anti"),
    (re.compile(r"stop or change course|make you stop", re.I), "do_not_proceed_if"),
]


_GAPS_MODE_1 = [
    ("problem", "In a sentence or two, what is going wrong today, and for whom?"),
    ("audience", "Who exactly has this problem, and roughly how many of them are there?"),
    ("decision_authority", "Who has the final say on whether this goes ahead?"),
    ("metric_lagging", "Which business number should this move, from what baseline to what target?"),
    ("metric_leading", "What early signal, within weeks, would tell you it is working?"),
    ("metric_anti", "What must not get worse while you do this?"),
    ("do_not_proceed_if", "What result, by when, would make you stop?"),
]
_GAPS_MODE_2 = [
    ("value_risk", "What evidence shows users would switch from today's workaround to this?"),
    ("usability_risk", "Where and under what conditions will people use it, and what is the hardest first step?"),
    ("feasibility_risk", "What has the team never built before here, and what data does it need?"),
    ("viability_risk", "What does it cost to run, and who has to sign off (legal, finance, security)?"),
    ("build_vs_buy", "Build, buy or partner: which way are you leaning, and why?"),
    ("validation", "What is the cheapest test of the riskiest assumption, and what result would stop you?"),
]


def _questions(ctx: AssembledContext, state: SessionState, u: Understanding) -> str:
    """Two or three questions (one after a factual question): a follow-up on what the PM just said, the
    active probe's questions, then what the record lacks; none asked earlier in the session."""
    d = ctx.decision
    mode = d.mode
    filled = filled_slots(state, u)
    earlier = [] if ASK_AGAIN.search(ctx.user_message) else asked_before(state)
    retried = list(questions_in(ctx.retracted_reply))  # Retry: the next-best questions, not the same ones
    just_answered = {p.probe for p in u.probes}
    probe = ctx.catalogue.find_probe(d.next_probe) if d.next_probe else None
    bank: list[str] = []
    if probe is not None and probe.id not in just_answered:
        patterns = [ctx.catalogue.find_pattern(p) for p in d.patterns[:1]]
        bank = [p.question for p in patterns if p] + [
            q for q in probe.questions if not any(p.search(q) and slot in filled for p, slot in _SLOT_QUESTIONS)]
    gaps = [q for slot, q in (_GAPS_MODE_1 if mode == "mode_1" else _GAPS_MODE_2) if slot not in filled]
    factual = u.intent in ("question_files", "question_method")
    limit = 1 if factual else 3
    mine = follow_ups(u, state, own_words(ctx.user_message))[:1]
    asked = fresh(mine + bank + gaps, earlier + retried, limit)
    header = ""
    if any(q in bank for q in asked) and probe is not None:
        # The probe is introduced once; after that its questions speak for themselves.
        introduced = f"**{probe.name}** —"
        header = "" if any(introduced in turn.assistant for turn in state.turns) else \
            f"**{probe.name}** — {probe.purpose}"
    elif any(q in gaps for q in asked):
        header = "**Filling the gaps in the " + ("problem brief" if mode == "mode_1" else "solution evaluation") + "**"
    if asked:
        if factual:
            return "One question for the brief: " + asked[0]
        return "\n\n".join(([header] if header else []) + [f"Question {i}: {q}" for i, q in enumerate(asked, 1)])
    if retried:
        return ("Offline, the same message gets the same reading, and I have no other question on it. Edit your "
                "message (say more, or say it differently) and I'll answer that instead.")
    if factual:
        return ""
    open_probes = [ctx.catalogue.probe_name(p) for p in ctx.catalogue.order(mode)
                   if p not in state.routing.probes_fired and p not in just_answered]
    artifact = "brief" if mode == "mode_1" else "solution evaluation"
    if open_probes:
        return (f"I have no new question on this. Not yet covered: {', '.join(open_probes)}. Tell me what you know "
                f"about any of them, or ask me to write up the {artifact} as it stands.")
    offer = ("The problem brief has what it needs. Shall we stress-test a solution (say which option), or shall I "
             "write up the brief?" if mode == "mode_1" else
             "The evaluation has what it needs. Shall I write up the solution evaluation?")
    if any(offer in turn.assistant for turn in state.turns):
        return ""  # offered already: the PM knows the next step, and a question is never asked twice
    return offer


def _whole(text: str) -> str:
    """The first sentence of a record, whole: a summary line is never cut mid-sentence."""
    found = extractive.sentences(text)
    return (found[0] if found else text).strip()


GIST_WORDS = 16
_LABEL_LEAD = re.compile(r"^[^:—–]{1,30}[:—–]\s+")  # "Real pain: …", "Why now — …"
_DANGLING = re.compile(r"\s+(?:a|an|the|of|to|in|on|for|and|or|with|by|at|from|that|who|which|is|are|was)$", re.I)


def _gist(text: str) -> str:
    """A record's first point in a few words, for a summary line: the statement inside a lead-in ("The real
    problem, as I see it, is that the wrong trade gets sent…" → "The wrong trade gets sent…"), its first
    clause, at most GIST_WORDS words ending on a content word. A summary says where things stand; it does
    not read the PM's sentences back to them."""
    sentence = _whole(text)
    if len(sentence.split()) <= 7:
        return sentence
    doc = nlp.parse([sentence])[0]
    root = next((w for w in doc if w.dep_ == "ROOT"), None)
    inner = next((c for c in root.children if c.dep_ == "ccomp"), None) if root is not None and \
        root.lemma_ == "be" and any(w.lemma_.lower() in ("problem", "pain", "issue") for w in root.lefts) else None
    if inner is not None:
        sentence = " ".join(w.text for w in inner.subtree if not (w.dep_ == "mark" and w.head.i == inner.i))
        sentence = re.sub(r"\s+([,.;:!?'’])", r"\1", sentence)
    else:
        sentence = _LABEL_LEAD.sub("", sentence)
    clause = t.CLAUSE_BREAK.split(sentence.rstrip("."))[0].strip(" ,")
    words = clause.split()
    clipped = len(words) > GIST_WORDS or clause != sentence.rstrip(".").strip()
    words = words[:GIST_WORDS]
    gist = _DANGLING.sub("", " ".join(words)).rstrip(" ,")
    return (gist[:1].upper() + gist[1:]) + ("…" if clipped else ".")


def _synthesis(state: SessionState, catalogue: Catalogue) -> str:
    brief = state.problem_brief
    lines = ["**Where we are**"]
    if brief.problem_statement:
        lines.append(f"- Problem: {_gist(brief.problem_statement)}")
    if brief.target_audience:
        lines.append(f"- Audience: {_gist(brief.target_audience)}")
    if brief.stakeholders:
        people = ", ".join(f"{s.name} ({offline_plan.ROLE_LABEL.get(s.role, 'involved')})"
                           for s in brief.stakeholders[:6])
        lines.append(f"- Stakeholders: {people}" + (" and more" if len(brief.stakeholders) > 6 else ""))
    metrics = brief.success_metrics
    for label, items in (("Leading", metrics.leading), ("Lagging", metrics.lagging), ("Anti-metric", metrics.anti_metrics)):
        if items:
            lines.append(f"- {label}: {_whole(items[-1])}")
    criteria = brief.decision_criteria
    if criteria.proceed_if or criteria.do_not_proceed_if:
        first = (criteria.do_not_proceed_if or criteria.proceed_if)[-1]
        lines.append(f"- Decision line: {_gist(first)}")
    live = [a for a in state.assumptions if not a.retired]
    if live:
        risky = [a for a in live if a.status in ("at_risk", "invalidated")]
        lines.append(f"- Assumptions: {len(live)} registered" + (f", {len(risky)} at risk or invalidated" if risky else "")
                     + f"; e.g. {live[-1].id}: {_whole(live[-1].claim)}")
    evaluation = state.solution_evaluation
    if state.active_mode == "mode_2" and evaluation.solution_name:
        rated = [f"{dim} {getattr(evaluation, f'{dim}_risk').level}" for dim in
                 ("value", "usability", "feasibility", "viability")]
        lines.append(f"- Evaluating {evaluation.solution_name}: " + ", ".join(rated))
    open_probes = [catalogue.probe_name(p) for p in catalogue.order(state.active_mode)
                   if p not in state.routing.probes_fired]
    if open_probes:
        lines.append("- Still open: " + ", ".join(open_probes))
    return "\n".join(lines) if len(lines) > 1 else "We have not pinned the problem down yet."


__all__ = ["GLOSSARY", "OFFLINE_NOTICE", "OfflineLLM", "best_sentence", "best_sentences"]
