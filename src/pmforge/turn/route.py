"""Phase A: decide what this turn is for, from compact state only (never the full history).

On Claude the decision is a forced tool call whose input schema is `RoutingDecision`;
an invalid answer gets one repair attempt, then the rule router decides (and says so).
The rule router is also the offline default.
"""

from __future__ import annotations

import logging
import re
import sys

from pydantic import ValidationError

from pmforge.core.errors import ForgeError, without_kept_note
from pmforge.core.models import RoutingDecision
from pmforge.core.settings import Settings
from pmforge.interviewer.rules import ROUTE_TOOL, RouteInputs, rule_route
from pmforge.llm.base import LLM, ChatRequest, SystemBlock, ToolSpec, model_schema
from pmforge.llm.messages import Message, ToolResult
from pmforge.prompt import render
from pmforge.prompt.wording import ROUTE_TOOL_DESCRIPTION, ROUTER_INSTRUCTIONS
from pmforge.tools import guard
from pmforge.turn.acknowledge import without_acknowledgement
from pmforge.understand import evaluation_target
from pmforge.understand.text import is_filler

log = logging.getLogger(__name__)




def build_route_request(inputs: RouteInputs, settings: Settings) -> ChatRequest:
    schema = model_schema(RoutingDecision)
    request = ChatRequest(
        purpose="route",
        model=settings.phase_a_model,
        system=[
            SystemBlock(text=ROUTER_INSTRUCTIONS, cache=False, label="router"),
            SystemBlock(text="## Catalogue\n" + inputs.catalogue.text(inputs.state.active_mode),
                        label="catalogue"),
        ],
        messages=[],
        tools=[ToolSpec(name=ROUTE_TOOL, description=ROUTE_TOOL_DESCRIPTION, input_schema=schema)],
        tool_choice={"type": "tool", "name": ROUTE_TOOL},
        max_tokens=settings.phase_a_max_output_tokens,
        context=inputs,
    )
    # The state slices have their own budgets; if the whole still overflows, shrink the recent turns first.
    for shrink in (1.0, 0.5, 0.25, 0.0):
        request.messages = [Message.user(_route_body(inputs, settings, shrink))]
        if request.token_count() <= settings.phase_a_budget:
            break
    return request


