"""The tools Phase B calls to keep the session's state current.

Each tool is one pydantic model: its docstring is the description the model sees,
its JSON schema is generated from the fields, and its arguments are validated
before they touch state. A bad call comes back to the model as an error result;
it never crashes the turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel, Field, ValidationError

from .knowledge import find_pattern, find_probe
from .llm.base import ToolSpec
from .models import (
    Assumption,
    AssumptionChange,
    AssumptionType,
    Confidence,
    Impact,
    ProjectState,
    SessionState,
)


@dataclass
class ToolContext:
    """The working copies a turn's tools may change; the orchestrator commits them only if the turn succeeds."""

    state: SessionState
    project_state: ProjectState
    turn_number: int
    active_probe: str | None = None


class ToolError(Exception):
    """Told back to the model as an `is_error` tool result."""


# ---------------------------------------------------------------- argument models

class RegisterAssumption(BaseModel):
    """Register an assumption the plan depends on: a hedged, unverified or second-hand claim."""

    claim: str = Field(min_length=5, max_length=400, description="The assumption, stated as a testable claim.")
    type: AssumptionType
    impact: Impact = Field(description="How much the plan suffers if this is wrong.")
    confidence: Confidence = "guessed"
    basis: str = Field("", max_length=400, description="Why the PM believes it (source, data, hearsay).")
    depends_on: list[str] = Field(default_factory=list, description="Ids of assumptions this one rests on, e.g. A2.")


class RecordProbe(BaseModel):
    """Record that a diagnostic probe is satisfied, so it is not asked again."""

    probe: str = Field(description="The probe's id or name from the catalogue.")
    evidence: str = Field("", max_length=400, description="What the PM said that satisfies it.")


class RecordPattern(BaseModel):
    """Record that a domain pattern was surfaced to the PM."""

    pattern: str = Field(description="The pattern's id or name from the catalogue.")
    evidence: str = Field("", max_length=400)


class UpdateProblemStatement(BaseModel):
    """Replace the problem statement in the problem brief (a problem, not a solution)."""

    problem_statement: str = Field(min_length=10, max_length=1200)


class UpdateTargetAudience(BaseModel):
    """Replace who has the problem, in the problem brief."""

    target_audience: str = Field(min_length=3, max_length=600)


class UpdateOrgContext(BaseModel):
    """Replace the organisation context (team, stakeholders, constraints); send the whole new text."""

    org_context: str = Field(min_length=3, max_length=3000)


# ---------------------------------------------------------------- effects

def _register_assumption(args: RegisterAssumption, ctx: ToolContext) -> str:
    known = {a.id for a in ctx.state.assumptions}
    unknown = [d for d in args.depends_on if d not in known]
    if unknown:
        raise ToolError(f"depends_on names unknown assumptions: {', '.join(unknown)}")
    duplicate = next((a for a in ctx.state.assumptions if a.claim.strip().lower() == args.claim.strip().lower()), None)
    if duplicate:
        return f"Already registered as {duplicate.id}; nothing added."
    assumption = Assumption(
        id=ctx.state.next_assumption_id(),
        claim=args.claim.strip(),
        type=args.type,
        impact=args.impact,
        confidence=args.confidence,
        basis=args.basis.strip(),
        depends_on=args.depends_on,
        surfaced_by=ctx.active_probe or "",
        surfaced_turn=ctx.turn_number,
        history=[AssumptionChange(turn=ctx.turn_number, field="created", new=args.claim.strip())],
    )
    ctx.state.assumptions.append(assumption)
    return f"Registered {assumption.id}."


def _record_probe(args: RecordProbe, ctx: ToolContext) -> str:
    probe = find_probe(args.probe)
    if probe is None:
        raise ToolError(f"'{args.probe}' is not a probe in the catalogue.")
    fired = ctx.state.routing.probes_fired
    if probe.id not in fired:
        fired.append(probe.id)
    return f"Probe '{probe.name}' recorded as satisfied."


def _record_pattern(args: RecordPattern, ctx: ToolContext) -> str:
    pattern = find_pattern(args.pattern)
    if pattern is None:
        raise ToolError(f"'{args.pattern}' is not a pattern in the catalogue.")
    fired = ctx.state.routing.patterns_fired
    if pattern.id not in fired:
        fired.append(pattern.id)
    return f"Pattern '{pattern.name}' recorded."


def _update_problem_statement(args: UpdateProblemStatement, ctx: ToolContext) -> str:
    ctx.state.problem_brief.problem_statement = args.problem_statement.strip()
    return "Problem statement updated."


def _update_target_audience(args: UpdateTargetAudience, ctx: ToolContext) -> str:
    ctx.state.problem_brief.target_audience = args.target_audience.strip()
    return "Target audience updated."


def _update_org_context(args: UpdateOrgContext, ctx: ToolContext) -> str:
    ctx.project_state.org_context = args.org_context.strip()
    return "Organisation context replaced."


@dataclass(frozen=True)
class Tool:
    name: str
    model: type[BaseModel]
    effect: Callable[[BaseModel, ToolContext], str]

    def spec(self) -> ToolSpec:
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        description = (self.model.__doc__ or "").strip()
        schema.pop("description", None)
        return ToolSpec(name=self.name, description=description, input_schema=schema)


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool("register_assumption", RegisterAssumption, _register_assumption),
        Tool("record_probe", RecordProbe, _record_probe),
        Tool("record_pattern", RecordPattern, _record_pattern),
        Tool("update_problem_statement", UpdateProblemStatement, _update_problem_statement),
        Tool("update_target_audience", UpdateTargetAudience, _update_target_audience),
        Tool("update_org_context", UpdateOrgContext, _update_org_context),
    )
}


def tool_specs() -> list[ToolSpec]:
    return [tool.spec() for tool in TOOLS.values()]


def run_tool(name: str, raw_input: dict, ctx: ToolContext) -> tuple[bool, str]:
    """Validate and apply one call. Returns (ok, text for the model)."""
    tool = TOOLS.get(name)
    if tool is None:
        return False, f"Unknown tool '{name}'. Available: {', '.join(TOOLS)}."
    try:
        args = tool.model.model_validate(raw_input or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        return False, f"Invalid arguments for {name}: {problems}"
    try:
        return True, tool.effect(args, ctx)
    except ToolError as exc:
        return False, str(exc)
