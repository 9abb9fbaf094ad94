"""`forge bench prompt`: prompt size per turn over a long synthetic session.

The session runs through the real turn loop (routing, assembly with retrieval,
tools, remembering) with the offline LLM, while the Phase A and Phase B requests
are built exactly as they are for Claude. Alongside, the "send everything"
baseline — full knowledge, full state and the full history, as a design that
re-sends the transcript would — is measured on the same transcript.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from ..knowledge import CORE_INSTRUCTIONS, MODE_CORE, patterns_for, probes_for
from ..models import ProjectState, SessionState
from ..tokens import count_tokens
from ..tools import tool_specs
from ..turn import render
from ..turn.execute import FORGE_SYSTEM
from . import session

MILESTONES = (1, 10, 50, 100, 300, 500)
_UNBOUNDED = 10**7


def baseline_phase_b(state: SessionState, project_state: ProjectState, message: str) -> int:
    """Tokens of a 'send everything' Phase B prompt: every probe and pattern, the whole state, every turn."""
    mode = state.active_mode
    knowledge = "\n\n".join(
        [FORGE_SYSTEM, CORE_INSTRUCTIONS, MODE_CORE[mode]]
        + [p.render() for p in probes_for(mode)]
        + [p.render() for p in patterns_for(mode)]
    )
    context = "\n\n".join([
        render.context_block(project_state, _UNBOUNDED),
        render.assumption_register(state.assumptions, _UNBOUNDED),
        render.skeleton(state, _UNBOUNDED),
        render.routing_context(state, _UNBOUNDED),
    ])
    history = sum(count_tokens(t.user) + count_tokens(t.assistant) + 8 for t in state.turns)
    tools = count_tokens(json.dumps([t.model_dump() for t in tool_specs()]))
    return count_tokens(knowledge) + count_tokens(context) + tools + history + count_tokens(message)


def _summary(values: list[int], turns: int) -> dict:
    return {
        "max": max(values),
        "median": statistics.median(values),
        "at": {str(m): values[m - 1] for m in MILESTONES if m <= turns},
    }


def bench_prompt(turns: int, chart: Path | None = None) -> dict:
    import config

    from ..ingest.pipeline import ingest_file
    from ..project import Project, Services
    from ..turn.orchestrator import start_turn

    settings = config.get_settings().model_copy(update={"projects_dir": Path(tempfile.mkdtemp(prefix="forge-bench-"))})
    services = Services.from_settings(settings.model_copy(update={"llm": "offline"}))
    project = Project.create(services, "prompt bench")
    for name, data in session.documents().items():
        ingest_file(project, name, data)

    phase_a, phase_b, baseline, prefix = [], [], [], 0
    started = time.perf_counter()
    for message in session.messages(turns):
        pending = start_turn(project, message)
        baseline.append(baseline_phase_b(pending.state, pending.project_state, message))
        record = pending.finish()
        phase_a.append(record.tokens.phase_a)
        phase_b.append(record.tokens.phase_b)
        prefix = record.tokens.sections.get("static_prefix", prefix)
    elapsed = time.perf_counter() - started
    state = project.state()

    figures = {
        "turns": turns,
        "phase_a": _summary(phase_a, turns),
        "phase_b": _summary(phase_b, turns),
        "baseline_phase_b": _summary(baseline, turns),
        "cumulative_ratio": round(sum(phase_b) / sum(baseline), 4),
        "cacheable_prefix_tokens": prefix,
        "budgets": {"phase_a": settings.phase_a_budget, "phase_b": settings.phase_b_budget},
        "within_budget": {
            "phase_a": sum(v <= settings.phase_a_budget for v in phase_a),
            "phase_b": sum(v <= settings.phase_b_budget for v in phase_b),
        },
        "session": {
            "assumptions": len(state.assumptions),
            "filler_turns": sum(1 for t in state.turns if t.routing and not t.routing.requires_retrieval),
            "files": len(project.project_state().file_summaries),
            "seconds_per_turn": round(elapsed / turns, 3),
        },
        "series": {"phase_a": phase_a, "phase_b": phase_b, "baseline_phase_b": baseline},
    }
    if chart:
        from .chart import line_chart

        line_chart(
            chart,
            {"Phase B (Forge)": phase_b, "Phase A (Forge)": phase_a, "Send-everything baseline": baseline},
            title=f"Prompt tokens per turn, {turns}-turn synthetic session",
            budget=settings.phase_b_budget,
        )
    return figures
