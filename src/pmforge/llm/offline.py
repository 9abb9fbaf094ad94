"""The offline interviewer: a deterministic stand-in for Claude that needs no key.

It answers the same requests through the same interface. For routing it returns
the rule router's decision as a `route` tool call; for a reply it reflects what the
PM said, cites the best retrieved document section and earlier turn, asks the
active probe's questions, and calls the same tools Claude would (record probes,
register hedged statements as assumptions, fill the problem statement).
Summaries are extractive. Nothing is invented: every sentence it shows comes from
the PM, the uploaded files or the probe catalogue.
"""

from __future__ import annotations

import re
from itertools import count

from ..knowledge import find_pattern, find_probe
from ..models import RoutingDecision
from . import extractive, offline_tools
from .base import LLM, ChatRequest, ChatResponse, ToolUse

_HEDGE = re.compile(
    r"\b(i think|i believe|we believe|we think|probably|i assume|we assume|assuming|i guess|i suspect|"
    r"my sense is|likely|hopefully|should be|might|i'm pretty sure|we expect|i expect|presumably)\b",
    re.I,
)
_PROBLEM = re.compile(r"\b(the problem is|our problem is|we want to|we need to|the issue is|struggl|pain point|"
                      r"we're trying to|we are trying to|goal is)\b", re.I)
_TYPE_HINTS = [
    ("stakeholder_dependency", r"\b(vp|director|team|stakeholder|sign[s]? off|approv|buy-in|leadership|ops)\b"),
    ("technical", r"\b(data|system|integration|api|platform|model|latency|infrastructure|pipeline)\b"),
    ("market", r"\b(competitor|market|price|pricing|segment|industry)\b"),
    ("value", r"\b(customer|user|shopper|buyer|value|adopt|use it|want|need)\b"),
]
_STOP = set("the a an and or of to in on for is are was were be been it this that with as at by from we our you your "
            "i my me they them their what which who how when why do does did can could should would will not no yes "
            "about into than then there here have has had so if".split())


def _terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9\-]+", text.lower()) if w not in _STOP and len(w) > 2}


def best_sentence(text: str, query: str) -> str:
    """The sentence of `text` sharing most terms with the query (ties: the earliest)."""
    wanted = _terms(query)
    candidates = extractive.sentences(text) or [text]
    scored = [(len(_terms(s) & wanted), -i, s) for i, s in enumerate(candidates)]
    return extractive.clip_words(max(scored)[2], 45)


