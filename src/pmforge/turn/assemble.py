"""Context assembly between Phase A and Phase B (seed 004's algorithm).

Always-on sections are rendered from state within their budgets; the probe and
pattern text is a dictionary lookup; documents and earlier turns are searched
only when Phase A says retrieval is required — a filler turn makes no query
embedding and no vector query.
"""

from __future__ import annotations

from pmforge.core.models import Manifest, RetrievedSection, RetrievedTurn, RoutingDecision, SessionState, Turn
from pmforge.core.sentences import sentence_starts
from pmforge.core.settings import Settings
from pmforge.core.tokens import count_tokens, truncate_to_tokens
from pmforge.embed import Embeds
from pmforge.index.collections import ProjectStore
from pmforge.index.keyword import tokenize
from pmforge.index.retrieval import Query, find_sections, find_turns
from pmforge.knowledge import Catalogue
from pmforge.llm.inputs import AssembledContext
from pmforge.prompt import render
from pmforge.turn.acknowledge import without_acknowledgement
from pmforge.turn.remember import TERSE_WORDS

SHORT_QUERY_TERMS = 4  # a message with fewer content words than this is searched with the probe's topic too


def searchable_files(manifest: Manifest, decision: RoutingDecision, shared: bool) -> list[str] | None:
    """The file ids a turn may search (None: all the store holds). The files the router named, if any; on
    a shared server, otherwise this clone's listed files only: a teammate's upload is not this clone's
    source until it is merged into the manifest."""
    named = [f.file_id for f in manifest.file_summaries if f.filename in decision.document_filter]
    if named or not shared:
        return named or None
    return [f.file_id for f in manifest.file_summaries if f.indexed]


def document_query(message: str, decision: RoutingDecision, catalogue: Catalogue) -> str:
    """What documents and memory are searched with: the message and the router's own query. The active
    probe's name joins only when the message says too little to search on ("go on", "why?"): appended to
    a real question, its words pull in passages about the probe instead of the answer (measured: 0.87 vs
    0.94 of gold shown on heading-less documents)."""
    probe = catalogue.find_probe(decision.next_probe) if decision.next_probe else None
    parts = [message.strip()[:600], decision.retrieval_query.strip()]
    # A short question ("What does BORIS stand for?") says exactly what to search for: the probe's words would
    # only dilute its one rare term.
    if probe and len(set(tokenize(message))) < SHORT_QUERY_TERMS and not message.rstrip().endswith("?"):
        parts.append(probe.name)
    return "\n".join(dict.fromkeys(p for p in parts if p))


def document_block(s: RetrievedSection) -> str:
    # The citation holds the file name and headings, which the uploader wrote: escaped for the attribute.
    return (f'<document citation="{render.attribute(s.citation)}" offsets="{s.start}-{s.end}">\n'
            f"{render.inert(s.text)}\n</document>")


def fitted_documents(sections: list[RetrievedSection], budget: int) -> list[RetrievedSection]:
    """The passages that fit `budget`, in the order given; one that would overflow is left out rather than
    cut, so no answer is shown half (packing has normally fitted them already)."""
    shown, used = [], 0
    for s in sections:
        cost = count_tokens(document_block(s)) + 2
        if used + cost <= budget:
            shown.append(s)
            used += cost
    return shown


def format_documents(sections: list[RetrievedSection], budget: int) -> str:
    return "\n\n".join(document_block(s) for s in fitted_documents(sections, budget))


def side_excerpt(text: str, start: int, end: int, limit: int) -> str:
    """A long side of an earlier turn, shown as the sentences around its matched window."""
    starts = [0, *sentence_starts(text), len(text)]
    lo = max(s for s in starts if s <= max(0, start))
    hi = min((s for s in starts if s >= min(end, len(text))), default=len(text))
    excerpt = truncate_to_tokens(text[lo:hi].strip(), limit)
    return ("… " if lo > 0 else "") + excerpt + (" …" if hi < len(text) and not excerpt.endswith("…") else "")


