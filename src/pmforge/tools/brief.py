"""Mode 1 skeleton tools: the problem brief's statement, audience, stakeholders, metrics and criteria."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from pmforge.core.models import BriefChange, SessionState, Stakeholder, StakeholderRole
from pmforge.tools.assumptions import record_change
from pmforge.tools.base import ToolContext, ToolError, Toolset, and_list, quoted
from pmforge.understand.text import CURRENCY

TOOLS = Toolset()  # every @TOOLS.add below


class UpdateProblemStatement(BaseModel):
    """Replace the problem statement in the problem brief (a problem, not a solution)."""

    problem_statement: str = Field(min_length=10, max_length=1200)


@TOOLS.add
def update_problem_statement(args: UpdateProblemStatement, ctx: ToolContext) -> str:
    ctx.state.problem_brief.problem_statement = args.problem_statement.strip()
    return "Problem statement updated."


class UpdateTargetAudience(BaseModel):
    """Replace who has the problem, in the problem brief."""

    target_audience: str = Field(min_length=3, max_length=600)


@TOOLS.add
def update_target_audience(args: UpdateTargetAudience, ctx: ToolContext) -> str:
    ctx.state.problem_brief.target_audience = args.target_audience.strip()
    return "Target audience updated."


def stakeholder_named(state: SessionState, name: str) -> Stakeholder | None:
    """The brief's stakeholder of that name (case and surrounding spaces ignored), or None."""
    wanted = name.strip().casefold()
    return next((s for s in state.problem_brief.stakeholders if s.name.casefold() == wanted), None)


class AddStakeholder(BaseModel):
    """Add a stakeholder to the problem brief with their role in the decision."""

    name: str = Field(min_length=2, max_length=120, description="Name, or role if unnamed (e.g. 'VP of stores').")
    role: StakeholderRole
    validated: bool = Field(False, description="True once the PM has confirmed their stance directly.")
    notes: str = Field("", max_length=400)


@TOOLS.add
def add_stakeholder(args: AddStakeholder, ctx: ToolContext) -> str:
    if stakeholder_named(ctx.state, args.name):
        raise ToolError(f"{args.name} is already listed; use update_stakeholder.")
    ctx.state.problem_brief.stakeholders.append(Stakeholder(**args.model_dump()))
    return f"Stakeholder {args.name} added."


class UpdateStakeholder(BaseModel):
    """Change a listed stakeholder's role, validation or notes (omit what stays)."""

    name: str
    role: StakeholderRole | None = None
    validated: bool | None = None
    notes: str | None = Field(None, max_length=400)
    full_name: str | None = Field(None, min_length=2, max_length=120,
                                  description="Their fuller name, once given ('Priya' becomes 'Priya Shah').")


@TOOLS.add
def update_stakeholder(args: UpdateStakeholder, ctx: ToolContext) -> str:
    found = stakeholder_named(ctx.state, args.name)
    if found is None:
        raise ToolError(f"No stakeholder called {args.name}; add them with add_stakeholder.")
    if args.full_name and stakeholder_named(ctx.state, args.full_name) not in (None, found):
        raise ToolError(f"{args.full_name} is already listed; update that row instead.")
    for field, value in args.model_dump(exclude={"name", "full_name"}, exclude_none=True).items():
        setattr(found, field, value)
    if args.full_name:
        found.name = args.full_name.strip()
    return f"Stakeholder {found.name} updated."


class RemoveStakeholder(BaseModel):
    """Remove a stakeholder listed by mistake or no longer involved (the history keeps them)."""

    name: str
    reason: str = Field("", max_length=300)


@TOOLS.add
def remove_stakeholder(args: RemoveStakeholder, ctx: ToolContext) -> str:
    found = stakeholder_named(ctx.state, args.name)
    if found is None:
        raise ToolError(f"No stakeholder called {args.name}.")
    ctx.state.problem_brief.stakeholders.remove(found)
    ctx.state.brief_history.append(BriefChange(turn=ctx.turn_number, field="problem_brief.stakeholders",
                                               old=f"{found.name} ({found.role}) {found.notes}".strip(),
                                               reason=args.reason.strip()))
    return f"Stakeholder {found.name} removed."


