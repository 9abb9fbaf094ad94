"""forge bench understand: what understanding a PM's message costs, on the state it really meets.

Each session of a sessions folder is played through the real turn loop (offline providers); before
each turn the message is understood once more, timed, against the state as it stands then.
"""

from __future__ import annotations

import time
from pathlib import Path

from forge_bench.bench.figures import percentile, scratch_projects
from forge_bench.session_eval import find_sessions, play
from pmforge.interviewer.rules import read_message
from pmforge.project.project import Project
from pmforge.project.services import Services


def bench_understand(folder: Path) -> dict:
    understanding_ms: list[float] = []
    turn_s: list[float] = []

    def timed_understanding(project: Project, message: str) -> None:
        state, catalogue = project.state(), project.catalogue()
        started = time.perf_counter()
        read_message(message, state, catalogue)
        understanding_ms.append((time.perf_counter() - started) * 1000)

    with scratch_projects("forge-bench-understand-"):
        services = Services.from_settings()
        for session in find_sessions(folder):
            _, times, _ = play(Project.create(services, session.name), session, before_turn=timed_understanding)
            turn_s += times
    turn_ms = [s * 1000 for s in turn_s]
    return {
        "messages": len(understanding_ms),
        "understanding_ms": {"p50": round(percentile(understanding_ms, 50), 2),
                             "p95": round(percentile(understanding_ms, 95), 2),
                             "max": round(max(understanding_ms), 2)},
        "turn_ms": {"p50": round(percentile(turn_ms, 50), 1), "p95": round(percentile(turn_ms, 95), 1)},
    }
