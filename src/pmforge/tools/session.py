"""Session tools: probes and patterns fired, the running summary, org context, mode completion, artifacts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pmforge.core.models import Mode, SessionState
from pmforge.outputs.artifacts import prepare
from pmforge.outputs.briefs import problem_brief_markdown, solution_evaluation_markdown
from pmforge.tools import guard
from pmforge.tools.base import ToolContext, ToolError, Toolset, quoted
from pmforge.understand.extractive import sentences

TOOLS = Toolset()  # every @TOOLS.add below


class RecordProbe(BaseModel):
    """Record that a diagnostic probe is satisfied, so it is not asked again."""

    probe: str = Field(description="The probe's id or name from the catalogue.")
    evidence: str = Field("", max_length=400, description="What the PM said that satisfies it.")


@TOOLS.bookkeeping
def record_probe(args: RecordProbe, ctx: ToolContext) -> str:
    probe = ctx.catalogue.find_probe(args.probe)
    if probe is None:
        raise ToolError(f"'{args.probe}' is not a probe in the catalogue.")
    if probe.id not in ctx.state.routing.probes_fired:
        ctx.state.routing.probes_fired.append(probe.id)
    return f"Probe '{probe.name}' recorded as satisfied."


class RecordPattern(BaseModel):
    """Record that a domain pattern was surfaced to the PM."""

    pattern: str = Field(description="The pattern's id or name from the catalogue.")
    evidence: str = Field("", max_length=400)


@TOOLS.bookkeeping
def record_pattern(args: RecordPattern, ctx: ToolContext) -> str:
    pattern = ctx.catalogue.find_pattern(args.pattern)
    if pattern is None:
        raise ToolError(f"'{args.pattern}' is not a pattern in the catalogue.")
    if pattern.id not in ctx.state.routing.patterns_fired:
        ctx.state.routing.patterns_fired.append(pattern.id)
    return f"Pattern '{pattern.name}' recorded."


class UpdateConversationSummary(BaseModel):
    """Replace the running summary of the session (what is established, what is open), 3-6 sentences."""

    summary: str = Field(min_length=20, max_length=1500)


@TOOLS.bookkeeping
def update_conversation_summary(args: UpdateConversationSummary, ctx: ToolContext) -> str:
    ctx.state.routing.conversation_summary = args.summary.strip()
    return "Session summary updated."


class UpdateOrgContext(BaseModel):
    """Replace the organisation context (team, stakeholders, constraints) with facts the PM stated; send it whole."""

    org_context: str = Field(min_length=3, max_length=3000)


@TOOLS.add
def update_org_context(args: UpdateOrgContext, ctx: ToolContext) -> str:
    new = args.org_context.strip()
    refusal = guard.org_context_refusal(ctx.manifest.org_context, new, ctx.pm_words)
    if refusal:
        raise ToolError(refusal)
    ctx.manifest.org_context = new
    return "Organisation context replaced."


class CompleteMode(BaseModel):
    """Mark a mode complete once its probes are satisfied or the PM asks to wrap it up; lists brief fields missing."""

    mode: Mode


@TOOLS.add
def complete_mode(args: CompleteMode, ctx: ToolContext) -> str:
    d = ctx.decision
    if not (d is not None and d.action == "complete_mode" and d.mode == args.mode):
        done = guard.probes_done(ctx.probes_at_start, ctx.probe_answered, ctx.pm_words)
        refusal = guard.completion_refusal(ctx.catalogue, args.mode, done, ctx.pm_words, ctx.state.active_mode)
        if refusal:
            raise ToolError(refusal)

    render = problem_brief_markdown if args.mode == "mode_1" else solution_evaluation_markdown
    _, missing = render(ctx.state, ctx.manifest, ctx.catalogue)
    if args.mode not in ctx.state.routing.completed_modes:
        ctx.state.routing.completed_modes.append(args.mode)
    note = f" Still to be confirmed: {', '.join(missing)}." if missing else ""
    return f"{args.mode} marked complete.{note}"


class GenerateArtifact(BaseModel):
    """Write a brief (Markdown and Word) or the assumption register (JSON and CSV) under artifacts/."""

    kind: Literal["problem_brief", "solution_evaluation", "assumption_register"]


@TOOLS.add
def generate_artifact(args: GenerateArtifact, ctx: ToolContext) -> str:
    if ctx.workspace is None:
        raise ToolError("Artifacts can only be written inside a project.")
    # Rendered now, from the state as it stands at this call; written only when the turn commits.
    taken = {a.stem for a in ctx.pending_artifacts}
    artifact = prepare(ctx.workspace, ctx.state, ctx.manifest, args.kind, ctx.catalogue, taken=taken)
    ctx.pending_artifacts.append(artifact)
    missing = f" Marked 'to be confirmed': {', '.join(artifact.missing)} — ask the PM for them." if artifact.missing else ""
    return f"Saving {', '.join(artifact.names)} with this turn.{missing}"


# ---------------------------------------------------------------- what the PM is told

_MODE_WORDS = {"mode_1": "Mode 1 (Discover & Frame)", "mode_2": "Mode 2 (Evaluate Solution)"}
_ARTIFACT_WORDS = {"problem_brief": "Problem brief saved (Markdown and Word)",
                   "solution_evaluation": "Solution evaluation saved (Markdown and Word)",
                   "assumption_register": "Assumption register saved (JSON and CSV)"}


@TOOLS.acknowledges(update_org_context)
def _org_context(args, before, after, org_before: str) -> str | None:
    new = " ".join(args.org_context.split())
    if new == " ".join(org_before.split()):
        return None
    known = set(sentences(org_before))
    fresh = [s for s in sentences(new) if s not in known]
    return "Org context updated" + (f": {quoted(' '.join(fresh), 16)}" if fresh else "")


@TOOLS.acknowledges(complete_mode)
def _complete(args: CompleteMode, before: SessionState, after: SessionState, _org: str) -> str | None:
    if args.mode in before.routing.completed_modes or args.mode not in after.routing.completed_modes:
        return None
    return f"{_MODE_WORDS[args.mode]} marked complete"


@TOOLS.acknowledges(generate_artifact)
def _artifact(args: GenerateArtifact, before: SessionState, after: SessionState, _org: str) -> str | None:
    return _ARTIFACT_WORDS[args.kind]
