"""Context assembly between Phase A and Phase B (seed 004's algorithm).

Always-on sections are rendered from state within their budgets; the probe and
pattern text is a dictionary lookup; documents and earlier turns are searched
only when Phase A says retrieval is required — a filler turn makes no query
embedding and no vector query.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from config import Settings

from ..embed import Embedder
from ..knowledge import find_pattern, find_probe
from ..retrieval import Query, find_sections, find_turns
from ..models import ProjectState, RetrievedSection, RetrievedTurn, RoutingDecision, SessionState, Turn
from ..store.collections import ProjectStore
from ..tokens import count_tokens, truncate_to_tokens
from . import render


class AssembledContext(BaseModel):
    turn_number: int
    user_message: str
    decision: RoutingDecision
    sections: dict[str, str] = Field(default_factory=dict)  # rendered, in prompt order
    tokens: dict[str, int] = Field(default_factory=dict)
    documents: list[RetrievedSection] = Field(default_factory=list)
    conversations: list[RetrievedTurn] = Field(default_factory=list)
    recent: list[tuple[str, str]] = Field(default_factory=list)  # (user, assistant), oldest first
    has_documents: bool = False  # the project has indexed files (for "not found in your files")
    previous_probe: str | None = None  # the probe asked last turn, which this message may answer
    problem_statement: str = ""
    stakeholders: list[str] = Field(default_factory=list)
    org_context: str = ""
    assumption_ids: list[str] = Field(default_factory=list)  # registered and not retired
    state: Any = Field(default=None, exclude=True)  # the session as the turn began (read-only), for offline replies


def document_query(message: str, decision: RoutingDecision) -> str:
    probe = find_probe(decision.next_probe) if decision.next_probe else None
    parts = [message.strip()[:600], decision.retrieval_query.strip()]
    if probe:
        parts.append(probe.name)
    return "\n".join(dict.fromkeys(p for p in parts if p))


def format_documents(sections: list[RetrievedSection], budget: int) -> str:
    if not sections:
        return ""
    per = max(budget // len(sections) - 20, 100)
    blocks = [
        f'<document citation="{s.citation}" offsets="{s.start}-{s.end}">\n'
        f"{render.inert(truncate_to_tokens(s.text, per))}\n</document>"
        for s in sections
    ]
    return "\n\n".join(blocks)


def format_turns(turns: list[RetrievedTurn], budget: int) -> str:
    if not turns:
        return ""
    per_side = max(budget // (2 * len(turns)) - 10, 60)
    blocks = []
    for t in turns:
        probe = find_probe(t.active_probe) if t.active_probe else None
        label = f"Turn {t.turn_number}" + (f" (Probe: {probe.name})" if probe else "")
        blocks.append(
            f'<turn label="{label}">\nPM: {render.inert(truncate_to_tokens(t.user, per_side))}\n'
            f"Forge: {render.inert(truncate_to_tokens(t.assistant, per_side))}\n</turn>"
        )
    return "\n\n".join(blocks)


def assemble(
    decision: RoutingDecision,
    state: SessionState,
    project_state: ProjectState,
    message: str,
    turn_number: int,
    store: ProjectStore,
    embedder: Embedder,
    settings: Settings,
) -> AssembledContext:
    ctx = AssembledContext(
        turn_number=turn_number,
        user_message=message,
        decision=decision,
        has_documents=any(f.indexed for f in project_state.file_summaries),
        previous_probe=state.active_probe,
        problem_statement=state.problem_brief.problem_statement,
        stakeholders=[s.name for s in state.problem_brief.stakeholders],
        org_context=project_state.org_context,
        assumption_ids=[x.id for x in state.assumptions if not x.retired],
        state=state,
    )
    s = ctx.sections
    s["context_block"] = render.context_block(project_state, settings.budget_context_block)
    s["assumptions"] = render.assumption_register(state.assumptions, settings.budget_assumptions)
    s["skeleton"] = render.skeleton(state, settings.budget_skeleton)
    s["routing_context"] = render.routing_context(state, settings.budget_routing_context)

    probe = find_probe(decision.next_probe) if decision.next_probe else None
    lookups = [probe.render()] if probe else []
    lookups += [p.render() for p in map(find_pattern, decision.patterns) if p]
    s["probe"] = truncate_to_tokens("\n\n".join(lookups), settings.budget_probe)

    if decision.requires_retrieval:
        query = Query(document_query(message, decision), embedder)
        file_ids = [f.file_id for f in project_state.file_summaries if f.filename in decision.document_filter]
        ctx.documents = find_sections(
            store, query, settings.document_parents, settings.document_retriever, settings, file_ids or None
        )
        s["documents"] = format_documents(ctx.documents, settings.budget_documents)
        ctx.conversations = find_turns(
            store, query, settings.conversation_turns, settings.conversation_retriever, settings,
            before_turn=turn_number - settings.recent_turns, boost_probe=decision.next_probe,
        )
        s["conversations"] = format_turns(ctx.conversations, settings.budget_conversations)

    recent: list[Turn] = state.turns[-settings.recent_turns :] if settings.recent_turns else []
    ctx.recent = render.recent_turns(recent, settings.budget_recent_turns)
    ctx.tokens = {name: count_tokens(text) for name, text in s.items()}
    ctx.tokens["recent_turns"] = sum(count_tokens(u) + count_tokens(a) for u, a in ctx.recent)
    return ctx