class OfflineLLM(LLM):
    name = "offline"
    online = False

    def complete(self, request: ChatRequest) -> ChatResponse:
        handler = {
            "route": self._route,
            "reply": self._reply,
            "summarize_turn": self._summarize_turn,
            "summarize_file": self._summarize_file,
        }[request.purpose]
        return handler(request)

    # ---- Phase A
    def _route(self, request: ChatRequest) -> ChatResponse:
        from ..turn.route import ROUTE_TOOL, rule_route  # late: the router imports this package
        from config import get_settings

        decision: RoutingDecision = rule_route(request.context, get_settings())
        return ChatResponse(
            tool_uses=[ToolUse(id="route_1", name=ROUTE_TOOL, input=decision.model_dump())], stop_reason="tool_use"
        )

    # ---- summaries
    def _summarize_turn(self, request: ChatRequest) -> ChatResponse:
        user, assistant, asked = request.context
        return ChatResponse(text=extractive.turn_summary(user, assistant, asked))

    def _summarize_file(self, request: ChatRequest) -> ChatResponse:
        filename, markdown = request.context
        return ChatResponse(text=extractive.file_summary(filename, markdown))

    # ---- Phase B
    def _reply(self, request: ChatRequest) -> ChatResponse:
        last = request.messages[-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return ChatResponse(text="", stop_reason="end_turn")  # tools done; the reply was already given
        ctx = request.context
        d = ctx.decision
        message = ctx.user_message
        from ..turn.render import own_words
        from ..turn.route import is_filler

        filler = is_filler(message)
        words = own_words(message)  # what the PM typed; a long paste is material, never a source of tool calls
        ids = count(1)
        uses: list[ToolUse] = []
        parts: list[str] = []

        # 1. Reflection.
        if d.action == "micro_synthesize":
            parts.append("Let me play back where we are. " + _synthesis(ctx))
        elif filler:
            parts.append("Noted — let's keep going.")
        elif not words:
            parts.append("You pasted a long text: it is saved as a source and searched like your files.")
        else:
            first = extractive.sentences(words)
            parts.append(f"What I'm hearing: “{extractive.clip_words(first[0] if first else words, 35)}”")

        # 2. Grounding in the files and in earlier turns.
        if ctx.documents:
            top = ctx.documents[0]
            parts.append(f"From your files, {top.citation}: “{best_sentence(top.text, message)}”")
        elif d.requires_retrieval and ctx.has_documents and "?" in message:
            parts.append("I did not find this in the uploaded files, so I won't guess at it.")
        if ctx.conversations:
            earlier = max(ctx.conversations, key=lambda t: t.score)
            said = extractive.sentences(own_words(earlier.user))  # not a paste's opening words
            if said:
                parts.append(f"Earlier, in turn {earlier.turn_number}, you said: “{extractive.clip_words(said[0], 35)}”")

        # 3. Tools: the probe just answered, hedged claims, the problem statement.
        state_probe = ctx.previous_probe
        if not filler and words and state_probe and state_probe != d.next_probe:
            uses.append(ToolUse(id=f"offline_{next(ids)}", name="record_probe",
                                input={"probe": state_probe, "evidence": extractive.clip_words(words, 40)}))
        if not filler and words:
            for sentence in extractive.sentences(words)[:6]:
                if _HEDGE.search(sentence) and len(sentence.split()) >= 5:
                    uses.append(ToolUse(id=f"offline_{next(ids)}", name="register_assumption", input={
                        "claim": extractive.clip_words(sentence, 60), "type": _guess_type(sentence),
                        "impact": "medium", "confidence": "guessed",
                        "basis": f"Stated with hedging by the PM in turn {ctx.turn_number}.",
                    }))
            if _PROBLEM.search(words) and not ctx.problem_statement:
                statement = " ".join(extractive.sentences(words)[:2]) or words
                uses.append(ToolUse(id=f"offline_{next(ids)}", name="update_problem_statement",
                                    input={"problem_statement": extractive.clip_words(statement, 80)}))

            known = {s.casefold() for s in ctx.stakeholders}
            for name, args in offline_tools.tool_calls(words, d.mode, known, set(ctx.assumption_ids),
                                                       ctx.org_context):
                uses.append(ToolUse(id=f"offline_{next(ids)}", name=name, input=args))
        if d.action == "complete_mode":
            kind = "problem_brief" if d.mode == "mode_1" else "solution_evaluation"
            uses.append(ToolUse(id=f"offline_{next(ids)}", name="complete_mode", input={"mode": d.mode}))
            uses.append(ToolUse(id=f"offline_{next(ids)}", name="generate_artifact", input={"kind": kind}))

        # 4. Domain patterns.
        for pid in d.patterns[:1]:
            pattern = find_pattern(pid)
            if pattern:
                parts.append(f"A pattern worth naming — {pattern.name}: {pattern.surface}")
                uses.append(ToolUse(id=f"offline_{next(ids)}", name="record_pattern",
                                    input={"pattern": pattern.id, "evidence": extractive.clip_words(message, 30)}))

        # 5. Questions.
        parts.append(_questions(ctx, filler))
        if d.action == "complete_mode":
            mode = "Mode 1 (Discover & Frame)" if d.mode == "mode_1" else "Mode 2 (Evaluate Solution)"
            parts.append(f"Every probe of {mode} is covered. Review the problem brief in the sidebar; "
                         "say “evaluate the solution” to move on to Mode 2.")
        parts.append("_(Offline interviewer — add ANTHROPIC_API_KEY for Claude.)_")
        text = "\n\n".join(p for p in parts if p)
        return ChatResponse(text=text, tool_uses=uses, stop_reason="tool_use" if uses else "end_turn")


def _guess_type(sentence: str) -> str:
    lowered = sentence.lower()
    return next((kind for kind, pattern in _TYPE_HINTS if re.search(pattern, lowered)), "organisational")


def _synthesis(ctx) -> str:
    fired = re.search(r"Probes satisfied: ([^\n]+)", ctx.sections.get("routing_context", ""))
    counts = ctx.sections.get("assumptions", "").splitlines()[0] if ctx.sections.get("assumptions") else ""
    bits = []
    if ctx.problem_statement:
        bits.append(f"Problem as stated so far: {extractive.clip_words(ctx.problem_statement, 40)}")
    if fired:
        bits.append(f"Covered: {fired.group(1)}.")
    if counts:
        bits.append(counts)
    return " ".join(bits) or "We have not pinned the problem down yet."


def _questions(ctx, filler: bool) -> str:
    d = ctx.decision
    probe = find_probe(d.next_probe) if d.next_probe else None
    if probe is None:
        return ""
    # A probe asked again (after a filler turn) gets its later questions, not a repeat.
    repeat = filler and ctx.previous_probe == probe.id
    bank = list(probe.questions[3:] if repeat and len(probe.questions) > 3 else probe.questions[:3])
    pattern_q = [find_pattern(p).question for p in d.patterns[:1] if find_pattern(p)]
    asked = (pattern_q + bank)[:3]
    lines = [f"**{probe.name}** — {probe.purpose}"]
    lines += [f"Question {i}: {q}" for i, q in enumerate(asked, 1)]
    return "\n\n".join(lines)


__all__ = ["OfflineLLM", "best_sentence"]
