"""The assumption register: register, re-rate, edit, retire — and the cascade through dependencies.

Invalidating an assumption puts every active dependent, at any depth, at risk; confirming one
upgrades guessed dependents to informed. A dependency that would close a cycle is refused.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from pmforge.core.models import (
    Assumption,
    AssumptionChange,
    AssumptionStatus,
    AssumptionType,
    Confidence,
    Impact,
    SessionState,
)
from pmforge.tools.base import ToolContext, ToolError, Toolset, and_list, quoted

TOOLS = Toolset()  # every @TOOLS.add below


def dependents(state: SessionState, assumption_id: str) -> list[str]:
    return [a.id for a in state.assumptions if assumption_id in a.depends_on and not a.retired]


def _all_dependents(state: SessionState, assumption_id: str) -> list[str]:
    """Every assumption resting on this one, directly or through others, breadth first."""
    seen: list[str] = []
    frontier = [assumption_id]
    while frontier:
        nxt = []
        for current in frontier:
            for d in dependents(state, current):
                if d not in seen and d != assumption_id:
                    seen.append(d)
                    nxt.append(d)
        frontier = nxt
    return seen


def assumption_with_id(state: SessionState, assumption_id: str) -> Assumption | None:
    """The register's assumption with that id (A3, a3, " A3 "), or None."""
    wanted = assumption_id.strip().casefold()
    return next((a for a in state.assumptions if a.id.casefold() == wanted), None)


def _find(state: SessionState, assumption_id: str) -> Assumption:
    found = assumption_with_id(state, assumption_id)
    if found is None:
        raise ToolError(f"No assumption {assumption_id}; the register has {', '.join(a.id for a in state.assumptions) or 'none'}.")
    return found


def _check_dependencies(state: SessionState, assumption_id: str | None, depends_on: list[str]) -> list[str]:
    known = {a.id for a in state.assumptions}
    unknown = [d for d in depends_on if d not in known]
    if unknown:
        raise ToolError(f"depends_on names unknown assumptions: {', '.join(unknown)}")
    if assumption_id:
        if assumption_id in depends_on:
            raise ToolError(f"{assumption_id} cannot depend on itself.")
        downstream = set(_all_dependents(state, assumption_id))
        loops = [d for d in depends_on if d in downstream]
        if loops:
            raise ToolError(f"Refused: {assumption_id} depending on {', '.join(loops)} would make a cycle "
                            f"({', '.join(loops)} already rests on {assumption_id}).")
    return list(dict.fromkeys(depends_on))


def record_change(a: Assumption, turn: int, field: str, old, new, reason: str) -> None:
    a.history.append(AssumptionChange(turn=turn, field=field, old=None if old is None else str(old),
                                      new=None if new is None else str(new), reason=reason))


def _change(a: Assumption, ctx: ToolContext, field: str, old, new, reason: str) -> None:
    record_change(a, ctx.turn_number, field, old, new, reason)


class RegisterAssumption(BaseModel):
    """Register an assumption the plan depends on: a hedged, unverified or second-hand claim."""

    claim: str = Field(min_length=5, max_length=400, description="The assumption, stated as a testable claim.")
    type: AssumptionType
    impact: Impact = Field(description="How much the plan suffers if this is wrong.")
    confidence: Confidence = "guessed"
    basis: str = Field("", max_length=400, description="Why the PM believes it (source, data, hearsay).")
    depends_on: list[str] = Field(default_factory=list, description="Ids of assumptions this one rests on, e.g. A2.")
    recommended_action: str = Field("", max_length=300, description="The cheapest way to check it.")
    implied_stakeholders: list[str] = Field(default_factory=list, description="People whose behaviour it assumes.")


