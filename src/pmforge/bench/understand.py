"""forge bench understand: what understanding a PM's message costs, on the state it really meets.

Each session of a sessions folder is played through the real turn loop (offline providers); before
each turn the message is understood once more, timed, against the state as it stands then.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..ingest.pipeline import ingest_file
from ..project import Project, Services
from ..session_eval import find_sessions
from ..turn.orchestrator import run_turn
from ..turn.render import own_words
from ..turn.route import is_filler
from ..understand import understand
from .figures import percentile, scratch_projects


def bench_understand(folder: Path) -> dict:
    understanding_ms: list[float] = []
    turn_ms: list[float] = []
    with scratch_projects("forge-bench-understand-"):
        services = Services.from_settings()
        for session in find_sessions(folder):
            project = Project.create(services, session.name)
            for row in session.rows:
                if "upload" in row:
                    ingest_file(project, row["upload"], (session.folder / row["upload"]).read_bytes())
                    continue
                message = row["user"]
                state = project.state()
                started = time.perf_counter()
                understand(own_words(message), state, filler=is_filler(message))
                understanding_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                run_turn(project, message)
                turn_ms.append((time.perf_counter() - started) * 1000)
    return {
        "messages": len(understanding_ms),
        "understanding_ms": {"p50": round(percentile(understanding_ms, 50), 2),
                             "p95": round(percentile(understanding_ms, 95), 2),
                             "max": round(max(understanding_ms), 2)},
        "turn_ms": {"p50": round(percentile(turn_ms, 50), 1), "p95": round(percentile(turn_ms, 95), 1)},
    }