def _route_body(inputs: RouteInputs, settings: Settings, shrink: float) -> str:
    state = inputs.state
    recent_budget = int(settings.phase_a_recent_turns * shrink)
    recent = render.recent_turns(state.turns[-2:], recent_budget) if recent_budget >= 80 else []
    recent_text = "\n".join(
        f'<turn label="Turn -{len(recent) - i}">\nPM: {render.inert(u)}\n'
        f'Forge: {render.inert(without_acknowledgement(a))}\n</turn>'
        for i, (u, a) in enumerate(recent)
    )
    return "\n\n".join(
        part for part in (
            render.context_block(inputs.manifest, settings.phase_a_context_block),
            "## Assumptions\n" + render.assumption_counts(state.assumptions),
            "## Routing context\n" + render.routing_context(state, settings.phase_a_routing_context, inputs.catalogue),
            "## Recent turns\n" + recent_text if recent_text else "",
            "## New message from the PM\n"
            + render.quote(inputs.message, settings.phase_a_message if shrink else settings.phase_a_message // 2),
        ) if part
    )


_SWITCH = re.compile(r"\b(mode[ _]?[12]|mode (?:one|two)|evaluat\w*|solution|problem|discover\w*|fram\w*|switch\w*|"
                     r"move on|next (?:mode|phase|step)|back to|wrap\w* up)\b", re.I)


def _steered(decision: RoutingDecision, inputs: RouteInputs) -> str:
    """Why a mode change the router proposed is not backed by the PM's own words or the probe record
    ("" when it is). The router reads file summaries and earlier turns, which untrusted text can reach."""
    state, words = inputs.state, render.own_words(inputs.message)
    if (decision.action == "enter_mode" and decision.mode != state.active_mode and not _SWITCH.search(words)
            and evaluation_target(words) is None):
        return "a mode switch needs the PM's own words"
    if decision.action == "complete_mode":
        done = guard.probes_done(state.routing.probes_fired, state.active_probe, words)
        if guard.completion_refusal(inputs.catalogue, decision.mode, done, words, state.active_mode):
            return "completing a mode needs its probes satisfied or the PM's own words"
    return ""


def _sanitise(decision: RoutingDecision, inputs: RouteInputs, settings: Settings) -> RoutingDecision:
    """Names outside the catalogue are replaced; unmistakable filler never triggers retrieval; a mode
    switch or completion the PM did not ask for and the probe record does not support is dropped."""
    fallback = ruled(inputs, settings)
    steered = _steered(decision, inputs)
    if steered:
        log.warning("router proposed %s for %s without grounds; kept the rule router's action", decision.action,
                    decision.mode)
        keep = fallback.action if fallback.action not in ("enter_mode", "complete_mode") else "ask_questions"
        decision = decision.model_copy(update={
            "action": keep, "mode": inputs.state.active_mode, "next_probe": fallback.next_probe,
            "reasoning": f"{decision.reasoning} (Not {decision.action}: {steered}.)".strip(),
        })
    catalogue = inputs.catalogue
    probe = catalogue.find_probe(decision.next_probe) if decision.next_probe else None
    decision.next_probe = probe.id if probe else fallback.next_probe
    decision.patterns = [p.id for p in map(catalogue.find_pattern, decision.patterns) if p]
    known = {f.filename.casefold(): f.filename for f in inputs.manifest.file_summaries if f.indexed}
    decision.document_filter = [known[n.casefold()] for n in decision.document_filter if n.casefold() in known]
    if is_filler(inputs.message):
        decision.requires_retrieval = False
        decision.retrieval_query = ""
    elif decision.requires_retrieval and not decision.retrieval_query.strip():
        decision.retrieval_query = inputs.message[:settings.retrieval_query_chars]
    return decision


_ANNOUNCED: set[str] = set()  # the kinds of fallback already said on stderr by this process


def announce_fallback(kind: str, note: str) -> None:
    """Say on stderr, once per process for each kind of cause, that the rule router decided instead of the
    model (each turn's routing reasoning records it too); never inside a reply."""
    if kind in _ANNOUNCED:
        return
    _ANNOUNCED.add(kind)
    print(f"Forge: routing fell back to the rule router — {note} (said once; each turn's routing records it).",
          file=sys.stderr, flush=True)


def ruled(inputs: RouteInputs, settings: Settings) -> RoutingDecision:
    """The rule router's decision for this turn, made once: the offline router answers with it, and Phase A
    falls back to it or takes its probe."""
    if inputs.rule_decision is None:
        inputs.rule_decision = rule_route(inputs, settings)
    return inputs.rule_decision


def _fallback(inputs: RouteInputs, settings: Settings, note: str, kind: str) -> RoutingDecision:
    log.warning(note)
    announce_fallback(kind, note)
    decision = ruled(inputs, settings)
    return decision.model_copy(update={"reasoning": f"Fallback — {note} {decision.reasoning}"})


def route(llm: LLM, inputs: RouteInputs, settings: Settings) -> tuple[RoutingDecision, ChatRequest, str]:
    """Returns the decision, the Phase A request (for token accounting) and a note when the fallback decided."""
    ruled(inputs, settings)
    request = build_route_request(inputs, settings)
    try:
        response = llm.complete(request)
    except ForgeError as exc:
        cause = without_kept_note(str(exc)).rstrip(".")  # no message is lost here
        note = f"Router unavailable ({cause}); the rule router decided."
        return _fallback(inputs, settings, note, "unavailable"), request, note
    for attempt in range(2):
        call = next((t for t in response.tool_calls if t.name == ROUTE_TOOL), None)
        try:
            if call is None:
                raise ValueError("no route tool call in the answer")
            return _sanitise(RoutingDecision.model_validate(call.input), inputs, settings), request, ""
        except (ValidationError, ValueError) as exc:
            if attempt == 1:
                note = f"Router answer invalid twice ({str(exc).splitlines()[0]}); the rule router decided."
                return _fallback(inputs, settings, note, "invalid"), request, note
            repair = request.model_copy(deep=True)
            answered = response.as_message()
            repair.messages = request.messages + [answered if answered.parts else Message.assistant("(none)")]
            if call is not None:
                repair.messages.append(Message(role="user", parts=[ToolResult(
                    call_id=call.id, is_error=True,
                    content=f"Invalid routing decision: {exc}. Call route again with valid fields.")]))
            else:
                repair.messages.append(Message.user("Call the route tool with a valid decision."))
            repair.context = inputs
            try:
                response = llm.complete(repair)
            except ForgeError:
                response = response.model_copy(update={"tool_calls": []})
    raise AssertionError("unreachable")
