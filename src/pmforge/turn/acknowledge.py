"""What a turn recorded, told back to the PM in a line or a short list at the end of the reply.

Worded from what Forge knows for certain — each successful tool call's validated arguments and the state
before and after the turn's tools ran (the ids the register assigned, the dependants a status change put at
risk) — never from the model's prose, so the line is the same with Claude and with the offline interviewer,
and it never claims what did not happen: a call that changed nothing (a duplicate claim, a criterion
already listed) is not acknowledged. Bookkeeping the PM never asked for (probes, patterns, the running
summary) is left out.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from pmforge.core.models import SessionState, ToolCallRecord
from pmforge.tools import TOOLS, brief
from pmforge.tools import assumptions as register
from pmforge.understand.extractive import sentences
from pmforge.understand.text import clip_words

HEADING = "**Recorded:**"

_ROLE = {"decision_authority": "decision authority", "pain_holder": "someone who feels the pain",
         "status_quo_beneficiary": "someone who benefits from today's way",
         "execution_dependency": "someone who has to change or deliver", "other": "a stakeholder"}
_METRIC = {"leading": "leading indicator", "lagging": "lagging outcome", "anti_metrics": "anti-metric"}
_CRITERION = {"proceed_if": "go-ahead criterion", "do_not_proceed_if": "stop criterion"}
_MODE = {"mode_1": "Mode 1 (Discover & Frame)", "mode_2": "Mode 2 (Evaluate Solution)"}
_ARTIFACT = {"problem_brief": "Problem brief saved (Markdown and Word)",
             "solution_evaluation": "Solution evaluation saved (Markdown and Word)",
             "assumption_register": "Assumption register saved (JSON and CSV)"}


def _quote(text: str, words: int = 16) -> str:
    """A recorded value on one line, short, without end punctuation (a trailing '?' would read as a
    question Forge asked)."""
    return clip_words(" ".join(str(text).split()), words).rstrip(" .?!;:")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _transitive_dependants(state: SessionState, ident: str) -> list[str]:
    return register._all_dependents(state, ident)


# ---------------------------------------------------------------- one line per tool

Ack = Callable[[BaseModel, SessionState, SessionState, str], "str | None"]


def _register(args, before, after, _org) -> str | None:
    claim = " ".join(args.claim.split()).casefold()
    added = next((a for a in after.assumptions if " ".join(a.claim.split()).casefold() == claim), None)
    if added is None or register.assumption_with_id(before, added.id) is not None:
        return None  # already registered before this turn: nothing added
    return f"Added {added.id} — {_quote(added.claim)}"


def _status(args, before, after, _org) -> str | None:
    now, then = register.assumption_with_id(after, args.id), register.assumption_with_id(before, args.id)
    if now is None or (then is not None and then.status == now.status):
        return None
    line = f"{now.id} marked {now.status.replace('_', ' ')}"
    if now.status == "invalidated":
        was_active = {a.id for a in before.assumptions if a.status == "active"}
        at_risk = [d for d in _transitive_dependants(after, now.id)
                   if (dep := register.assumption_with_id(after, d)) is not None and dep.status == "at_risk"
                   and d in was_active]
        if at_risk:
            line += f"; {_and(at_risk)} now at risk"
    elif now.status == "confirmed":
        was_guessed = {a.id for a in before.assumptions if a.confidence == "guessed"}
        upgraded = [d for d in _transitive_dependants(after, now.id)
                    if (dep := register.assumption_with_id(after, d)) is not None and dep.confidence == "informed"
                    and d in was_guessed]
        if upgraded:
            line += f"; {_and(upgraded)} upgraded to informed"
    return line


def _confidence(args, before, after, _org) -> str | None:
    now, then = register.assumption_with_id(after, args.id), register.assumption_with_id(before, args.id)
    if now is None or (then is not None and then.confidence == now.confidence):
        return None
    return f"{now.id} confidence now {now.confidence}"


def _edit(args, before, after, _org) -> str | None:
    now, then = register.assumption_with_id(after, args.id), register.assumption_with_id(before, args.id)
    if now is None:
        return None
    fields = [f for f in args.model_dump(exclude={"id", "reason"}, exclude_none=True)
              if then is None or getattr(then, f) != getattr(now, f)]
    if not fields:
        return None
    if fields == ["claim"]:
        return f"{now.id} now reads — {_quote(now.claim)}"
    return f"{now.id} edited ({', '.join(f.replace('_', ' ') for f in fields)})"


def _retire(args, before, after, _org) -> str | None:
    now, then = register.assumption_with_id(after, args.id), register.assumption_with_id(before, args.id)
    if now is None or not now.retired or (then is not None and then.retired):
        return None
    still = register.dependents(after, now.id)
    return f"{now.id} retired" + (f"; {_and(still)} still rest on it" if still else "")


def _brief_text(field: str, label: str):
    def ack(args, before, after, _org) -> str | None:
        old, new = getattr(before.problem_brief, field), getattr(after.problem_brief, field)
        if old == new:
            return None
        return f"Problem brief: {label} {'updated' if old else 'recorded'} — {_quote(new, 12)}"
    return ack


_CONTEXT_LABELS = {"why_now": "why now", "tried_before": "tried before", "out_of_scope": "out of scope",
                   "day_one_use_case": "day-one use case"}


def _problem_context(args, before, after, _org) -> str | None:
    parts = []
    for field in args.model_dump(exclude_none=True):
        old, new = getattr(before.problem_brief, field), getattr(after.problem_brief, field)
        if old == new:
            continue
        if isinstance(new, list):
            added = [item for item in new if item not in old]
            parts.append(f"{_CONTEXT_LABELS[field]} — {_quote(added[-1], 12)}" if added
                         else f"{_CONTEXT_LABELS[field]} updated")
        else:
            parts.append(f"{_CONTEXT_LABELS[field]} {'updated' if old else 'recorded'} — {_quote(new, 12)}")
    return "Problem brief: " + "; ".join(parts) if parts else None


def _add_stakeholder(args, before, after, _org) -> str | None:
    added = brief.stakeholder_named(after, args.name)
    if added is None or brief.stakeholder_named(before, args.name) is not None:
        return None
    return f"{added.name} added as {_ROLE.get(added.role, 'a stakeholder')}"


def _update_stakeholder(args, before, after, _org) -> str | None:
    now, then = brief.stakeholder_named(after, args.name), brief.stakeholder_named(before, args.name)
    if now is None:
        return None
    if then is None or now.role != then.role:
        return f"{now.name} now listed as {_ROLE.get(now.role, 'a stakeholder')}"
    if now.validated and not then.validated:
        return f"{now.name}: stance confirmed"
    return f"{now.name}: notes updated" if now.notes != then.notes else None


def _remove_stakeholder(args, before, after, _org) -> str | None:
    gone = brief.stakeholder_named(before, args.name)
    if gone is None or brief.stakeholder_named(after, args.name) is not None:
        return None
    return f"{gone.name} removed from the stakeholders (kept in the history)"


def _correct(args, before, after, _org) -> str | None:
    changes = [c for c in after.brief_history[len(before.brief_history):] if c.old == args.old]
    if not changes:
        return None
    places = list(dict.fromkeys("the register" if c.field.startswith("register") else
                                c.field.split(".")[0].replace("_", " ") for c in changes))
    return f"Corrected {_quote(args.old, 8)} → {_quote(args.new, 8)} in {_and(places)}"


def _metrics(args, before, after, _org) -> str | None:
    recorded: dict[str, list[str]] = {}  # metric text -> its kinds: one sentence that sets a target and its
    updated: list[str] = []              # guardrail is quoted once, with both kinds
    for field in args.model_dump(exclude_none=True):
        old, new = getattr(before.problem_brief.success_metrics, field), getattr(
            after.problem_brief.success_metrics, field)
        added = [m for m in new if m not in old]
        if added:
            recorded.setdefault(_quote(added[-1], 12), []).append(_METRIC[field])
        elif new != old:
            updated.append(f"{_METRIC[field]}s updated")
    parts = [f"{_and(kinds)} recorded — {text}" for text, kinds in recorded.items()] + updated
    return "Problem brief: " + "; ".join(parts) if parts else None


def _add_criterion(args, before, after, _org) -> str | None:
    old = getattr(before.problem_brief.decision_criteria, args.kind)
    new = getattr(after.problem_brief.decision_criteria, args.kind)
    added = [c for c in new if c not in old and c.casefold() == args.criterion.strip().casefold()]
    return f"Problem brief: {_CRITERION[args.kind]} added — {_quote(added[0], 12)}" if added else None


def _remove_criterion(args, before, after, _org) -> str | None:
    old = getattr(before.problem_brief.decision_criteria, args.kind)
    new = getattr(after.problem_brief.decision_criteria, args.kind)
    gone = [c for c in old if c not in new]
    return f"Problem brief: {_CRITERION[args.kind]} removed — {_quote(gone[0], 12)}" if gone else None


def _org_context(args, before, after, org_before: str) -> str | None:
    new = " ".join(args.org_context.split())
    if new == " ".join(org_before.split()):
        return None
    known = set(sentences(org_before))
    fresh = [s for s in sentences(new) if s not in known]
    return "Org context updated" + (f": {_quote(' '.join(fresh), 16)}" if fresh else "")


def _evaluation(describe: Callable[[Any, SessionState], str], *fields: str):
    # `describe` reads the tool's input (a different model for each tool) and the state after it
    def ack(args, before, after, _org) -> str | None:
        old, new = before.solution_evaluation, after.solution_evaluation
        if all(getattr(old, f) == getattr(new, f) for f in fields):
            return None
        return "Solution evaluation: " + describe(args, after)
    return ack


def _risk(args, before, after, _org) -> str | None:
    field = f"{args.dimension}_risk"
    old, new = getattr(before.solution_evaluation, field), getattr(after.solution_evaluation, field)
    if old == new:
        return None
    if new.level == "unknown":
        return f"Solution evaluation: {args.dimension} risk evidence recorded (level not assessed yet)"
    return f"Solution evaluation: {args.dimension} risk rated {new.level}"


def _validation(args, state: SessionState) -> str:
    plan = state.solution_evaluation.validation_plan
    detail = [plan.approach] + ([plan.timeline] if plan.timeline else []) + (
        [f"testing {plan.riskiest_assumption}"] if plan.riskiest_assumption else [])
    return "validation plan recorded (" + ", ".join(_quote(d, 8) for d in detail) + ")"


def _complete(args, before, after, _org) -> str | None:
    if args.mode in before.routing.completed_modes or args.mode not in after.routing.completed_modes:
        return None
    return f"{_MODE[args.mode]} marked complete"


def _artifact(args, before, after, _org) -> str | None:
    return _ARTIFACT[args.kind]


_ACKS: dict[str, Ack] = {
    "register_assumption": _register,
    "update_assumption_status": _status,
    "update_assumption_confidence": _confidence,
    "edit_assumption": _edit,
    "retire_assumption": _retire,
    "update_problem_statement": _brief_text("problem_statement", "problem statement"),
    "update_target_audience": _brief_text("target_audience", "target audience"),
    "add_stakeholder": _add_stakeholder,
    "update_stakeholder": _update_stakeholder,
    "remove_stakeholder": _remove_stakeholder,
    "correct_fact": _correct,
    "update_success_metrics": _metrics,
    "update_problem_context": _problem_context,
    "add_decision_criterion": _add_criterion,
    "remove_decision_criterion": _remove_criterion,
    "update_org_context": _org_context,
    "set_solution_info": _evaluation(lambda a, s: f"evaluating {_quote(s.solution_evaluation.solution_name, 10)}",
                                     "solution_name", "solution_description"),
    "set_risk_assessment": _risk,
    "set_build_vs_buy": _evaluation(lambda a, s: "build vs buy — " + (
        "undecided" if a.recommendation == "undecided" else f"leaning {a.recommendation}"), "build_vs_buy"),
    "set_validation_plan": _evaluation(_validation, "validation_plan"),
    "set_go_no_go": _evaluation(lambda a, s: f"go / no-go — {a.recommendation.replace('_', ' ')}", "go_no_go"),
    "complete_mode": _complete,
    "generate_artifact": _artifact,
    # record_probe, record_pattern, update_conversation_summary: Forge's own bookkeeping, not news to the PM.
}


def acknowledgement_lines(calls: list[ToolCallRecord], before: SessionState, after: SessionState,
                          org_before: str = "") -> list[str]:
    """One line per successful call that changed something, in call order, each said once.
    `org_before` is the organisation context as the turn began (it lives in the project manifest)."""
    lines: list[str] = []
    for call in calls:
        ack = _ACKS.get(call.name)
        if not call.ok or ack is None:
            continue
        try:
            args = TOOLS[call.name].model.model_validate(call.input or {})
        except ValidationError:  # it validated when it ran; a record from an older schema may not
            continue
        line = ack(args, before, after, org_before)
        line = line and line[0].upper() + line[1:]  # a name typed in lower case still starts the line
        if line and line not in lines:
            lines.append(line)
    return lines


def acknowledgement(calls: list[ToolCallRecord], before: SessionState, after: SessionState,
                    org_before: str = "") -> str:
    """The turn's acknowledgement as Markdown: "" when nothing was recorded, one line for one change,
    a short list for several."""
    lines = acknowledgement_lines(calls, before, after, org_before)
    if not lines:
        return ""
    if len(lines) == 1:
        return f"{HEADING} {lines[0]}."
    return HEADING + "\n" + "\n".join(f"- {line}" for line in lines)


def with_acknowledgement(reply: str, ack: str) -> str:
    """The reply as saved and shown: the model's words, then what was recorded."""
    return "\n\n".join(part for part in (reply, ack) if part)