class CorrectFact(BaseModel):
    """Replace a superseded value everywhere it appears in the brief, the evaluation and the register
    (e.g. old '4.8%', new '3.4%'); the history keeps the old value."""

    old: str = Field(min_length=1, max_length=200, description="The value as it is recorded now.")
    new: str = Field(min_length=1, max_length=200, description="The value the PM gave instead.")
    reason: str = Field("", max_length=300, description="The PM's words.")


def _replacer(old: str, new: str):
    digits = re.fullmatch(rf"[{CURRENCY}]?" r"\s?(\d[\d,]*(?:\.\d+)?)\s?(.*)", old.strip())
    if digits:
        # A number is matched as a number: 4.8 must not touch 14.8 or 4.85.
        new_digits = re.search(r"\d[\d,]*(?:\.\d+)?", new)
        pattern = re.compile(r"(?<![\d.,])" + re.escape(digits.group(1)) + r"(?![\d]|[.,]\d)")
        replacement = new_digits.group(0) if new_digits else new
    else:
        pattern = re.compile(r"\b" + re.escape(old.strip()) + r"\b", re.I)
        replacement = new.strip()
    return lambda text: pattern.sub(lambda _m: replacement, text)


def _replace_strings(node, fix, path: str, changed: list[str]):
    if isinstance(node, str):
        fixed = fix(node)
        if fixed != node:
            changed.append(path)
        return fixed
    if isinstance(node, dict):
        return {k: _replace_strings(v, fix, f"{path}.{k}", changed) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_strings(v, fix, path, changed) for v in node]
    return node


def apply_correction(state: SessionState, old: str, new: str, turn: int, reason: str) -> list[str]:
    """Rewrite every recorded string holding `old`; returns the fields changed."""
    fix = _replacer(old, new)
    changed: list[str] = []
    for name in ("problem_brief", "solution_evaluation"):
        model = getattr(state, name)
        fixed = _replace_strings(model.model_dump(), fix, name, changed)
        setattr(state, name, type(model).model_validate(fixed))
    for a in state.assumptions:
        if not a.retired and fix(a.claim) != a.claim:
            record_change(a, turn, "claim", a.claim, fix(a.claim), reason or f"corrected {old} → {new}")
            a.claim = fix(a.claim)
            changed.append(f"register.{a.id}")
    changed = list(dict.fromkeys(changed))
    for field in changed:
        state.brief_history.append(BriefChange(turn=turn, field=field, old=old, new=new, reason=reason))
    return changed


@TOOLS.add
def correct_fact(args: CorrectFact, ctx: ToolContext) -> str:
    changed = apply_correction(ctx.state, args.old, args.new, ctx.turn_number, args.reason.strip())
    if not changed:
        raise ToolError(f"'{args.old}' does not appear in the brief, the evaluation or the register.")
    places = sorted({c.split(".")[1] if c.count(".") else c for c in changed})
    return f"Corrected {args.old} → {args.new} in {', '.join(places)}."


class UpdateSuccessMetrics(BaseModel):
    """Set the success metrics; each list given replaces that list (omit a list to keep it)."""

    leading: list[str] | None = Field(None, description="Early signals that move within weeks.")
    lagging: list[str] | None = Field(None, description="The outcomes that finally matter.")
    anti_metrics: list[str] | None = Field(None, description="What must not get worse.")


@TOOLS.add
def update_success_metrics(args: UpdateSuccessMetrics, ctx: ToolContext) -> str:
    given = args.model_dump(exclude_none=True)
    if not given:
        raise ToolError("Give at least one of leading, lagging, anti_metrics.")
    for field, values in given.items():
        setattr(ctx.state.problem_brief.success_metrics, field, [v.strip() for v in values if v.strip()])
    return "Success metrics updated (" + ", ".join(given) + ")."


CriterionKind = Literal["proceed_if", "do_not_proceed_if"]


class AddDecisionCriterion(BaseModel):
    """Add a condition under which the PM should (or should not) proceed."""

    kind: CriterionKind
    criterion: str = Field(min_length=5, max_length=300)


