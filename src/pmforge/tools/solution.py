"""Mode 2 skeleton tools: the solution evaluation's risks, build-vs-buy, validation plan and go/no-go."""

from __future__ import annotations

from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from pmforge.core.models import BuildVsBuy, GoNoGo, RiskAssessment, RiskLevel, SessionState, ValidationPlan
from pmforge.tools.base import ToolContext, ToolError, Toolset, quoted

TOOLS = Toolset()  # every @TOOLS.add below


class SetSolutionInfo(BaseModel):
    """Name and describe the solution under evaluation."""

    name: str = Field(min_length=2, max_length=120)
    description: str = Field(min_length=10, max_length=1200)


@TOOLS.add
def set_solution_info(args: SetSolutionInfo, ctx: ToolContext) -> str:
    ctx.state.solution_evaluation.solution_name = args.name.strip()
    ctx.state.solution_evaluation.solution_description = args.description.strip()
    return "Solution recorded."


class SetRiskAssessment(BaseModel):
    """Rate one of the four risks from the evidence (replaces that dimension's assessment)."""

    dimension: Literal["value", "usability", "feasibility", "viability"]
    level: RiskLevel
    summary: str = Field(min_length=5, max_length=600)
    evidence_for: list[str] = Field(default_factory=list, description="Evidence the risk is under control.")
    evidence_against: list[str] = Field(default_factory=list, description="Evidence the risk is real.")


@TOOLS.add
def set_risk_assessment(args: SetRiskAssessment, ctx: ToolContext) -> str:
    setattr(ctx.state.solution_evaluation, f"{args.dimension}_risk",
            RiskAssessment(**args.model_dump(exclude={"dimension"})))
    return f"{args.dimension.title()} risk set to {args.level}."


class SetBuildVsBuy(BaseModel):
    """Record the build, buy or partner assessment."""

    recommendation: Literal["undecided", "build", "buy", "partner"]
    rationale: str = Field(min_length=5, max_length=800)
    options_considered: list[str] = Field(default_factory=list)


@TOOLS.add
def set_build_vs_buy(args: SetBuildVsBuy, ctx: ToolContext) -> str:
    ctx.state.solution_evaluation.build_vs_buy = BuildVsBuy(**args.model_dump())
    return f"Build vs buy: {args.recommendation}."


class SetValidationPlan(BaseModel):
    """Record the cheapest test of the riskiest assumption."""

    riskiest_assumption: str = Field("", description="The id of a registered assumption, e.g. A4 (empty until one is).")
    approach: str = Field(min_length=3, max_length=200, description="e.g. concierge test, fake door, pilot.")
    description: str = Field("", max_length=800)
    timeline: str = Field("", max_length=200)
    success_criteria: list[str] = Field(default_factory=list)


@TOOLS.add
def set_validation_plan(args: SetValidationPlan, ctx: ToolContext) -> str:
    ids = {a.id for a in ctx.state.assumptions if not a.retired}
    if args.riskiest_assumption and args.riskiest_assumption not in ids:
        raise ToolError(f"{args.riskiest_assumption} is not a registered assumption; register it first.")
    ctx.state.solution_evaluation.validation_plan = ValidationPlan(**args.model_dump())
    return "Validation plan recorded."


class SetGoNoGo(BaseModel):
    """Record the go / no-go recommendation with its conditions and dealbreakers."""

    recommendation: Literal["undecided", "go", "conditional_go", "no_go"]
    conditions: list[str] = Field(default_factory=list)
    dealbreakers: list[str] = Field(default_factory=list)


@TOOLS.add
def set_go_no_go(args: SetGoNoGo, ctx: ToolContext) -> str:
    if args.recommendation == "conditional_go" and not args.conditions:
        raise ToolError("A conditional go needs its conditions.")
    ctx.state.solution_evaluation.go_no_go = GoNoGo(**args.model_dump())
    return f"Go / no-go: {args.recommendation}."


# ---------------------------------------------------------------- what the PM is told


def _evaluation(describe: Callable[[Any, SessionState], str], *fields: str):
    # `describe` reads the tool's input (a different model for each tool) and the state after it
    def ack(args, before, after, _org) -> str | None:
        old, new = before.solution_evaluation, after.solution_evaluation
        if all(getattr(old, f) == getattr(new, f) for f in fields):
            return None
        return "Solution evaluation: " + describe(args, after)
    return ack


TOOLS.acknowledges(set_solution_info)(_evaluation(
    lambda a, s: f"evaluating {quoted(s.solution_evaluation.solution_name, 10)}",
    "solution_name", "solution_description"))


@TOOLS.acknowledges(set_risk_assessment)
def _risk(args, before, after, _org) -> str | None:
    field = f"{args.dimension}_risk"
    old, new = getattr(before.solution_evaluation, field), getattr(after.solution_evaluation, field)
    if old == new:
        return None
    if new.level == "unknown":
        return f"Solution evaluation: {args.dimension} risk evidence recorded (level not assessed yet)"
    return f"Solution evaluation: {args.dimension} risk rated {new.level}"


TOOLS.acknowledges(set_build_vs_buy)(_evaluation(lambda a, s: "build vs buy — " + (
    "undecided" if a.recommendation == "undecided" else f"leaning {a.recommendation}"), "build_vs_buy"))


def _validation(args, state: SessionState) -> str:
    plan = state.solution_evaluation.validation_plan
    detail = [plan.approach] + ([plan.timeline] if plan.timeline else []) + (
        [f"testing {plan.riskiest_assumption}"] if plan.riskiest_assumption else [])
    return "validation plan recorded (" + ", ".join(quoted(d, 8) for d in detail) + ")"


TOOLS.acknowledges(set_validation_plan)(_evaluation(_validation, "validation_plan"))


TOOLS.acknowledges(set_go_no_go)(_evaluation(
    lambda a, s: f"go / no-go — {a.recommendation.replace('_', ' ')}", "go_no_go"))