# ---------------------------------------------------------------- kept apart from the model's words

# A real acknowledgement as `with_acknowledgement` appends it: a paragraph of its own, one line or a list.
_ACK_BLOCK = re.compile(r"(?:\A|\n\n)" + re.escape(HEADING) + r"(?:[ \t][^\n]*|(?:\n- [^\n]*)+)(?=\n\n|\Z)")

# What in a model's text could pass for Forge's own words: the acknowledgement's heading (bold, underlined or
# a Markdown heading, with or without its colon) and the tool-protocol tags of chat templates.
_IMITATION = re.compile(
    r"\*\*[ \t]{0,3}recorded[ \t]{0,3}:?[ \t]{0,3}\*\*(?:[ \t]{0,3}:)?"
    r"|__[ \t]{0,3}recorded[ \t]{0,3}:?[ \t]{0,3}__(?:[ \t]{0,3}:)?"
    r"|#{1,6}[ \t]{0,3}recorded[ \t]{0,3}:"
    r"|<[ \t]{0,3}/?[ \t]{0,3}tool_(?:response|call|result|use)[ \t]{0,3}>", re.I)
_IMITATION_HOLD = 40  # longer than any imitation: a stream holds back at most this much while it may be one
_IMITATION_STARTS = "*_#<"
NOT_RECORDED = "Noted (not recorded by Forge):"