@TOOLS.add
def add_decision_criterion(args: AddDecisionCriterion, ctx: ToolContext) -> str:
    items = getattr(ctx.state.problem_brief.decision_criteria, args.kind)
    if any(c.casefold() == args.criterion.strip().casefold() for c in items):
        return "Already listed."
    items.append(args.criterion.strip())
    return f"Added to {args.kind}."


class RemoveDecisionCriterion(BaseModel):
    """Remove a decision criterion, quoting it as listed."""

    kind: CriterionKind
    criterion: str


@TOOLS.add
def remove_decision_criterion(args: RemoveDecisionCriterion, ctx: ToolContext) -> str:
    items = getattr(ctx.state.problem_brief.decision_criteria, args.kind)
    match = next((c for c in items if c.casefold() == args.criterion.strip().casefold()), None)
    if match is None:
        raise ToolError(f"Not in {args.kind}: {args.criterion!r}. Listed: {items}")
    items.remove(match)
    return f"Removed from {args.kind}."


class UpdateProblemContext(BaseModel):
    """Set the problem brief's context: why now, what was tried before, what is out of scope, the one use case
    that must work first. Each field given replaces it (lists whole); omit what stays."""

    why_now: str | None = Field(None, max_length=600, description="The trigger that makes this urgent now, with its "
                                                                  "source or date.")
    tried_before: list[str] | None = Field(None, description="Earlier attempts at this problem and what became "
                                                             "of them.")
    out_of_scope: list[str] | None = Field(None, description="What this work deliberately leaves out.")
    day_one_use_case: str | None = Field(None, max_length=400, description="The one use case that has to work "
                                                                           "first.")


@TOOLS.add
def update_problem_context(args: UpdateProblemContext, ctx: ToolContext) -> str:
    given = args.model_dump(exclude_none=True)
    if not given:
        raise ToolError("Give at least one of why_now, tried_before, out_of_scope, day_one_use_case.")
    brief = ctx.state.problem_brief
    for field, value in given.items():
        setattr(brief, field, [v.strip() for v in value if v.strip()] if isinstance(value, list) else value.strip())
    return "Problem context updated (" + ", ".join(given) + ")."


# ---------------------------------------------------------------- what the PM is told

_ROLE_WORDS = {"decision_authority": "decision authority", "pain_holder": "someone who feels the pain",
               "status_quo_beneficiary": "someone who benefits from today's way",
               "execution_dependency": "someone who has to change or deliver", "other": "a stakeholder"}
_METRIC_WORDS = {"leading": "leading indicator", "lagging": "lagging outcome", "anti_metrics": "anti-metric"}
_CRITERION_WORDS = {"proceed_if": "go-ahead criterion", "do_not_proceed_if": "stop criterion"}
_CONTEXT_WORDS = {"why_now": "why now", "tried_before": "tried before", "out_of_scope": "out of scope",
                  "day_one_use_case": "day-one use case"}


def _brief_text(field: str, label: str):
    def ack(args, before, after, _org) -> str | None:
        old, new = getattr(before.problem_brief, field), getattr(after.problem_brief, field)
        if old == new:
            return None
        return f"Problem brief: {label} {'updated' if old else 'recorded'} — {quoted(new, 12)}"
    return ack


TOOLS.acknowledges(update_problem_statement)(_brief_text("problem_statement", "problem statement"))
TOOLS.acknowledges(update_target_audience)(_brief_text("target_audience", "target audience"))


@TOOLS.acknowledges(update_problem_context)
def _problem_context(args: UpdateProblemContext, before: SessionState, after: SessionState, _org: str) -> str | None:
    parts = []
    for field in args.model_dump(exclude_none=True):
        old, new = getattr(before.problem_brief, field), getattr(after.problem_brief, field)
        if old == new:
            continue
        if isinstance(new, list):
            added = [item for item in new if item not in old]
            parts.append(f"{_CONTEXT_WORDS[field]} — {quoted(added[-1], 12)}" if added
                         else f"{_CONTEXT_WORDS[field]} updated")
        else:
            parts.append(f"{_CONTEXT_WORDS[field]} {'updated' if old else 'recorded'} — {quoted(new, 12)}")
    return "Problem brief: " + "; ".join(parts) if parts else None