def turn_block(t: RetrievedTurn, side_tokens: int, catalogue: Catalogue, with_asked: bool = True) -> str:
    """One earlier turn: short sides whole; a long side around the passage that matched (or its opening);
    a terse answer with the question it answered, unless `with_asked` is off (the turn before is shown)."""
    def side(name: str, text: str) -> str:
        if count_tokens(text) <= side_tokens:
            return text
        if t.match_side == name and t.match_end > t.match_start:
            return side_excerpt(text, t.match_start, t.match_end, 2 * side_tokens)
        return truncate_to_tokens(text, side_tokens // 2)

    probe = catalogue.find_probe(t.active_probe) if t.active_probe else None
    label = f"Turn {t.turn_number}" + (f" (Probe: {probe.name})" if probe else "")
    lines = [f'<turn label="{render.attribute(label)}">']
    if with_asked and t.asked and len(t.user.split()) <= TERSE_WORDS:
        lines.append(f"(Forge had asked: {render.inert(truncate_to_tokens(t.asked, side_tokens // 2))})")
    lines.append(f"PM: {render.inert(side('user', t.user))}")
    # Forge's "Recorded:" lines are not the model's words: a model that reads them back writes its own.
    lines.append(f"Forge: {render.inert(side('assistant', without_acknowledgement(t.assistant)))}")
    return "\n".join(lines) + "\n</turn>"


def _question_shown(t: RetrievedTurn, shown: dict[int, RetrievedTurn], side_tokens: int) -> bool:
    """Whether the turn before `t` is shown with Forge's reply whole and that reply holds the question `t`
    answered, so it is already in the section."""
    before = shown.get(t.turn_number - 1)
    return (before is not None and count_tokens(before.assistant) <= side_tokens
            and set(tokenize(t.asked)) <= set(tokenize(before.assistant)))


def _select(turns: list[RetrievedTurn], budget: int, catalogue: Catalogue,
            side_tokens: int) -> tuple[list[RetrievedTurn], int]:
    """The best-scored turns whose blocks fit `budget`, in chronological order, and the tokens each side
    was clipped to. A terse answer whose question is already shown in full (the turn before is chosen) is
    costed without repeating it. When even the best turn does not fit (a budget the fitting pass cut
    hard), its sides are clipped shorter rather than showing nothing."""
    ranked = sorted(turns, key=lambda t: t.score, reverse=True)
    for side in (side_tokens, side_tokens // 2, side_tokens // 4):
        chosen: list[RetrievedTurn] = []
        by_number: dict[int, RetrievedTurn] = {}
        used = 0
        for t in ranked:
            cost = count_tokens(turn_block(t, side, catalogue, not _question_shown(t, by_number, side))) + 2
            if used + cost <= budget:
                chosen.append(t)
                by_number.setdefault(t.turn_number, t)
                used += cost
        if chosen or not ranked:
            return sorted(chosen, key=lambda t: t.turn_number), side
    return [], side_tokens


def shown_turns(turns: list[RetrievedTurn], budget: int, catalogue: Catalogue,
                side_tokens: int = 120) -> list[RetrievedTurn]:
    return _select(turns, budget, catalogue, side_tokens)[0]


def format_turns(turns: list[RetrievedTurn], budget: int, catalogue: Catalogue, side_tokens: int = 120) -> str:
    shown, side = _select(turns, budget, catalogue, side_tokens)
    by_number = {t.turn_number: t for t in shown}
    return "\n\n".join(turn_block(t, side, catalogue, not _question_shown(t, by_number, side)) for t in shown)


def assemble(
    decision: RoutingDecision,
    state: SessionState,
    manifest: Manifest,
    message: str,
    turn_number: int,
    store: ProjectStore,
    embedder: Embeds,
    settings: Settings,
    catalogue: Catalogue,
) -> AssembledContext:
    ctx = AssembledContext(
        turn_number=turn_number,
        user_message=message,
        decision=decision,
        catalogue=catalogue,
        has_documents=any(f.indexed for f in manifest.file_summaries),
        previous_probe=state.active_probe,
        problem_statement=state.problem_brief.problem_statement,
        stakeholders=[s.name for s in state.problem_brief.stakeholders],
        org_context=manifest.org_context,
        assumption_ids=[x.id for x in state.assumptions if not x.retired],
        state=state,
    )
    s = ctx.sections
    s["context_block"] = render.context_block(manifest, settings.budget_context_block)
    s["assumptions"] = render.assumption_register(state.assumptions, settings.budget_assumptions)
    s["skeleton"] = render.skeleton(state, settings.budget_skeleton)
    s["routing_context"] = render.routing_context(state, settings.budget_routing_context, catalogue)

    probe = catalogue.find_probe(decision.next_probe) if decision.next_probe else None
    lookups = [probe.render()] if probe else []
    lookups += [p.render() for p in map(catalogue.find_pattern, decision.patterns) if p]
    s["probe"] = truncate_to_tokens("\n\n".join(lookups), settings.budget_probe)

    if decision.requires_retrieval:
        query = Query(document_query(message, decision, catalogue), embedder)
        file_ids = searchable_files(manifest, decision, store.shared)
        ctx.documents = [] if file_ids == [] else find_sections(
            store, query, settings.budget_documents, settings.document_retriever, settings, file_ids
        )
        s["documents"] = format_documents(ctx.documents, settings.budget_documents)
        found = find_turns(
            store, query, settings.conversation_turns, settings.conversation_retriever, settings,
            before_turn=turn_number - settings.recent_turns, boost_probe=decision.next_probe,
        )
        ctx.conversations = shown_turns(found, settings.budget_conversations, catalogue,
                                        settings.turn_side_whole_tokens)
        s["conversations"] = format_turns(
            ctx.conversations, settings.budget_conversations, catalogue, settings.turn_side_whole_tokens
        )

    recent: list[Turn] = state.turns[-settings.recent_turns :] if settings.recent_turns else []
    ctx.recent = render.recent_turns(recent, settings.budget_recent_turns)
    ctx.tokens = {name: count_tokens(text) for name, text in s.items()}
    ctx.tokens["recent_turns"] = sum(count_tokens(u) + count_tokens(a) for u, a in ctx.recent)
    return ctx