def _imitation_replacement(match: re.Match) -> str:
    return "" if match.group().startswith("<") else NOT_RECORDED


class ImitationGuard:
    """Neutralises imitations of Forge's acknowledgement in a model's streamed text, before it is shown:
    a "**Recorded:**" heading the model wrote reads "Noted (not recorded by Forge):", tool-protocol tags
    (`<tool_response>`, `<tool_call>`) are dropped. Feed the deltas in order, then `flush()`; what comes out,
    joined, is `neutralise(text)` however the text was cut into deltas."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> str:
        self._pending += text
        return self._release(final=False)

    def flush(self) -> str:
        return self._release(final=True)

    def _release(self, final: bool) -> str:
        text, cut = self._pending, len(self._pending)
        if not final:  # an imitation may be starting in the tail: hold it back until it is whole or is not one
            tail = max(len(text) - _IMITATION_HOLD, 0)
            cut = next((i for i in range(tail, len(text)) if text[i] in _IMITATION_STARTS), cut)
        out, pos = [], 0
        for match in _IMITATION.finditer(text):
            if match.end() > cut:
                cut = min(cut, match.start())
                break
            out += [text[pos:match.start()], _imitation_replacement(match)]
            pos = match.end()
        out.append(text[pos:cut])
        self._pending = text[cut:]
        return "".join(out)


def neutralise(text: str) -> str:
    """A model's whole text with its imitations of Forge's acknowledgement neutralised (see ImitationGuard)."""
    guard = ImitationGuard()
    return guard.feed(text) + guard.flush()


def without_acknowledgement(reply: str) -> str:
    """A saved reply as a model may read it again (history, memory, summaries): Forge's acknowledgements
    taken out, so no model learns to write its own "Recorded:" lines, and anything left that imitates them
    (a reply saved before imitations were neutralised) neutralised."""
    return neutralise(_ACK_BLOCK.sub("", reply)).strip()