@TOOLS.acknowledges(add_stakeholder)
def _add_stakeholder(args: AddStakeholder, before: SessionState, after: SessionState, _org: str) -> str | None:
    added = stakeholder_named(after, args.name)
    if added is None or stakeholder_named(before, args.name) is not None:
        return None
    return f"{added.name} added as {_ROLE_WORDS.get(added.role, 'a stakeholder')}"


@TOOLS.acknowledges(update_stakeholder)
def _update_stakeholder(args: UpdateStakeholder, before: SessionState, after: SessionState, _org: str) -> str | None:
    now, then = stakeholder_named(after, args.full_name or args.name), stakeholder_named(before, args.name)
    if now is None:
        return None
    if then is not None and now.name != then.name:
        return f"{then.name} is {now.name}"
    if then is None or now.role != then.role:
        return f"{now.name} now listed as {_ROLE_WORDS.get(now.role, 'a stakeholder')}"
    if now.validated and not then.validated:
        return f"{now.name}: stance confirmed"
    return f"{now.name}: notes updated" if now.notes != then.notes else None


@TOOLS.acknowledges(remove_stakeholder)
def _remove_stakeholder(args: RemoveStakeholder, before: SessionState, after: SessionState, _org: str) -> str | None:
    gone = stakeholder_named(before, args.name)
    if gone is None or stakeholder_named(after, args.name) is not None:
        return None
    return f"{gone.name} removed from the stakeholders (kept in the history)"


@TOOLS.acknowledges(correct_fact)
def _correct(args: CorrectFact, before: SessionState, after: SessionState, _org: str) -> str | None:
    changes = [c for c in after.brief_history[len(before.brief_history):] if c.old == args.old]
    if not changes:
        return None
    places = list(dict.fromkeys("the register" if c.field.startswith("register") else
                                c.field.split(".")[0].replace("_", " ") for c in changes))
    return f"Corrected {quoted(args.old, 8)} → {quoted(args.new, 8)} in {and_list(places)}"


@TOOLS.acknowledges(update_success_metrics)
def _metrics(args: UpdateSuccessMetrics, before: SessionState, after: SessionState, _org: str) -> str | None:
    recorded: dict[str, list[str]] = {}  # metric text -> its kinds: one sentence that sets a target and its
    updated: list[str] = []              # guardrail is quoted once, with both kinds
    for field in args.model_dump(exclude_none=True):
        old, new = getattr(before.problem_brief.success_metrics, field), getattr(
            after.problem_brief.success_metrics, field)
        added = [m for m in new if m not in old]
        if added:
            recorded.setdefault(quoted(added[-1], 12), []).append(_METRIC_WORDS[field])
        elif new != old:
            updated.append(f"{_METRIC_WORDS[field]}s updated")
    parts = [f"{and_list(kinds)} recorded — {text}" for text, kinds in recorded.items()] + updated
    return "Problem brief: " + "; ".join(parts) if parts else None


@TOOLS.acknowledges(add_decision_criterion)
def _add_criterion(args: AddDecisionCriterion, before: SessionState, after: SessionState, _org: str) -> str | None:
    old = getattr(before.problem_brief.decision_criteria, args.kind)
    new = getattr(after.problem_brief.decision_criteria, args.kind)
    added = [c for c in new if c not in old and c.casefold() == args.criterion.strip().casefold()]
    return f"Problem brief: {_CRITERION_WORDS[args.kind]} added — {quoted(added[0], 12)}" if added else None


@TOOLS.acknowledges(remove_decision_criterion)
def _remove_criterion(args: RemoveDecisionCriterion, before: SessionState,
                      after: SessionState, _org: str) -> str | None:
    old = getattr(before.problem_brief.decision_criteria, args.kind)
    new = getattr(after.problem_brief.decision_criteria, args.kind)
    gone = [c for c in old if c not in new]
    return f"Problem brief: {_CRITERION_WORDS[args.kind]} removed — {quoted(gone[0], 12)}" if gone else None
