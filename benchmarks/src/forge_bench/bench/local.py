"""`forge bench local`: a short session against the OpenAI-compatible server Forge is configured for
(llama.cpp's `llama-server`, Ollama), with an upload, through the real turn loop.

Per turn it reports whether routing was forced (the model answered the route call) or fell back to the rule
router, the Phase B prompt and how much of it the server had to evaluate (the rest came from its prompt
cache: `cached_tokens` in the server's usage), whether every "Recorded:" line was made by a tool call that
succeeded, and the time the turn took. Needs FORGE_LLM=openai and a running server; nothing is kept.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from forge_bench.bench import session
from forge_bench.bench.figures import scratch_projects

PLAN = (b"# Pilot plan\n\nWe pilot markdown labels in 20 Midwest stores for eight weeks. The shrink target is "
        b"4.5% of fresh sales.\n\n## Owners\n\nPatrick leads the Midwest region and owns shrink. Store managers "
        b"print the reduced labels after four.\n")


def bench_local(turns: int = 10) -> dict:
    from pmforge.core import settings as config
    from pmforge.core.errors import ForgeError
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.llm.costs import meter_lines
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.acknowledge import HEADING
    from pmforge.turn.orchestrator import run_turn

    settings = config.get_settings()
    if settings.llm != "openai":
        raise ForgeError("forge bench local measures an OpenAI-compatible server: set FORGE_LLM=openai, "
                         "OPENAI_BASE_URL and FORGE_OPENAI_MODEL (see the README's 'Use a local model').")
    with scratch_projects("forge-bench-local-"):
        services = Services.from_settings(config.get_settings())
        project = Project.create(services, "local bench")
        started = time.perf_counter()
        upload = ingest_file(project, "plan.md", PLAN)
        upload_s = time.perf_counter() - started
        rows: list[dict[str, Any]] = []
        for number, message in enumerate(session.messages(turns), start=1):
            started = time.perf_counter()
            record = run_turn(project, message)
            seconds = time.perf_counter() - started
            saved = project.state().turns[-1]
            first_reply = next((c.usage for c in saved.calls if c.purpose == "reply"), None)
            prompt = first_reply.input_tokens + first_reply.cache_read_input_tokens if first_reply else 0
            made = any(c.ok for c in record.tool_calls)
            rows.append({
                "turn": number,
                "routing": "fallback" if record.routing.reasoning.startswith("Fallback") else "forced",
                "phase_b_prompt": prompt,
                "phase_b_evaluated": first_reply.input_tokens if first_reply else 0,
                "tool_calls": len(record.tool_calls),
                "recorded_line_without_a_call": HEADING in record.reply and not made,
                "seconds": round(seconds, 1),
            })
        state = project.state()
        meter = meter_lines(state.turns, project.settings, project.manifest().file_summaries)
    later = [r["phase_b_evaluated"] / r["phase_b_prompt"] for r in rows[1:] if r["phase_b_prompt"]]
    return {
        "server": services.describe()["llm"],
        "upload": {"ok": upload.ok, "seconds": round(upload_s, 1)},
        "turns": len(rows),
        "routing_forced": sum(r["routing"] == "forced" for r in rows),
        "turns_with_tool_calls": sum(r["tool_calls"] > 0 for r in rows),
        "recorded_lines_without_a_call": sum(r["recorded_line_without_a_call"] for r in rows),
        "phase_b_evaluated_share_from_turn_2": {
            "median": round(statistics.median(later), 3) if later else None,
            "max": round(max(later), 3) if later else None,
        },
        "meter": meter,
        "seconds_per_turn": round(statistics.median(r["seconds"] for r in rows), 1) if rows else None,
        "per_turn": rows,
    }