@TOOLS.add
def register_assumption(args: RegisterAssumption, ctx: ToolContext) -> str:
    state = ctx.state
    depends_on = _check_dependencies(state, None, args.depends_on)
    duplicate = next((a for a in state.assumptions if a.claim.strip().lower() == args.claim.strip().lower()), None)
    if duplicate:
        return f"Already registered as {duplicate.id}; nothing added."
    assumption = Assumption(
        id=state.next_assumption_id(), claim=args.claim.strip(), type=args.type, impact=args.impact,
        confidence=args.confidence, basis=args.basis.strip(), depends_on=depends_on,
        recommended_action=args.recommended_action.strip(), implied_stakeholders=args.implied_stakeholders,
        surfaced_by=ctx.active_probe or "", surfaced_turn=ctx.turn_number,
    )
    _change(assumption, ctx, "created", None, assumption.claim, args.basis.strip())
    state.assumptions.append(assumption)
    return f"Registered {assumption.id}."


class UpdateAssumptionStatus(BaseModel):
    """Change an assumption's status. Invalidating puts everything resting on it at risk; confirming upgrades
    guessed dependents to informed."""

    id: str = Field(description="e.g. A3")
    status: AssumptionStatus
    reason: str = Field(min_length=3, max_length=400, description="What the PM learned.")


@TOOLS.add
def update_assumption_status(args: UpdateAssumptionStatus, ctx: ToolContext) -> str:
    state = ctx.state
    a = _find(state, args.id)
    if a.status == args.status:
        return f"{a.id} is already {a.status}."
    _change(a, ctx, "status", a.status, args.status, args.reason)
    a.status = args.status
    touched = []
    if args.status == "invalidated":
        for d in _all_dependents(state, a.id):
            dep = _find(state, d)
            if dep.status == "active":
                _change(dep, ctx, "status", dep.status, "at_risk", f"rests on {a.id}, invalidated: {args.reason}")
                dep.status = "at_risk"
                touched.append(dep.id)
        return f"{a.id} invalidated." + (f" Now at risk: {', '.join(touched)}." if touched else "")
    if args.status == "confirmed":
        if a.confidence != "validated":
            _change(a, ctx, "confidence", a.confidence, "validated", args.reason)
            a.confidence = "validated"
        for d in _all_dependents(state, a.id):
            dep = _find(state, d)
            if dep.confidence == "guessed":
                _change(dep, ctx, "confidence", "guessed", "informed", f"rests on {a.id}, confirmed: {args.reason}")
                dep.confidence = "informed"
                touched.append(dep.id)
        return f"{a.id} confirmed." + (f" Upgraded to informed: {', '.join(touched)}." if touched else "")
    return f"{a.id} is now {args.status}."


class UpdateAssumptionConfidence(BaseModel):
    """Change how well-founded an assumption is (guessed, informed, validated) when new evidence arrives."""

    id: str
    confidence: Confidence
    reason: str = Field(min_length=3, max_length=400)


@TOOLS.add
def update_assumption_confidence(args: UpdateAssumptionConfidence, ctx: ToolContext) -> str:
    a = _find(ctx.state, args.id)
    _change(a, ctx, "confidence", a.confidence, args.confidence, args.reason)
    a.confidence = args.confidence
    return f"{a.id} confidence is now {args.confidence}."


class EditAssumption(BaseModel):
    """Correct an assumption's wording, type, impact, basis, dependencies or suggested check. Omit what stays."""

    id: str
    reason: str = Field(min_length=3, max_length=400)
    claim: str | None = Field(None, min_length=5, max_length=400)
    type: AssumptionType | None = None
    impact: Impact | None = None
    basis: str | None = Field(None, max_length=400)
    depends_on: list[str] | None = None
    recommended_action: str | None = Field(None, max_length=300)
    implied_stakeholders: list[str] | None = None


@TOOLS.add
def edit_assumption(args: EditAssumption, ctx: ToolContext) -> str:
    a = _find(ctx.state, args.id)
    changes = args.model_dump(exclude={"id", "reason"}, exclude_none=True)
    if "depends_on" in changes:
        changes["depends_on"] = _check_dependencies(ctx.state, a.id, changes["depends_on"])
    if not changes:
        raise ToolError("Nothing to change: give at least one field besides id and reason.")
    for field, value in changes.items():
        _change(a, ctx, field, getattr(a, field), value, args.reason)
        setattr(a, field, value)
    return f"{a.id} updated ({', '.join(changes)})."


