"""The rule router: how the offline interviewer decides what a turn is for, and what Phase A falls back to
when Claude's routing answer cannot be used. Pure functions of the session state, the PM's message and the
project's catalogue."""

from __future__ import annotations

import re
from collections import Counter

from pmforge.core.models import RouteAction, RoutingDecision, SessionState
from pmforge.core.settings import Settings
from pmforge.knowledge import Catalogue
from pmforge.llm.inputs import RouteInputs
from pmforge.prompt import render
from pmforge.understand import Understanding, filled_slots, speaks_beyond_session, understand
from pmforge.understand.text import is_filler

ROUTE_TOOL = "route"


def choose_probe(state: SessionState, order: tuple[str, ...], mode: str, satisfied: set[str],
                 max_asks: int) -> str | None:
    """The first open probe in the mode's `order`; one asked `max_asks` times without an answer steps aside
    for the next (it stays open), so the interview moves on instead of repeating itself."""
    open_probes = [p for p in order if p not in satisfied]
    if not open_probes:
        return None
    times = Counter(t.active_probe for t in state.turns if t.active_mode == mode)
    asked = {p: times[p] for p in open_probes}
    fresh = [p for p in open_probes if asked[p] < max_asks]
    return fresh[0] if fresh else min(open_probes, key=lambda p: (asked[p], order.index(p)))


def skeleton_ready(state: SessionState, mode: str, understood: Understanding) -> bool:
    """A mode completes on its own only when its skeleton has content, not just when probes are ticked."""
    filled = filled_slots(state, understood)
    if mode == "mode_1":
        return "problem" in filled and bool(filled & {"metric_leading", "metric_lagging", "metric_anti"})
    rated = sum(1 for dim in ("value", "usability", "feasibility", "viability") if f"{dim}_risk" in filled)
    return bool(state.solution_evaluation.solution_name or understood.solution_name) and rated >= 2


def read_message(message: str, state: SessionState, catalogue: Catalogue) -> Understanding:
    """The PM's own words this turn, understood (cached: Phase B reads the same result)."""
    words = render.own_words(message)
    return understand(words, state, filler=is_filler(message) or not words, catalogue=catalogue)


def _name_words(text: str) -> set[str]:
    """A file name's or a message's words as compared: lower case, a plural's "s" gone, no digits-only years."""
    words = re.findall(r"[a-z][a-z0-9]*", text.lower())
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words}


def files_named(message: str, filenames: list[str]) -> list[str]:
    """The uploaded files a message names by their words ("the returns glossary" → returns-glossary.md, "the Q3
    returns metrics report" → q3-2025-returns-metrics.docx): at least two of a file name's words, and at least
    two thirds of them, are in the message. Only the best-named files are kept, so one shared word with a
    second file does not name it too."""
    said = _name_words(message)
    scored = []
    for filename in filenames:
        stem = filename.rsplit(".", 1)[0]
        words = _name_words(stem)
        found = words & said
        if len(found) >= 2 and len(found) >= 2 * len(words) / 3:
            scored.append((len(found) / len(words), filename))
    best = max((score for score, _ in scored), default=0.0)
    return [name for score, name in scored if score == best]


def rule_route(inputs: RouteInputs, settings: Settings) -> RoutingDecision:
    state, message = inputs.state, inputs.message
    mode = state.active_mode
    lowered = message.lower()
    filler = is_filler(message)
    catalogue = inputs.catalogue
    understood = read_message(message, state, catalogue)
    query = "" if filler else message[:settings.retrieval_query_chars]
    if mode == "mode_1" and understood.intent == "evaluate":
        satisfied = {p.probe for p in understood.probes}
        next_probe = choose_probe(state, catalogue.order("mode_2"), "mode_2", satisfied, settings.probe_max_asks)
        return RoutingDecision(
            action="enter_mode", mode="mode_2", next_probe=next_probe,
            requires_retrieval=True, retrieval_query=query,
            reasoning=f"The PM asked to evaluate {understood.solution_name or 'a solution'}.",
        )
    satisfied = set(state.routing.probes_fired) | {p.probe for p in understood.probes}
    next_probe = choose_probe(state, catalogue.order(mode), mode, satisfied, settings.probe_max_asks)
    patterns = [] if filler else [
        p.id for p in catalogue.patterns_for(mode)
        if p.id not in state.routing.patterns_fired and any(t in lowered for t in p.triggers)
    ][:2]
    substantive_since = sum(
        1 for t in state.turns if t.number > state.routing.last_synthesis_turn and not is_filler(t.user)
    )
    # A synthesis, a write-up or a question about the method searches only when it names something the
    # files or earlier turns may hold ("summarise what the vendor said about pricing").
    no_search = (understood.intent in ("summarize", "artifact", "meta", "wrap_up", "question_method")
                 and not speaks_beyond_session(render.own_words(message)))
    action: RouteAction
    # Completing once is enough: later turns refine the brief instead of regenerating it every turn.
    if mode not in state.routing.completed_modes and (
            understood.intent == "wrap_up" or (next_probe is None and skeleton_ready(state, mode, understood))):
        action, reason = "complete_mode", ("The PM asked to wrap up." if understood.intent == "wrap_up"
                                           else "Every probe of this mode is answered and the skeleton has content.")
    elif understood.intent == "summarize" or (
            not filler and understood.intent == "statement" and substantive_since >= settings.micro_synthesis_every):
        action, reason = "micro_synthesize", ("The PM asked where things stand." if understood.intent == "summarize"
                                              else f"{substantive_since} substantive turns since the last synthesis.")
    elif filler:
        action, reason = "continue_mode", "Filler turn: keep going without retrieval."
    else:
        action, reason = "ask_questions", "Pursue the first probe the PM has not answered yet."
    searches = not (filler or no_search)
    named = files_named(render.own_words(message), [f.filename for f in inputs.manifest.file_summaries
                                                    if f.indexed]) if searches else []
    return RoutingDecision(
        action=action, mode=mode, next_probe=next_probe, patterns=patterns, requires_retrieval=searches,
        retrieval_query="" if no_search else query, document_filter=named, reasoning=reason,
    )
