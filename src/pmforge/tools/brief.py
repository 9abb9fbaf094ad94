"""Mode 1 skeleton tools: the problem brief's statement, audience, stakeholders, metrics and criteria."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..models import Stakeholder, StakeholderRole
from .base import Tool, ToolContext, ToolError


class UpdateProblemStatement(BaseModel):
    """Replace the problem statement in the problem brief (a problem, not a solution)."""

    problem_statement: str = Field(min_length=10, max_length=1200)


def update_problem_statement(args: UpdateProblemStatement, ctx: ToolContext) -> str:
    ctx.state.problem_brief.problem_statement = args.problem_statement.strip()
    return "Problem statement updated."


class UpdateTargetAudience(BaseModel):
    """Replace who has the problem, in the problem brief."""

    target_audience: str = Field(min_length=3, max_length=600)


def update_target_audience(args: UpdateTargetAudience, ctx: ToolContext) -> str:
    ctx.state.problem_brief.target_audience = args.target_audience.strip()
    return "Target audience updated."


def _stakeholder(ctx: ToolContext, name: str) -> Stakeholder | None:
    return next((s for s in ctx.state.problem_brief.stakeholders if s.name.casefold() == name.strip().casefold()), None)


class AddStakeholder(BaseModel):
    """Add a stakeholder to the problem brief with their role in the decision."""

    name: str = Field(min_length=2, max_length=120, description="Name, or role if unnamed (e.g. 'VP of stores').")
    role: StakeholderRole
    validated: bool = Field(False, description="True once the PM has confirmed their stance directly.")
    notes: str = Field("", max_length=400)


def add_stakeholder(args: AddStakeholder, ctx: ToolContext) -> str:
    if _stakeholder(ctx, args.name):
        raise ToolError(f"{args.name} is already listed; use update_stakeholder.")
    ctx.state.problem_brief.stakeholders.append(Stakeholder(**args.model_dump()))
    return f"Stakeholder {args.name} added."


class UpdateStakeholder(BaseModel):
    """Change a listed stakeholder's role, validation or notes (omit what stays)."""

    name: str
    role: StakeholderRole | None = None
    validated: bool | None = None
    notes: str | None = Field(None, max_length=400)


def update_stakeholder(args: UpdateStakeholder, ctx: ToolContext) -> str:
    found = _stakeholder(ctx, args.name)
    if found is None:
        raise ToolError(f"No stakeholder called {args.name}; add them with add_stakeholder.")
    for field, value in args.model_dump(exclude={"name"}, exclude_none=True).items():
        setattr(found, field, value)
    return f"Stakeholder {found.name} updated."


class RemoveStakeholder(BaseModel):
    """Remove a stakeholder listed by mistake."""

    name: str


def remove_stakeholder(args: RemoveStakeholder, ctx: ToolContext) -> str:
    found = _stakeholder(ctx, args.name)
    if found is None:
        raise ToolError(f"No stakeholder called {args.name}.")
    ctx.state.problem_brief.stakeholders.remove(found)
    return f"Stakeholder {found.name} removed."


class UpdateSuccessMetrics(BaseModel):
    """Set the success metrics; each list given replaces that list (omit a list to keep it)."""

    leading: list[str] | None = Field(None, description="Early signals that move within weeks.")
    lagging: list[str] | None = Field(None, description="The outcomes that finally matter.")
    anti_metrics: list[str] | None = Field(None, description="What must not get worse.")


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


def remove_decision_criterion(args: RemoveDecisionCriterion, ctx: ToolContext) -> str:
    items = getattr(ctx.state.problem_brief.decision_criteria, args.kind)
    match = next((c for c in items if c.casefold() == args.criterion.strip().casefold()), None)
    if match is None:
        raise ToolError(f"Not in {args.kind}: {args.criterion!r}. Listed: {items}")
    items.remove(match)
    return f"Removed from {args.kind}."


TOOLS = [
    Tool("update_problem_statement", UpdateProblemStatement, update_problem_statement),
    Tool("update_target_audience", UpdateTargetAudience, update_target_audience),
    Tool("add_stakeholder", AddStakeholder, add_stakeholder),
    Tool("update_stakeholder", UpdateStakeholder, update_stakeholder),
    Tool("remove_stakeholder", RemoveStakeholder, remove_stakeholder),
    Tool("update_success_metrics", UpdateSuccessMetrics, update_success_metrics),
    Tool("add_decision_criterion", AddDecisionCriterion, add_decision_criterion),
    Tool("remove_decision_criterion", RemoveDecisionCriterion, remove_decision_criterion),
]