class RetireAssumption(BaseModel):
    """Take an assumption out of the working register (a duplicate, or no longer relevant); its history stays."""

    id: str
    reason: str = Field(min_length=3, max_length=400)


@TOOLS.add
def retire_assumption(args: RetireAssumption, ctx: ToolContext) -> str:
    a = _find(ctx.state, args.id)
    if a.retired:
        return f"{a.id} is already retired."
    _change(a, ctx, "retired", False, True, args.reason)
    a.retired = True
    still = dependents(ctx.state, a.id)
    return f"{a.id} retired." + (f" Still resting on it: {', '.join(still)}; edit their depends_on." if still else "")


# ---------------------------------------------------------------- what the PM is told


@TOOLS.acknowledges(register_assumption)
def _register(args: RegisterAssumption, before: SessionState, after: SessionState, _org: str) -> str | None:
    claim = " ".join(args.claim.split()).casefold()
    added = next((a for a in after.assumptions if " ".join(a.claim.split()).casefold() == claim), None)
    if added is None or assumption_with_id(before, added.id) is not None:
        return None  # already registered before this turn: nothing added
    return f"Added {added.id} — {quoted(added.claim)}"


@TOOLS.acknowledges(update_assumption_status)
def _status(args: UpdateAssumptionStatus, before: SessionState, after: SessionState, _org: str) -> str | None:
    now, then = assumption_with_id(after, args.id), assumption_with_id(before, args.id)
    if now is None or (then is not None and then.status == now.status):
        return None
    line = f"{now.id} marked {now.status.replace('_', ' ')}"
    if now.status == "invalidated":
        was_active = {a.id for a in before.assumptions if a.status == "active"}
        at_risk = [d for d in _all_dependents(after, now.id)
                   if (dep := assumption_with_id(after, d)) is not None and dep.status == "at_risk"
                   and d in was_active]
        if at_risk:
            line += f"; {and_list(at_risk)} now at risk"
    elif now.status == "confirmed":
        was_guessed = {a.id for a in before.assumptions if a.confidence == "guessed"}
        upgraded = [d for d in _all_dependents(after, now.id)
                    if (dep := assumption_with_id(after, d)) is not None and dep.confidence == "informed"
                    and d in was_guessed]
        if upgraded:
            line += f"; {and_list(upgraded)} upgraded to informed"
    return line


@TOOLS.acknowledges(update_assumption_confidence)
def _confidence(args: UpdateAssumptionConfidence, before: SessionState, after: SessionState, _org: str) -> str | None:
    now, then = assumption_with_id(after, args.id), assumption_with_id(before, args.id)
    if now is None or (then is not None and then.confidence == now.confidence):
        return None
    return f"{now.id} confidence now {now.confidence}"


@TOOLS.acknowledges(edit_assumption)
def _edit(args: EditAssumption, before: SessionState, after: SessionState, _org: str) -> str | None:
    now, then = assumption_with_id(after, args.id), assumption_with_id(before, args.id)
    if now is None:
        return None
    fields = [f for f in args.model_dump(exclude={"id", "reason"}, exclude_none=True)
              if then is None or getattr(then, f) != getattr(now, f)]
    if not fields:
        return None
    if fields == ["claim"]:
        return f"{now.id} now reads — {quoted(now.claim)}"
    return f"{now.id} edited ({', '.join(f.replace('_', ' ') for f in fields)})"


@TOOLS.acknowledges(retire_assumption)
def _retire(args: RetireAssumption, before: SessionState, after: SessionState, _org: str) -> str | None:
    now, then = assumption_with_id(after, args.id), assumption_with_id(before, args.id)
    if now is None or not now.retired or (then is not None and then.retired):
        return None
    still = dependents(after, now.id)
    return f"{now.id} retired" + (f"; {and_list(still)} still rest on it" if still else "")
