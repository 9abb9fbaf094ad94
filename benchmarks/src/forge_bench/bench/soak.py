"""`forge bench soak`: a long offline session with file churn in one project.

1,000 turns through the real orchestrator and 200 random uploads, replacements and deletions through
the real pipeline, interleaved. Reports every error (there must be none), whether `forge doctor` finds
the project consistent at the end, peak memory, and turn latency at the start and the end of the run
(a session that slows as it grows is the failure this looks for).
"""

from __future__ import annotations

import random
import resource
import statistics
import time

from forge_bench.bench import session
from forge_bench.bench.figures import percentile, scratch_projects

WINDOW = 50  # turns averaged at each end of the run


def _document(rng: random.Random, version: int) -> bytes:
    sections = "\n\n".join(
        f"## Finding {j}\n" + " ".join(session.statement(rng, version * 10 + j) for _ in range(rng.randint(1, 4)))
        for j in range(rng.randint(1, 8))
    )
    return f"# Field note v{version}\n\n{sections}\n".encode()


def _percentiles(values: list[float]) -> dict:
    return {"p50_ms": round(1000 * statistics.median(values), 1), "p95_ms": round(1000 * percentile(values, 95), 1)}


def bench_soak(turns: int = 1000, operations: int = 200, seed: int = 3) -> dict:
    from pmforge.core import settings as config
    from pmforge.ingest.pipeline import delete_file, ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import run_turn
    from pmforge.upkeep import doctor

    rng = random.Random(seed)
    with scratch_projects("forge-soak-"):
        services = Services.from_settings(config.get_settings())
        project = Project.create(services, "soak")
        # Operations land at random points of the session, never all at once.
        op_after = sorted(rng.randrange(turns) for _ in range(operations))
        errors: list[str] = []
        counts = {"upload": 0, "replace": 0, "delete": 0}
        latencies: list[float] = []
        max_phase_b = 0
        messages = session.messages(turns)
        t_start = time.perf_counter()
        next_op = 0
        files_present: list[int] = []  # files in the project at each turn: replies quote them, so turns cost more
        present = 0
        for n, message in enumerate(messages):
            operated = False
            while next_op < len(op_after) and op_after[next_op] == n:
                operated = True
                next_op += 1
                files = [f.filename for f in project.manifest().file_summaries]
                kind = rng.choice(["upload", "upload", "replace", "delete"]) if files else "upload"
                try:
                    if kind == "delete" and files:
                        delete_file(project, rng.choice(files))
                    else:
                        name = rng.choice(files) if kind == "replace" else f"note-{counts['upload']:03d}.md"
                        result = ingest_file(project, name, _document(rng, sum(counts.values())))
                        if not result.ok:
                            errors.append(f"{kind} {name}: {result.message}")
                    counts[kind] += 1
                except Exception as exc:  # a soak test reports every failure instead of stopping at one
                    errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            if operated:
                present = len(project.manifest().file_summaries)
            files_present.append(present)
            t0 = time.perf_counter()
            try:
                record = run_turn(project, message)
                max_phase_b = max(max_phase_b, record.tokens.phase_b)
            except Exception as exc:
                errors.append(f"turn {n + 1}: {type(exc).__name__}: {exc}")
            latencies.append(time.perf_counter() - t0)
        total_s = time.perf_counter() - t_start
        report = doctor.examine(project)
        manifest = project.manifest()
        return {
            "turns": turns,
            "operations": counts,
            "errors": len(errors),
            "first_errors": errors[:5],
            "doctor_consistent": report.consistent,
            "doctor_problems": [f.problem for f in report.findings],
            "final_files": len(manifest.file_summaries),
            "final_passages": report.totals["passages"],
            "peak_memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "turn_latency_start": _percentiles(latencies[:WINDOW]),
            "turn_latency_end": _percentiles(latencies[-WINDOW:]),
            # The two windows compared above differ in files as well as in session length.
            "files_start": round(statistics.fmean(files_present[:WINDOW]), 1) if files_present else 0,
            "files_end": round(statistics.fmean(files_present[-WINDOW:]), 1) if files_present else 0,
            "max_phase_b_tokens": max_phase_b,
            "total_s": round(total_s, 1),
        }
