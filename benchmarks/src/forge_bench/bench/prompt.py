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
import time
from pathlib import Path

from forge_bench.bench import session
from forge_bench.bench.figures import scratch_folder
from pmforge.core.models import Manifest, SessionState
from pmforge.core.tokens import count_tokens
from pmforge.knowledge import builtin_catalogue
from pmforge.prompt import render
from pmforge.prompt.wording import CORE_INSTRUCTIONS, FORGE_SYSTEM, MODE_CORE
from pmforge.tools import tool_specs

MILESTONES = (1, 10, 50, 100, 300, 500)
_UNBOUNDED = 10**7


def baseline_phase_b(state: SessionState, manifest: Manifest, message: str) -> int:
    """Tokens of a 'send everything' Phase B prompt: every probe and pattern, the whole state, every turn."""
    mode = state.active_mode
    catalogue = builtin_catalogue()  # the bench's synthetic projects add no patterns
    knowledge = "\n\n".join(
        [FORGE_SYSTEM, CORE_INSTRUCTIONS, MODE_CORE[mode]]
        + [p.render() for p in catalogue.probes_for(mode)]
        + [p.render() for p in catalogue.patterns_for(mode)]
    )
    context = "\n\n".join([
        render.context_block(manifest, _UNBOUNDED),
        render.assumption_register(state.assumptions, _UNBOUNDED),
        render.skeleton(state, _UNBOUNDED),
        render.routing_context(state, _UNBOUNDED, catalogue),
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


def _rounds_summary(rounds: list[list[int]], budget: int) -> tuple[dict, dict]:
    """Per tool-loop round: size figures, and how many of the turns that reached it stayed in budget."""
    figures, within = {}, {}
    for r in range(1, max(map(len, rounds), default=0) + 1):
        values = [turn[r - 1] for turn in rounds if len(turn) >= r]
        figures[str(r)] = {"turns": len(values), "max": max(values), "median": statistics.median(values)}
        within[str(r)] = {"within": sum(v <= budget for v in values), "of": len(values)}
    return figures, within


def bench_prompt(turns: int, chart: Path | None = None, workload: str = "default") -> dict:
    """`workload="heavy"` pushes every section at once: ~160-word messages, ~1,100-word replies with a
    tool round each turn, documents of ~450-word paragraphs (near-2,000-token parents), a 600-word org context."""
    from pmforge.core import settings as config
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import start_turn

    heavy = workload == "heavy"
    with scratch_folder("forge-bench-") as scratch:
        settings = config.get_settings().model_copy(update={"projects_dir": scratch})
        services = Services.from_settings(settings.model_copy(update={"llm": "offline"}))
        verbose = None
        if heavy:
            from forge_bench.bench.verbose_llm import VerboseLLM

            verbose = services.llm = VerboseLLM(services.llm)
        project = Project.create(services, "prompt bench")
        for name, data in (session.heavy_documents() if heavy else session.documents()).items():
            ingest_file(project, name, data)
        if heavy:
            with project.operation("org context"):
                manifest = project.manifest()
                manifest.org_context = session.org_context()
                project.ws.save_manifest(manifest)

        phase_a, phase_b, baseline, rounds, prefix = [], [], [], [], 0
        reported_matches = 0
        started = time.perf_counter()
        for message in (session.heavy_messages(turns) if heavy else session.messages(turns)):
            pending = start_turn(project, message)
            baseline.append(baseline_phase_b(pending.state, pending.manifest, message))
            record = pending.finish()
            reported = record.tokens.phase_b_rounds or [record.tokens.phase_b]
            # The heavy run counts what each round really sent (seen by the LLM), and checks the report against it.
            sent = verbose.take_rounds() if verbose else reported
            reported_matches += record.tokens.phase_b == max(sent)
            rounds.append(sent)
            phase_a.append(record.tokens.phase_a)
            phase_b.append(max(sent))
            prefix = record.tokens.sections.get("static_prefix", prefix)
        elapsed = time.perf_counter() - started
        state = project.state()
        round_figures, round_within = _rounds_summary(rounds, settings.phase_b_budget)

        figures = {
            "turns": turns,
            "workload": workload,
            "phase_a": _summary(phase_a, turns),
            "phase_b": _summary(phase_b, turns),
            "baseline_phase_b": _summary(baseline, turns),
            "cumulative_ratio": round(sum(phase_b) / sum(baseline), 4),
            "cacheable_prefix_tokens": prefix,
            "budgets": {"phase_a": settings.phase_a_budget, "phase_b": settings.phase_b_budget},
            "within_budget": {
                "phase_a": sum(v <= settings.phase_a_budget for v in phase_a),
                "phase_b": sum(v <= settings.phase_b_budget for v in phase_b),  # every round of the turn
                "rounds": round_within,
            },
            "phase_b_rounds": round_figures,
            "reported_phase_b_is_max_round": reported_matches,  # turns whose token report equals the largest round
            "session": {
                "assumptions": len(state.assumptions),
                "filler_turns": sum(1 for t in state.turns if t.routing and not t.routing.requires_retrieval),
                "files": len(project.manifest().file_summaries),
                "seconds_per_turn": round(elapsed / turns, 3),
            },
            "series": {"phase_a": phase_a, "phase_b": phase_b, "baseline_phase_b": baseline, "phase_b_rounds": rounds},
        }
        if chart:
            from forge_bench.bench.chart import line_chart

            line_chart(
                chart,
                {"Phase B (Forge)": phase_b, "Phase A (Forge)": phase_a, "Send-everything baseline": baseline},
                title=f"Prompt tokens per turn, {turns}-turn synthetic session" + (" (heavy)" if heavy else ""),
                budget=settings.phase_b_budget,
            )
        return figures
